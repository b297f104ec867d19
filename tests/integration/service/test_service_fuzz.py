"""Property-based fuzzing of every route in /openapi.json (schemathesis): zero 5xx.

Valid and invalid inputs alike, over real HTTP against the real server and the fakes; every
error must be a 4xx problem+json, never a 500. Bounded (a few dozen examples per route and
mode) to stay fast.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from medlit.config import Settings
from tests.integration.service.server import ServiceServer

EXAMPLES = 12


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_route_answers_5xx(service_settings: Settings, mode: GenerationMode) -> None:
    service_settings.agent.max_iterations = 1  # each fuzzed question is a miss: keep it short
    with ServiceServer(service_settings) as server:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        labels = {op.label for op in operations}
        assert {"POST /v1/ask", "GET /v1/search", "GET /v1/cache/stats", "GET /readyz"} <= labels
        failures: list[str] = []
        for operation in operations:

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def fuzz(case: schemathesis.Case) -> None:
                response = case.call(base_url=server.url, timeout=30)
                if response.status_code >= 500 and response.status_code not in (502, 503, 504):
                    failures.append(f"{case.method} {case.formatted_path} -> {response.text}")
                if response.status_code >= 400:
                    kind = (response.headers.get("content-type") or [""])[0]
                    assert kind.startswith("application/problem+json"), (case, response.text)

            try:
                fuzz()
            except Exception as exc:  # collect, so one route's failure shows with the others
                if "Unsatisfiable" not in type(exc).__name__:
                    failures.append(f"{operation.label}: {exc!r}")
    assert not failures, "\n".join(failures)
