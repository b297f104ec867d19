"""Property-based fuzzing of every route in /openapi.json (schemathesis): zero 5xx.

Valid and invalid inputs alike, over real HTTP against the real server and the fakes; every
error must be a 4xx problem+json, never a 500. Bounded (a few dozen examples per route and
mode) to stay fast.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from schemathesis import GenerationMode

from medlit.config import Settings
from tests.integration.service.openapi_cases import run_every_operation
from tests.integration.service.server import ServiceServer

EXAMPLES = 12


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_route_answers_5xx(service_settings: Settings, mode: GenerationMode) -> None:
    service_settings.agent.max_iterations = 1  # each fuzzed question is a miss: keep it short
    with ServiceServer(service_settings) as server:
        failures: list[str] = []

        def routes(operations: list[Any]) -> None:
            labels = {op.label for op in operations}
            assert {
                "POST /v1/ask",
                "GET /v1/search",
                "GET /v1/cache/stats",
                "GET /readyz",
            } <= labels

        def fuzz(case: schemathesis.Case) -> None:
            response = case.call(base_url=server.url, timeout=30)
            if response.status_code >= 500 and response.status_code not in (502, 503, 504):
                failures.append(f"{case.method} {case.formatted_path} -> {response.text}")
            if response.status_code >= 400:
                kind = (response.headers.get("content-type") or [""])[0]
                assert kind.startswith("application/problem+json"), (case, response.text)

        _, raised = run_every_operation(server.url, mode, EXAMPLES, fuzz, on_operations=routes)
    failures += raised
    assert not failures, "\n".join(failures)
