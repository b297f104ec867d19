"""A research job reads the full text of the articles it is about to read (within its budget),
a quote from an article's Results is checked against the full text, and an evidence-table cell
may rest on it (saying so)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from medlit.checks import check_claim
from medlit.config import ResearchSettings, Settings
from medlit.research.evidence_table import (
    FULL_TEXT_HEADING,
    build_evidence_table,
    render_table,
    rows_from_csv,
    rows_to_csv,
)
from medlit.research.exports import export_job
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.report import job_to_dict, render_markdown
from medlit.research.researcher import DeepResearcher
from medlit.research.runtime import open_orchestrator
from medlit.research.tracking import Budget
from medlit.sources.fulltext import FullTextReader
from medlit.sources.pubmed import PubMedSource
from medlit.text import split_sentences
from medlit.types import Article, FullText
from medlit.usage import Usage
from medlit.words.frame import read_frame
from tests.conftest import shared_data_path
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import CorpusResponder

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


# -- the evidence table over the full text --------------------------------------------------

PRE_MENOPAUSAL = (
    "Is oral contraceptive use associated with colorectal cancer risk in pre-menopausal women?"
)
HR = "pre- or peri-menopausal women (HR, 1.19; 95% CI: 0.96–1.48)"


async def _epic_with_full_text(settings: Settings, fake: FakeEutils) -> tuple[Article, Article]:
    (epic,) = [a for a in await _articles(settings, fake) if a.pmid == EPIC]
    settings.fulltext.europepmc_fallback = False
    async with FullTextReader(settings) as reader:
        outcome = await reader.read([epic], 1)
    return epic, epic.model_copy(update={"full_text": outcome.texts[epic.key]})


async def test_an_evidence_cell_rests_on_a_results_passage_of_the_full_text(
    settings: Settings, fake: FakeEutils
) -> None:
    epic, full = await _epic_with_full_text(settings, fake)
    assert full.full_text is not None
    # The abstract alone: its effect (the overall HR), marked as the abstract's.
    (row,) = await build_evidence_table([epic], read_frame(PRE_MENOPAUSAL), None, kind="effect")
    assert row.effect is not None and not row.effect.from_full_text
    assert row.effect.section == "RESULTS" and "0.92" in row.effect.quote
    assert "1.19" not in row.effect.quote
    # With the full text read: the pre-menopausal HR its Results give, marked as full text.
    (row,) = await build_evidence_table([full], read_frame(PRE_MENOPAUSAL), None, kind="effect")
    assert row.n == 337802  # "among 337 802 women": the abstract's, with its thousands
    effect = row.effect
    assert effect is not None and HR in effect.quote, effect
    assert effect.from_full_text and effect.section == "Results"
    # Verbatim in the Results paragraph it came from, and in no part of the abstract.
    results = [s.text for s in full.full_text.sections if s.label == "Results" and s.kind == "text"]
    assert any(effect.quote in text for text in results)
    assert all(HR not in s.text for s in epic.abstract)
    # The JSON, the CSV (round trip) and the Markdown say where the quote is.
    data = row.model_dump(mode="json")
    assert data["effect"]["from_full_text"] is True and data["effect"]["section"] == "Results"
    assert data["population"]["from_full_text"] is False  # the abstract says how many
    csv_text = rows_to_csv([row])
    (again,) = rows_from_csv(csv_text)
    assert again.cells() == row.cells() and rows_to_csv([again]) == csv_text
    assert "effect_section" in csv_text.splitlines()[0]
    markdown = "\n".join(render_table([row]))
    assert "1.19; 95% CI: 0.96–1.48). (full text, Results) |" in markdown


async def test_a_model_cell_quoting_the_full_text_is_checked_against_it(
    settings: Settings, fake: FakeEutils
) -> None:
    _, full = await _epic_with_full_text(settings, fake)
    quote = next(
        s
        for section in full.full_text.sections  # type: ignore[union-attr]
        if section.label == "Results"
        for s in split_sentences(section.text)
        if HR in s
    )
    replies = {
        "effect": {"text": quote, "quote": quote},
        # Not in the article, abstract or body: dropped.
        "comparator": {"text": "never users", "quote": "compared with 1,000 never users"},
        # A table row as the body renders it: the table's, from the full text.
        "outcomes": {
            "text": "Oral contraceptive use among pre-/peri-menopausal women",
            "quote": "Oral contraceptive use (among pre-/peri-menopausal women)",
        },
    }
    seen: list[str] = []

    class Model:
        def is_configured(self, task: object) -> bool:
            return True

        async def complete_json(self, task: object, messages: Any, schema: Any) -> Any:
            seen.append(messages[-1]["content"])
            return schema.model_validate(replies)

    (row,) = await build_evidence_table([full], read_frame(PRE_MENOPAUSAL), Model(), kind="effect")  # type: ignore[arg-type]
    # The prompt showed the Results paragraphs and tables, after the abstract.
    assert FULL_TEXT_HEADING in seen[0] and HR in seen[0]
    assert "Results (table): Table 2" in seen[0]
    assert row.filled_by == "llm"
    assert row.effect is not None and row.effect.from_full_text
    assert row.effect.section == "Results" and HR in row.effect.quote
    assert row.comparator is None and row.dropped["comparator"] == "quote_not_in_article"
    assert row.outcomes is not None and row.outcomes.from_full_text
    # Without the full text, the same reply's body quotes are not the article's: dropped, the
    # row keeps what the abstract's structure gives.
    epic = full.model_copy(update={"full_text": None})
    (row,) = await build_evidence_table([epic], read_frame(PRE_MENOPAUSAL), Model(), kind="effect")  # type: ignore[arg-type]
    assert FULL_TEXT_HEADING not in seen[-1]
    assert row.dropped["effect"] == row.dropped["outcomes"] == "quote_not_in_article"
    assert row.outcomes is None and row.effect is not None and HR not in row.effect.quote
    assert not any(cell.from_full_text for cell in row.cells().values() if cell is not None)


@pytest.fixture
def corpus_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(CorpusResponder()) as server:
        yield server


async def _job(settings: Settings, fake: FakeEutils, llm: FakeLLMServer) -> ResearchJob:
    settings.pubmed.base_url = fake.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.europepmc.enabled = False
    settings.local.enabled = False
    settings.fulltext.europepmc_fallback = False
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    async with open_orchestrator(settings) as orchestrator:
        return await orchestrator.run(orchestrator.create_job(PRE_MENOPAUSAL, "quick"))


async def test_a_research_job_s_evidence_table_quotes_the_full_text_it_read(
    settings: Settings, fake: FakeEutils, corpus_llm: FakeLLMServer
) -> None:
    job = await _job(settings, fake, corpus_llm)
    assert job.status is JobStatus.COMPLETED, job.error
    # The job read EPIC's full text (efetch db=pmc) and kept it with the article.
    assert "2994229" in {
        r.params["id"] for r in fake.requests("efetch") if r.params.get("db") == "pmc"
    }
    assert job.articles[f"pmid:{EPIC}"].full_text is not None
    (row,) = [r for r in job.evidence_table if r.pmid == EPIC]
    # A risk question: the HR is the row's measure. The model was shown the Results and
    # pointed at them; the check held the quote to them.
    assert row.filled_by == "llm" and not row.dropped, row
    assert row.measure is not None and HR in row.measure.quote, row
    assert row.measure.from_full_text and row.measure.section == "Results"
    # --json / the API, the CSV export and the Markdown report all say it.
    data = job_to_dict(job)
    (cells,) = [r for r in data["evidence_table"] if r["pmid"] == EPIC]
    assert cells["measure"]["from_full_text"] is True and cells["measure"]["section"] == "Results"
    exported = rows_from_csv(export_job(job, "csv"))
    assert any(r.measure == row.measure for r in exported)
    assert job.report is not None
    assert "(full text, Results)" in render_markdown(job.report, job)


async def test_with_full_text_off_the_table_is_the_abstract_s(
    settings: Settings, fake: FakeEutils, corpus_llm: FakeLLMServer
) -> None:
    settings.fulltext.mode = "off"
    job = await _job(settings, fake, corpus_llm)
    assert job.status is JobStatus.COMPLETED, job.error
    assert not [r for r in fake.requests("efetch") if r.params.get("db") == "pmc"]
    (row,) = [r for r in job.evidence_table if r.pmid == EPIC]
    assert row.measure is not None and HR not in row.measure.quote
    cells = [c for r in job.evidence_table for c in r.cells().values() if c is not None]
    assert cells and not any(c.from_full_text for c in cells)
    assert "(full text" not in render_markdown(job.report, job)  # type: ignore[arg-type]


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
