"""A sentence that only points at citations, its citations moved to the statement before it."""

from __future__ import annotations

from medlit.checks.citations import citation_only_changes, citation_only_text
from medlit.checks.context import (
    CheckContext,
    edit_action,
)
from medlit.checks.declare import check
from medlit.checks.draft import Draft
from medlit.checks.findings import Finding

__all__ = ["citation_only"]


def _first_of_line(draft: Draft, line: int) -> int:
    """The index of the first sentence of ``line`` in ``draft``."""
    return sum(len(pieces) for pieces in draft.lines[:line])


@check("citation-only", "cite")
def citation_only(ctx: CheckContext) -> list[Finding]:
    """A sentence that only points at citations ("This is supported by [PMID:2].").

    Its citations move to the statement before it, which is what they were cited for, so
    that every later check holds them to that statement.
    """
    draft = ctx.draft
    changes = citation_only_changes(draft.lines)
    if not changes:
        return []
    after = citation_only_text(draft.lines, changes)
    at = {(s.line, s.index - _first_of_line(draft, s.line)): s for s in draft.sentences}
    by_index = {at[key].index: new for key, new in changes.items()}
    if draft.edited(by_index) != after:  # blank lines closed up: the whole answer changes
        return [Finding("citation-only", "rewrite", replacement=after)]
    findings = []
    for index in sorted(by_index):
        sentence = draft.sentences[index]
        action, pmids = edit_action(sentence.text, by_index[index])
        replacement = by_index[index] if action in ("cite", "rewrite") else None
        findings.append(
            Finding("citation-only", action, "", pmids, index, sentence.text, replacement)  # type: ignore[arg-type]
        )
    return findings
