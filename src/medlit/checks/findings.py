"""What a check found: one record per thing it would change or say about an answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Action", "Finding"]

#: What a finding asks for. ``drop``, ``uncite``, ``cite`` and ``rewrite`` change one sentence
#: (``rewrite`` the whole answer when ``sentence`` is None); ``warn`` only tells the reader;
#: ``note`` puts a sentence before the answer; ``flip_verdict`` changes the verdict.
Action = Literal["drop", "uncite", "cite", "rewrite", "warn", "note", "flip_verdict"]


@dataclass(frozen=True)
class Finding:
    """One thing a check found in an answer.

    Attributes:
        check: the stable id of the check (see :mod:`medlit.checks.registry`).
        action: what is to be done (:data:`Action`).
        message: what the reader is told (empty when the check says nothing for it).
        pmids: the PMIDs it concerns (a citation removed or added, a sentence's citations).
        sentence: the sentence's index in the draft it was found in (None: the whole answer).
        text: that sentence as it stood.
        replacement: the sentence (or answer) after a ``rewrite`` or ``cite``.
        data: what later checks and the policy read (not shown to clients).
    """

    check: str
    action: Action
    message: str = ""
    pmids: tuple[str, ...] = ()
    sentence: int | None = None
    text: str = ""
    replacement: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def record(self) -> dict[str, Any]:
        """The finding as clients see it (``--json``, the HTTP API, MCP)."""
        return {
            "check": self.check,
            "action": self.action,
            "message": self.message,
            "pmids": list(self.pmids),
            "sentence": self.text or None,
        }
