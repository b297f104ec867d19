"""A question one article answers, asked again: the repeat costs no PubMed call and no model call.

The article answers the question but alone scores under ``cache.min_score`` (a retrieval score
is the mean over ``agent.min_docs`` articles); the tier-1 admission rule keeps the answer
on its ``subject`` bar (``medlit.agent.decisions.should_cache``), so the same question asked
again, by the CLI's engine in a new process or by another replica on the same store (SQLite or
PostgreSQL), is served from tier 1. Real HTTP, real stores, the real embedder; PubMed and the
model are fakes.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.app import create_app
from medlit.storage.base import Store
from medlit.types import AbstractSection, Article
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer

QUESTION = "Is oral contraceptive use associated with colorectal cancer risk in women?"
ONE = Article(
    pmid="32000001",
    title="Oral contraceptive use and the risk of colorectal cancer in premenopausal women",
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="A case-control study of 1200 premenopausal women.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Oral contraceptive use was associated with a lower risk of colorectal "
            "cancer in premenopausal women.",
        ),
    ],
    journal="Journal of Test Evidence",
    year=2015,
    publication_types=["Journal Article", "Case-Control Studies"],
    language="eng",
)


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    # The sample corpus (aspirin, statins ...) and the one article on the question.
    with FakeEutils(articles=[*sample_articles(), ONE], rate_limit=None) as fake:
        yield fake


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(lambda pmids: "Yes")
        yield server


@pytest.fixture
def one_article(settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.europepmc.enabled = False
    settings.llm.base_url = llm_server.base_url
    settings.llm.model = "fake-model"
    return settings


async def test_the_cli_engine_answers_the_repeat_from_tier_1(
    one_article: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    async with Assistant(one_article) as assistant:  # what `medlit ask` opens, per process
        first = await assistant.ask(QUESTION)
    assert [c.pmid for c in first.citations] == [ONE.pmid] and first.verdict == "yes"
    assert first.retrieval_score < one_article.cache.min_score  # one article: under the floor
    assert first.cache.admitted and first.api_calls.pubmed and first.api_calls.llm
    searched, asked = len(eutils.history), len(llm_server.history)
    async with Assistant(one_article) as assistant:  # `medlit ask` run again
        repeat = await assistant.ask(QUESTION)
    assert repeat.cache.tier1 == "hit" and repeat.answer == first.answer
    assert repeat.api_calls.pubmed == 0 and repeat.api_calls.llm == 0
    assert (len(eutils.history), len(llm_server.history)) == (searched, asked)


@pytest.fixture(params=["sqlite", "postgres"])
def replicas(request: pytest.FixtureRequest, one_article: Settings) -> Iterator[list[Runtime]]:
    """Two runtimes (replicas) over one store of the parametrised backend, each with its own
    connection: SQLite's file in the settings' home, or one PostgreSQL database."""
    stores: list[Store] = []
    if request.param == "postgres":
        from medlit.storage.postgres import PostgresStore

        url = str(request.getfixturevalue("pg_url"))
        stores = [PostgresStore(url, pool_size=2) for _ in range(2)]
        yield [Runtime(one_article, store=store) for store in stores]
    else:
        yield [Runtime.open(one_article), Runtime.open(one_article)]
    for store in stores:
        store.close()


async def test_another_replica_answers_the_repeat_from_tier_1(
    replicas: list[Runtime], eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    answers = []
    try:
        for runtime in replicas:
            transport = httpx.ASGITransport(app=create_app(runtime))
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost", timeout=60
            ) as client:
                before = len(eutils.history), len(llm_server.history)
                reply = await client.post("/v1/ask", json={"question": QUESTION})
                assert reply.status_code == 200, reply.text
                answers.append((reply.json(), before))
    finally:
        for runtime in replicas:
            await runtime.aclose()
    (first, _), (repeat, before) = answers
    assert first["cache"]["tier1"] == "miss" and first["cache"]["admitted"]
    assert repeat["cache"]["tier1"] == "hit" and repeat["answer"] == first["answer"]
    assert repeat["api_calls"]["pubmed"] == 0 and repeat["api_calls"]["llm"] == 0
    assert (len(eutils.history), len(llm_server.history)) == before


async def test_without_the_subject_bar_the_repeat_searches_again(
    one_article: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    one_article.cache.subject_min_score = None  # the rule before the subject bar
    async with Assistant(one_article) as assistant:
        first = await assistant.ask(QUESTION)
        searched = len(eutils.history)
        repeat = await assistant.ask(QUESTION)
    assert not first.cache.admitted and repeat.cache.tier1 == "miss"
    assert repeat.api_calls.pubmed and len(eutils.history) > searched
