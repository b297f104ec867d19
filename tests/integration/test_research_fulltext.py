"""A research job reads the full text of the articles it is about to read (within its budget),
and a quote from an article's Results is checked against the full text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from medlit.checks.claim_check import check_claim
from medlit.config import ResearchSettings, Settings
from medlit.research.researcher import DeepResearcher
from medlit.research.tracking import Budget
from medlit.sources.fulltext import FullTextReader
from medlit.sources.pubmed import PubMedSource
from medlit.types import Article, FullText
from medlit.usage import Usage
from tests.conftest import shared_data_path
from tests.fakes.eutils_server import FakeEutils

pytestmark = pytest.mark.shared_data

EPIC = "21045829"
QUOTE = (
    "no significant association was observed among pre- or peri-menopausal women "
    "(HR, 1.19; 95% CI: 0.96–1.48)"
)
CLAIM = (
    "Oral contraceptive use was not significantly associated with colorectal cancer risk "
    "among pre- or peri-menopausal women (HR 1.19; 95% CI 0.96–1.48)."
)


@pytest.fixture
def fake(make_fake_eutils: Callable[..., FakeEutils]) -> FakeEutils:
    fake = make_fake_eutils(rate_limit=None)
    for path in sorted(shared_data_path("pmc_oa").glob("*.nxml")):
        fake.add_jats(path.read_bytes())
    return fake


async def _articles(settings: Settings, fake: FakeEutils) -> list[Article]:
    settings.pubmed.base_url = fake.base_url
    async with PubMedSource(settings) as pubmed:
        return await pubmed.efetch(sorted(fake.pmc_of))


async def test_the_job_reads_full_text_within_its_budget(
    settings: Settings, fake: FakeEutils, tmp_path: Path
) -> None:
    articles = await _articles(settings, fake)
    async with FullTextReader(settings) as reader:

        async def read(found: Sequence[Article], budget: int) -> dict[str, FullText]:
            return (await reader.read(found, budget)).texts

        researcher = DeepResearcher(
            ResearchSettings(),
            llm=None,  # type: ignore[arg-type]
            search=None,  # type: ignore[arg-type]
            cache=None,
            embedder=None,
            visited=None,
            budget=Budget(limits=ResearchSettings().quick, usage=Usage()),
            full_text=read,
            full_text_budget=3,
        )
        first = await researcher._with_full_text(articles[:2], "Which cancers?")
        assert all(a.full_text is not None for a in first)
        rest = await researcher._with_full_text(articles[2:], "Which cancers?")
        assert [a.full_text is not None for a in rest].count(True) == 1  # 3 per job
        assert await researcher._with_full_text(articles[5:], "Which cancers?") == articles[5:]
    assert len([r for r in fake.requests("efetch") if r.params.get("db") == "pmc"]) == 3


async def test_a_results_quote_is_the_articles_once_its_full_text_is_read(
    settings: Settings, fake: FakeEutils
) -> None:
    (epic,) = [a for a in await _articles(settings, fake) if a.pmid == EPIC]
    question = "Is oral contraceptive use associated with colorectal cancer in women?"
    assert check_claim(CLAIM, QUOTE, epic.as_read(), question).reason == "quote_not_in_article"
    async with FullTextReader(settings) as reader:
        outcome = await reader.read([epic], 1)
    full = epic.model_copy(update={"full_text": outcome.texts[epic.key]})
    checked = check_claim(CLAIM, QUOTE, full.as_read(), question)
    assert checked.quote is not None and "1.19" in checked.quote


async def test_the_job_embeds_the_results_chunks_its_question_picks(
    settings: Settings, fake: FakeEutils, tmp_path: Path
) -> None:
    from medlit.cache import EvidenceCache
    from medlit.embeddings.memo import MemoEmbedder
    from medlit.embeddings.onnx import OnnxEmbedder
    from medlit.storage.sqlite import SqliteStore

    (epic,) = [a for a in await _articles(settings, fake) if a.pmid == EPIC]
    question = (
        "Is oral contraceptive use associated with colorectal cancer in pre-menopausal women?"
    )
    with SqliteStore(tmp_path / "r.sqlite3") as store:
        cache = EvidenceCache(store)
        async with FullTextReader(settings) as reader:

            async def read(found: Sequence[Article], budget: int) -> dict[str, FullText]:
                return (await reader.read(found, budget)).texts

            researcher = DeepResearcher(
                ResearchSettings(),
                llm=None,  # type: ignore[arg-type]
                search=None,  # type: ignore[arg-type]
                cache=cache,
                embedder=MemoEmbedder(OnnxEmbedder()),
                visited=None,
                budget=Budget(limits=ResearchSettings().quick, usage=Usage()),
                full_text=read,
                full_text_budget=1,
                full_text_chunks=2,
            )
            (done,) = await researcher._with_full_text([epic], question)
        assert done.full_text is not None
        body = [c for c in store.article_chunks(epic.key) if c.from_full_text]
    assert len(body) == 2 and {c.section for c in body} == {"Results"}
    assert any("HR, 1.19; 95% CI: 0.96–1.48" in c.text for c in body)
