"""Citations and verdicts in an answer's text.

The answer cites evidence as ``[PMID:123]`` (several in one bracket are accepted:
``[PMID:1, PMID:2]``, ``[PMID: 1; 2]``). :func:`enforce_citations` keeps only PMIDs of evidence
actually retrieved for the answer; any other is removed from the text and logged, never shown.
:func:`parse_verdict` reads the bottom line a yes/no answer opens with.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from medlit.log import get_logger

__all__ = [
    "CitationCheck",
    "Verdict",
    "enforce_citations",
    "extract_pmids",
    "is_yes_no_question",
    "parse_verdict",
]

log = get_logger("agent.citations")

Verdict = Literal["yes", "no", "uncertain"]

# A bracket holding one or more PMIDs: [PMID:1], [PMID: 1, 2], [PMID:1; PMID:2], [PMIDs: 1,2]
_BRACKET = re.compile(r"\s?\[\s*PMIDs?\s*:?\s*\d+(?:\s*[,;]\s*(?:PMID\s*:?\s*)?\d+)*\s*\]", re.I)
_NUMBER = re.compile(r"\d+")

_VERDICT_LINE = re.compile(
    r"^(?:verdict|answer|bottom line|short answer)?\s*[:\-–]?\s*"
    r"(yes|no|uncertain|unclear|maybe|inconclusive)\b",
    re.I,
)
_VERDICT_MAP: dict[str, Verdict] = {
    "yes": "yes",
    "no": "no",
    "uncertain": "uncertain",
    "unclear": "uncertain",
    "maybe": "uncertain",
    "inconclusive": "uncertain",
}
_YES_NO_START = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must)"
    r"\b",
    re.I,
)


def extract_pmids(text: str) -> list[str]:
    """PMIDs cited in ``text``, in order of first appearance, without duplicates."""
    found: list[str] = []
    for match in _BRACKET.finditer(text):
        for pmid in _NUMBER.findall(match.group(0)):
            if pmid not in found:
                found.append(pmid)
    return found


@dataclass
class CitationCheck:
    """An answer after its citations were checked against the evidence."""

    text: str
    cited: list[str] = field(default_factory=list)  # kept PMIDs, first appearance first
    removed: list[str] = field(default_factory=list)  # PMIDs stripped: not in the evidence


def enforce_citations(text: str, allowed: Collection[str]) -> CitationCheck:
    """Strip every cited PMID that is not in ``allowed`` (the retrieved evidence).

    A bracket keeps its valid PMIDs (rewritten as ``[PMID:1][PMID:2]``); a bracket with none
    left disappears with the space before it.
    """
    allowed_set = set(allowed)
    cited: list[str] = []
    removed: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        pmids = _NUMBER.findall(match.group(0))
        keep = [p for p in pmids if p in allowed_set]
        for pmid in pmids:
            bucket = cited if pmid in allowed_set else removed
            if pmid not in bucket:
                bucket.append(pmid)
        if not keep:
            return ""
        lead = " " if match.group(0).startswith(" ") else ""
        return lead + "".join(f"[PMID:{p}]" for p in dict.fromkeys(keep))

    new_text = _BRACKET.sub(rewrite, text)
    if removed:
        log.warning("citation_removed", pmids=removed, reason="not_in_retrieved_evidence")
    return CitationCheck(text=new_text, cited=cited, removed=removed)


def is_yes_no_question(question: str) -> bool:
    """A question whose bottom line is yes or no ("Does X reduce Y?", "Is X safe in Z?")."""
    text = question.strip().lstrip("\"'(").strip()
    return bool(_YES_NO_START.match(text))


def parse_verdict(answer: str) -> Verdict | None:
    """The verdict an answer opens with ("Yes", "No", "Uncertain", markdown allowed), or None."""
    for line in answer.splitlines():
        cleaned = re.sub(r"[*_#>`]", "", line).strip()
        if not cleaned:
            continue
        match = _VERDICT_LINE.match(cleaned)
        return _VERDICT_MAP[match.group(1).lower()] if match else None
    return None
