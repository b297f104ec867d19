"""How a check declares itself, in its own module: ``@check("wrong-years", "sentence")`` on the
function that runs it. :mod:`medlit.checks.registry` says the order they run in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from medlit.checks.findings import Finding

__all__ = ["DECLARED", "Check", "Stage", "check"]

Stage = Literal["cite", "sentence", "note", "verdict", "claim", "report"]

_Run = TypeVar("_Run", bound=Callable[..., Sequence[Finding]])


@dataclass(frozen=True)
class Check:
    """One check: its id (kebab-case, stable: settings and clients name it), its stage, and
    the function that runs it."""

    id: str
    stage: Stage
    run: Callable[[Any], Sequence[Finding]]  # a CheckContext, ClaimContext or ReportContext

    @property
    def doc(self) -> str:
        """What it catches: the first paragraph of its function's docstring, on one line."""
        first = (self.run.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(first.split())


#: Every check declared so far, by id (a module's checks are declared when it is imported).
DECLARED: dict[str, Check] = {}


def check(id: str, stage: Stage) -> Callable[[_Run], _Run]:
    """Declare the decorated function the check ``id`` of ``stage``; the function is returned
    as it was. An id declared twice is a ValueError."""

    def declare(run: _Run) -> _Run:
        if id in DECLARED:
            raise ValueError(f"check {id!r} declared twice")
        DECLARED[id] = Check(id, stage, run)
        return run

    return declare
