"""Every operation of a running service's OpenAPI document, each driven by schemathesis with
a bounded number of examples: the loop the fuzz and conformance tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import schemathesis

# schemathesis loads its OpenAPI modules lazily, inside from_url; loaded there, deep in the
# stack, pytest's assertion rewriting of them can trip CPython 3.11's AST recursion check
# (SystemError), so they are imported here, at collection.
import schemathesis.specs.openapi.schemas
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode


def run_every_operation(
    base_url: str,
    mode: GenerationMode,
    examples: int,
    on_case: Callable[[schemathesis.Case], None],
    *,
    on_operations: Callable[[list[Any]], None] | None = None,
    describe: Callable[[BaseException], str] = repr,
) -> tuple[int, list[str]]:
    """Drive ``on_case`` over ``examples`` cases of every operation; returns the number of
    operations and the failures, one line per operation whose cases raised (an operation no
    case can be generated for is not a failure). ``on_operations`` sees the operations first."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    if on_operations is not None:
        on_operations(operations)
    failures: list[str] = []
    for operation in operations:

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: schemathesis.Case) -> None:
            on_case(case)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # one route's failure beside the others
            if "Unsatisfiable" not in type(exc).__name__:
                failures.append(f"{operation.label}: {describe(exc)}")
    return len(operations), failures
