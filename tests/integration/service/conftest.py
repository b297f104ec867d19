"""Fixtures of the service tests: the fakes, settings pointing at them, the real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.service.server import ServiceServer
from tests.integration.test_ask_flow import corpus


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    """A fake E-utilities serving the aspirin/stroke corpus, no rate limit."""
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A fake OpenAI-compatible server answering from the evidence it is given."""
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(lambda pmids: "Yes")
        yield server


@pytest.fixture
def service_settings(settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer) -> Settings:
    """Settings pointing at both fakes (the ask-flow test's tuning)."""
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.pubmed.timeout_s = 5.0
    settings.europepmc.enabled = False
    settings.agent.min_docs = 2
    settings.agent.score_threshold = 0.5
    settings.agent.fetch_per_round = 5
    settings.llm.base_url = llm_server.base_url
    settings.llm.model = "fake-model"
    return settings


@pytest.fixture
def service(service_settings: Settings) -> Iterator[ServiceServer]:
    """The service under uvicorn on loopback (no API keys: tenant default)."""
    with ServiceServer(service_settings) as server:
        yield server
