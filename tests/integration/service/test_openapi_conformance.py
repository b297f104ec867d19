"""The OpenAPI document matches the responses: schemathesis' conformance checks (status codes,
content types, headers and bodies as documented; invalid input refused, valid accepted) on
every route, against the real app in this process over loopback, with a bounded number of
examples."""

from __future__ import annotations

import time

import pytest
import schemathesis
import schemathesis.specs.openapi.schemas
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from medlit.config import Settings
from tests.integration.service.server import ServiceServer

# schemathesis loads its OpenAPI modules lazily, inside from_url; loaded there, deep in the
# stack, pytest's assertion rewriting of them can trip CPython 3.11's AST recursion check
# (SystemError), so they are imported here, at collection.

EXAMPLES = 8


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_route_conforms_to_its_openapi_document(
    service_settings: Settings, mode: GenerationMode
) -> None:
    service_settings.agent.max_iterations = 1
    service_settings.service.research_process = False
    started = time.monotonic()
    cases = 0
    with ServiceServer(service_settings) as server:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
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
            def check(case: schemathesis.Case) -> None:
                nonlocal cases
                cases += 1
                response = case.call(base_url=server.url, timeout=30)
                try:
                    case.validate_response(response)
                except (Exception, BaseExceptionGroup):
                    said = f"{response.status_code} {response.text[:300]}"
                    failures.append(f"{case.as_curl_command()} -> {said}")
                    raise

            try:
                check()
            except (Exception, BaseExceptionGroup) as exc:
                if "Unsatisfiable" not in type(exc).__name__:
                    failures.append(f"{operation.label}: {_short(exc)}")
    elapsed = time.monotonic() - started
    print(f"openapi conformance ({mode.value}): {cases} cases, {len(operations)} operations, "
          f"{elapsed:.1f}s")  # fmt: skip
    assert not failures, "\n\n".join(failures)


def _short(exc: BaseException) -> str:
    """The failures schemathesis found, one line each (their reproduction left out)."""
    text = str(exc)
    groups = getattr(exc, "exceptions", None)
    if groups:
        text = "; ".join(_short(e) for e in groups)
    return " ".join(text.split())[:1500]
