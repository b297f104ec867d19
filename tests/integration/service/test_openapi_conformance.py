"""The OpenAPI document matches the responses: schemathesis' conformance checks (status codes,
content types, headers and bodies as documented; invalid input refused, valid accepted) on
every route, against the real app in this process over loopback, with a bounded number of
examples."""

from __future__ import annotations

import time

import pytest
import schemathesis
from schemathesis import GenerationMode

from medlit.config import Settings
from tests.integration.service.openapi_cases import run_every_operation
from tests.integration.service.server import ServiceServer

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
        failures: list[str] = []

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

        operations, raised = run_every_operation(server.url, mode, EXAMPLES, check, describe=_short)
    failures += raised
    elapsed = time.monotonic() - started
    print(f"openapi conformance ({mode.value}): {cases} cases, {operations} operations, "
          f"{elapsed:.1f}s")  # fmt: skip
    assert not failures, "\n\n".join(failures)


def _short(exc: BaseException) -> str:
    """The failures schemathesis found, one line each (their reproduction left out)."""
    text = str(exc)
    groups = getattr(exc, "exceptions", None)
    if groups:
        text = "; ".join(_short(e) for e in groups)
    return " ".join(text.split())[:1500]
