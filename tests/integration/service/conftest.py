"""Fixtures of the service tests: the fakes, settings pointing at them, the real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.service.server import ServiceServer
from tests.integration.test_ask_flow import _configure as configure
from tests.integration.test_ask_flow import eutils, llm_server

__all__ = ["eutils", "llm_server"]  # the ask-flow test's fakes, shared


@pytest.fixture
def service_settings(settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer) -> Settings:
    """Settings pointing at both fakes (the ask-flow test's tuning), Europe PMC off."""
    settings.europepmc.enabled = False
    return configure(settings, eutils, llm_server)


@pytest.fixture
def service(service_settings: Settings) -> Iterator[ServiceServer]:
    """The service under uvicorn on loopback (no API keys: tenant default)."""
    with ServiceServer(service_settings) as server:
        yield server
