"""Fixtures for research jobs against the fakes: E-utilities, Europe PMC and an
OpenAI-compatible LLM answering the research prompts (import the ones a module uses)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from medlit.config import Settings
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ARTICLES, ResearchResponder, step_of

__all__ = ["QUESTION", "answered", "env_for", "europepmc", "eutils", "llm_server", "responder",
           "rsettings", "steps"]  # fmt: skip

QUESTION = "Does aspirin prevent recurrent ischaemic stroke, and at what bleeding cost?"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=ARTICLES) as fake:
        yield fake


@pytest.fixture
def europepmc() -> Iterator[FakeEuropePMC]:
    with FakeEuropePMC(articles=ARTICLES) as fake:
        yield fake


@pytest.fixture
def responder() -> ResearchResponder:
    return ResearchResponder()


@pytest.fixture
def llm_server(responder: ResearchResponder) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=responder) as server:
        yield server


@pytest.fixture
def rsettings(
    settings: Settings, eutils: FakeEutils, europepmc: FakeEuropePMC, llm_server: FakeLLMServer
) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.api_key = "test-key"  # type: ignore[assignment]  # 10 requests/s
    settings.europepmc.base_url = europepmc.base_url
    settings.local.enabled = False
    # A sub-question is broadened only when its search finds nothing: the expectations of
    # these jobs (articles read, calls made) rest on the narrow searches (broadening has its
    # own tests).
    settings.agent.min_docs = 1
    settings.llm.base_url = llm_server.base_url
    settings.llm.model = "fake-model"
    settings.llm.max_retries = 0
    return settings


def env_for(settings: Settings) -> dict[str, str]:
    """The MEDLIT_* environment of ``rsettings`` for a subprocess."""
    return {
        "MEDLIT_HOME": str(settings.home),
        "MEDLIT_PUBMED_BASE_URL": settings.pubmed.base_url,
        "MEDLIT_PUBMED_API_KEY": "test-key",
        "MEDLIT_EUROPEPMC_BASE_URL": settings.europepmc.base_url,
        "MEDLIT_LOCAL_ENABLED": "false",
        "MEDLIT_AGENT_MIN_DOCS": "1",
        "MEDLIT_LLM_BASE_URL": settings.llm.base_url or "",
        "MEDLIT_LLM_MODEL": "fake-model",
        "MEDLIT_LLM_MAX_RETRIES": "0",
    }


def steps(server: FakeLLMServer) -> Counter[str]:
    """How many LLM requests of each research step the fake has seen."""
    return Counter(step_of(r.json) for r in server.completions)


def answered(server: FakeLLMServer) -> Counter[tuple[str, str]]:
    """(step, PMID named in the prompt) of the requests the fake has answered."""
    out: Counter[tuple[str, str]] = Counter()
    for record in server.completions:
        text = str(record.json)
        pmid = next((p for p in ("40000001", "40000002", "40000003", "40000004", "40000005",
                                 "40000006", "40000007") if f"PMID: {p}" in text), "")  # fmt: skip
        out[(step_of(record.json), pmid)] += 1
    return out
