"""``ask`` reads the full text of the open-access articles it is about to use (fake E-utilities
serving the eight real PMC articles, fake LLM), and with ``fulltext.mode=off`` does not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from medlit.assistant import AskResult, Assistant
from medlit.config import Settings
from medlit.storage.sqlite import SqliteStore
from tests.conftest import shared_data_path
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer

QUESTION = (
    "Is oral contraceptive use associated with colorectal cancer risk in pre-menopausal women?"
)
EPIC = "21045829"
HR = "pre- or peri-menopausal women (HR, 1.19; 95% CI: 0.96–1.48)"

pytestmark = pytest.mark.shared_data


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    paths = sorted(shared_data_path("pmc_oa").glob("*.nxml"))
    with FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as fake:
        for path in paths:
            fake.add_jats(path.read_bytes())
        yield fake


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(lambda pmids: "No")
        yield server


def _configure(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.pubmed.timeout_s = 5.0
    settings.fulltext.europepmc_fallback = False
    settings.agent.min_docs = 2
    settings.agent.fetch_per_round = 5
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    return settings


async def _ask(settings: Settings) -> AskResult:
    async with Assistant(settings) as assistant:
        return await assistant.ask(QUESTION)


async def test_the_answer_rests_on_the_results_passage_of_the_full_text(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    result = await _ask(_configure(settings, eutils, llm_server))
    cited = {c.pmid: c for c in result.citations}
    assert EPIC in cited, result.answer
    passages = cited[EPIC].passages
    results = [p for p in passages if p.from_full_text and p.section == "Results"]
    assert any(HR in p.text for p in results), passages
    # The JSON (--json, the API) says it too.
    data = result.model_dump(mode="json")
    epic = next(c for c in data["citations"] if c["pmid"] == EPIC)
    assert any(
        p["from_full_text"] and p["section"] == "Results" and HR in p["text"]
        for p in epic["passages"]
    )
    # Read through efetch db=pmc, counted apart, within the per-answer budget.
    pmc = [r for r in eutils.requests("efetch") if r.params.get("db") == "pmc"]
    assert 1 <= len(pmc) <= settings.fulltext.max_per_answer
    assert result.api_calls.full_text == len(pmc)
    assert "2994229" in {r.params["id"] for r in pmc}
    # The prompt showed the passage with its section.
    prompts = [
        m["content"] for req in llm_server.completions for m in req.messages if m["role"] == "user"
    ]
    # The prompt showed a passage of the body with its section: the one that bears most on
    # the question of those read (the prompt carries sentences, not whole chunks).
    assert any(f"[PMID:{EPIC} · Results]" in p for p in prompts)


async def test_second_ask_reuses_the_stored_full_text(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    await _ask(settings)
    fetched = len([r for r in eutils.requests("efetch") if r.params.get("db") == "pmc"])
    async with Assistant(settings) as assistant:
        again = await assistant.ask(QUESTION, use_cache=True)
        other = await assistant.ask(
            "Does oral contraceptive use change colorectal cancer risk in post-menopausal women?"
        )
    assert again.cache.tier1 == "hit" or again.api_calls.full_text == 0
    assert other.api_calls.full_text == 0  # tier 2 holds the body: nothing fetched again
    assert len([r for r in eutils.requests("efetch") if r.params.get("db") == "pmc"]) == fetched


async def test_tier2_embeds_the_results_chunks_the_question_picks(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    settings.fulltext.embed_per_article = 3
    result = await _ask(settings)
    assert EPIC in {c.pmid for c in result.citations}
    with SqliteStore(settings.db_path) as store:
        body = [c for c in store.article_chunks(f"pmid:{EPIC}") if c.from_full_text]
        per_article = store.read(
            "SELECT article_key, count(*) FROM chunks WHERE from_full_text = 1 GROUP BY article_key"
        )
    # Three Results chunks, the one with the answer among them; never the Methods.
    assert len(body) == 3 and all(c.section == "Results" for c in body)
    assert any(HR in c.text for c in body)
    assert per_article and all(count <= 3 for _, count in per_article)


async def test_with_full_text_off_nothing_is_read(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    settings.fulltext.mode = "off"
    result = await _ask(settings)
    assert not [r for r in eutils.history if r.params.get("db") == "pmc"]
    assert result.api_calls.full_text == 0
    assert "read_full_text" not in result.timings_ms
    for citation in result.citations:
        assert not any(p.from_full_text for p in citation.passages)
    assert EPIC not in {c.pmid for c in result.citations} or not any(
        HR in p.text for c in result.citations for p in c.passages
    )


async def test_turned_off_after_reading_the_stored_bodies_are_not_used(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    first = await _ask(settings)
    assert any(p.from_full_text for c in first.citations for p in c.passages)
    off = settings.model_copy(deep=True)
    off.fulltext.mode = "off"
    assert off.answer_fingerprint(["pubmed"], "m") != settings.answer_fingerprint(["pubmed"], "m")
    before = len(llm_server.completions)
    result = await _ask(off)
    assert result.cache.tier1 == "miss"  # answers read from full text are not served to off
    assert not any(p.from_full_text for c in result.citations for p in c.passages)
    prompts = [
        m["content"]
        for req in llm_server.completions[before:]
        for m in req.messages
        if m["role"] == "user"
    ]
    assert prompts and not any(f"[PMID:{EPIC} · " in p for p in prompts)
