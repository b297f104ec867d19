"""A cached answer rechecked against new articles (``cache.recheck_after_s``), end to end.

The fake E-utilities honours ``datetype=edat``: the corpus's records have no entry date (they
are old), a record added with ``entered=`` today is new. A cached answer is made due by moving
its stored time back, as time would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.types import AbstractSection, Article
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.test_ask_flow import Q1, corpus

DAY = 86400.0
NEW_PMID = "39100001"
NEW_TRIAL = Article(
    pmid=NEW_PMID,
    title="Aspirin and stroke prevention in adults: a large randomised trial",
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="We randomised 19,000 adults to aspirin or placebo to prevent stroke.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Aspirin did not prevent stroke in adults compared with placebo.",
        ),
    ],
    journal="Journal of Test Evidence",
    year=2026,
    publication_types=["Journal Article", "Randomized Controlled Trial"],
    language="eng",
)


def _verdict(pmids: Sequence[str]) -> str:
    """The model's verdict: No once it reads the new trial, else Yes."""
    return "No" if NEW_PMID in pmids else "Yes"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(_verdict)
        yield server


@pytest.fixture
def recheck_settings(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.pubmed.timeout_s = 5.0
    settings.agent.min_docs = 2
    settings.agent.score_threshold = 0.5
    settings.agent.fetch_per_round = 5
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    return settings


def _age(assistant: Assistant, days: float) -> None:
    """Move every cached answer's stored time ``days`` back (as if asked that long ago)."""
    with assistant.deps.store.transaction() as conn:
        conn.execute("UPDATE answers SET created_at = created_at - ?", (days * DAY,))


async def test_a_due_hit_with_nothing_new_costs_one_search_and_no_model_call(
    recheck_settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    async with Assistant(recheck_settings) as assistant:
        first = await assistant.ask(Q1)
        assert first.cache.admitted and first.cache.checked_at is None
        fresh = await assistant.ask(Q1)  # not due: the hit of before, nothing sent
        assert fresh.cache.tier1 == "hit" and fresh.cache.recheck is None
        assert (fresh.api_calls.pubmed, fresh.api_calls.llm) == (0, 0)
        assert fresh.cache.checked_at == fresh.cache.created_at
        _age(assistant, 8)
        sent_llm = len(llm.history)
        due = await assistant.ask(Q1)
        assert due.cache.tier1 == "hit" and due.answer == first.answer
        assert due.cache.recheck is not None and due.cache.recheck.status == "unchanged"
        assert (due.api_calls.pubmed, due.api_calls.llm) == (1, 0)
        assert len(llm.history) == sent_llm
        esearch = eutils.requests("esearch")[-1].params
        since = datetime.fromtimestamp(due.cache.recheck.since, UTC)
        assert esearch["datetype"] == "edat" and esearch["mindate"] < since.strftime("%Y/%m/%d")
        assert due.cache.checked_at is not None and time.time() - due.cache.checked_at < 60
        again = await assistant.ask(Q1)  # checked just now: a plain hit again
        assert again.cache.recheck is None and again.api_calls.pubmed == 0
        assert again.cache.checked_at == pytest.approx(due.cache.checked_at)


async def test_a_new_article_is_read_cited_and_what_changed_is_said(
    recheck_settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    async with Assistant(recheck_settings) as assistant:
        first = await assistant.ask(Q1)
        assert first.verdict == "yes" and NEW_PMID not in {c.pmid for c in first.citations}
        _age(assistant, 8)
        eutils.add_article(NEW_TRIAL, entered=datetime.now(UTC).date())
        changed = await assistant.ask(Q1)
        recheck = changed.cache.recheck
        assert recheck is not None and recheck.status == "changed", changed.cache
        assert changed.cache.tier1 == "miss" and changed.cache.miss_reason == "new_articles"
        assert (recheck.new_articles, recheck.new_pmids) == (1, [NEW_PMID])
        assert NEW_PMID in {c.pmid for c in changed.citations}, changed.answer
        assert NEW_PMID in recheck.new_citations
        # The model reads the new trial and turns its verdict; the answer says so.
        assert (recheck.verdict_before, recheck.verdict_after) == ("yes", "no")
        assert recheck.verdict_turned and changed.verdict == "no"
        assert changed.api_calls.llm >= 1 and changed.cache.admitted
        # The new answer replaced the old and is served as it is until it is due again.
        served = await assistant.ask(Q1)
        assert served.cache.tier1 == "hit" and served.cache.recheck is None
        assert served.answer == changed.answer and served.api_calls.pubmed == 0
        assert assistant.deps.store.count_answers() == 1


async def test_a_failed_check_serves_the_answer_unchecked_and_leaves_it_due(
    recheck_settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    recheck_settings.pubmed.max_retries = 0
    async with Assistant(recheck_settings) as assistant:
        first = await assistant.ask(Q1)
        _age(assistant, 8)
        eutils.enqueue(Fault.status(500), endpoint="esearch")
        failed = await assistant.ask(Q1)
        assert failed.cache.tier1 == "hit" and failed.answer == first.answer
        recheck = failed.cache.recheck
        assert recheck is not None and recheck.status == "failed" and recheck.error
        assert failed.cache.checked_at == pytest.approx(recheck.since)  # not checked
        again = await assistant.ask(Q1)  # still due: checked now
        assert again.cache.recheck is not None and again.cache.recheck.status == "unchanged"


async def test_an_answer_cached_before_searches_were_kept_is_answered_again_once(
    recheck_settings: Settings, eutils: FakeEutils
) -> None:
    async with Assistant(recheck_settings) as assistant:
        await assistant.ask(Q1)
        with assistant.deps.store.transaction() as conn:  # as an entry of the code before
            conn.execute("UPDATE answers SET basis = ''")
        _age(assistant, 8)
        again = await assistant.ask(Q1)
        assert again.cache.recheck is not None and again.cache.recheck.status == "unrecorded"
        assert again.cache.tier1 == "miss" and again.cache.admitted
        (record,) = assistant.deps.store.answers_due(checked_before=time.time() + 1)
        basis = assistant.deps.store.answer_basis(record.id)
        assert {s["source"] for s in basis["searches"]} == {"pubmed"}
        assert basis["evidence_keys"] and basis["sources"] == ["pubmed"]
        assert "searches" not in record.payload  # a hit never reads it


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_two_replicas_on_one_store_recheck_once(
    recheck_settings: Settings, eutils: FakeEutils, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "postgres":  # two runtimes on one PostgreSQL database (skips without one)
        recheck_settings.database_url = request.getfixturevalue("pg_url")  # type: ignore[assignment]
    async with Assistant(recheck_settings) as first:
        await first.ask(Q1)
        _age(first, 8)
    before = len(eutils.requests("esearch"))
    replicas = [Assistant(recheck_settings.model_copy(deep=True)) for _ in range(2)]
    try:
        results = await asyncio.gather(*(r.ask(Q1) for r in replicas))
    finally:
        for replica in replicas:
            await replica.aclose()
    statuses = sorted(r.cache.recheck.status for r in results if r.cache.recheck)
    assert statuses == ["busy", "unchanged"]
    assert len(eutils.requests("esearch")) - before == 1
    assert all(r.cache.tier1 == "hit" for r in results)


def _env(settings: Settings) -> dict[str, str]:
    """The environment of a CLI run with ``settings`` (what the test configured)."""
    return {
        "MEDLIT_HOME": str(settings.home),
        "MEDLIT_PUBMED_BASE_URL": settings.pubmed.base_url,
        "MEDLIT_PUBMED_REQUESTS_PER_SECOND": "50",
        "MEDLIT_AGENT_MIN_DOCS": "2",
        "MEDLIT_AGENT_SCORE_THRESHOLD": "0.5",
        "MEDLIT_AGENT_FETCH_PER_ROUND": "5",
        "MEDLIT_LLM_BASE_URL": settings.llm.base_url or "",
        "MEDLIT_LLM_MODEL": "fake-model",
    }


async def test_cache_recheck_checks_every_answer_due(
    recheck_settings: Settings, eutils: FakeEutils
) -> None:
    import json

    from typer.testing import CliRunner

    from medlit.cli import app

    async with Assistant(recheck_settings) as assistant:
        await assistant.ask(Q1)
        await assistant.ask("Does vitamin C prevent complex regional pain syndrome?")
        _age(assistant, 8)
    eutils.add_article(NEW_TRIAL, entered=datetime.now(UTC).date())
    runner = CliRunner()
    env = _env(recheck_settings)
    done = await asyncio.to_thread(runner.invoke, app, ["cache", "recheck", "--json"], env=env)
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["due"] == 2 and report["outcomes"] == {"changed": 1, "unchanged": 1}
    (changed,) = report["changed"]
    assert changed["question"] == Q1 and changed["new_pmids"] == [NEW_PMID]
    again = await asyncio.to_thread(runner.invoke, app, ["cache", "recheck", "--json"], env=env)
    assert json.loads(again.stdout)["due"] == 0
    stats = await asyncio.to_thread(runner.invoke, app, ["cache", "stats", "--json"], env=env)
    rechecks = json.loads(stats.stdout)["answers"]["rechecks"]
    assert (rechecks["unchanged"], rechecks["changed"]) == (1, 1)
    async with Assistant(recheck_settings) as assistant:
        served = await assistant.ask(Q1)
    assert served.cache.tier1 == "hit" and served.api_calls.pubmed == 0
    assert NEW_PMID in {c.pmid for c in served.citations}


async def test_the_service_rechecks_due_answers_in_the_background(
    recheck_settings: Settings, eutils: FakeEutils
) -> None:
    from medlit.storage import open_store
    from tests.integration.service.server import ServiceServer

    async with Assistant(recheck_settings) as assistant:
        await assistant.ask(Q1)
        _age(assistant, 8)
    recheck_settings.service.recheck_interval_s = 0.2
    week_ago = time.time() - 7 * DAY
    with ServiceServer(recheck_settings), open_store(recheck_settings) as store:
        deadline = time.monotonic() + 20
        while store.answers_due(checked_before=week_ago):
            assert time.monotonic() < deadline, "no background check in 20 s"
            await asyncio.sleep(0.1)
    assert [r.params.get("datetype") for r in eutils.requests("esearch")][-1] == "edat"
    async with Assistant(recheck_settings) as assistant:
        served = await assistant.ask(Q1)
    assert served.cache.tier1 == "hit" and served.cache.recheck is None  # not due any more
    assert served.cache.checked_at is not None and time.time() - served.cache.checked_at < 60


OTHER_OUTCOME = Article(
    pmid="39100002",
    title="Aspirin and gastrointestinal bleeding in adults: a cohort",
    abstract=[
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Aspirin use was associated with more gastrointestinal bleeding in adults.",
        )
    ],
    journal="Journal of Test Evidence",
    year=2026,
    publication_types=["Journal Article"],
    language="eng",
)


async def test_a_recheck_reruns_no_search_that_dropped_the_outcome(
    recheck_settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    from medlit.agent.recheck import rests_on

    state = {
        "searches": [
            {"query": "aspirin AND stroke", "dropped": [], "found": ["pmid:1"], "at": 1.0},
            {"query": "aspirin", "dropped": ["outcome"], "found": ["pmid:2"], "at": 2.0},
        ],
        "documents": {},
    }
    rests = rests_on(state, ["pubmed"])  # type: ignore[arg-type]
    assert [s["query"] for s in rests["searches"]] == ["aspirin AND stroke"]
    assert rests["evidence_keys"] == ["pmid:1", "pmid:2"]
    # Every search dropped it: all of them are what the answer rests on.
    state["searches"] = state["searches"][1:]
    assert [s["query"] for s in rests_on(state, ["pubmed"])["searches"]] == ["aspirin"]  # type: ignore[arg-type]


async def test_a_new_article_about_another_outcome_costs_no_model_call(
    recheck_settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    async with Assistant(recheck_settings) as assistant:
        await assistant.ask(Q1)
        # What the answer rests on, as an answer whose searches had to drop the outcome: the
        # subject alone finds the new cohort, which says nothing of stroke.
        with assistant.deps.store.transaction() as conn:
            conn.execute(
                "UPDATE answers SET basis = json_set(basis, '$.searches', "
                "json_array(json_object('source', 'pubmed', 'query', 'aspirin', 'at', 0)))"
            )
        _age(assistant, 8)
        eutils.add_article(OTHER_OUTCOME, entered=datetime.now(UTC).date())
        sent_llm = len(llm.history)
        due = await assistant.ask(Q1)
        recheck = due.cache.recheck
        assert recheck is not None and recheck.status == "unchanged", due.cache
        assert (recheck.new_articles, recheck.new_off_question) == (0, 1)
        assert due.cache.tier1 == "hit" and len(llm.history) == sent_llm
