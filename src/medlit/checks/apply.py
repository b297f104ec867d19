"""The one place an answer's text changes: the findings of the checks applied to a draft."""

from __future__ import annotations

from collections.abc import Iterable

from medlit.checks.citations import remove_citations
from medlit.checks.draft import Draft
from medlit.checks.findings import Finding

__all__ = ["apply"]


def apply(draft: Draft, findings: Iterable[Finding]) -> Draft:
    """``draft`` with ``findings`` done: a ``drop`` leaves its sentence out, an ``uncite``
    takes its PMIDs' citations out of it (and the sentence, when it then cites nothing), a
    ``cite`` or ``rewrite`` puts its replacement in (a whole-answer ``rewrite`` the whole
    text). Notes, verdict flips and fallbacks are the policy's (:mod:`medlit.checks.policy`)."""
    replacements: dict[int, str] = {}
    whole: str | None = None
    for finding in findings:
        index = finding.sentence
        if index is None:
            if finding.action == "rewrite" and finding.replacement is not None:
                whole = finding.replacement
            continue
        current = replacements.get(index, draft.sentences[index].text)
        if finding.action == "drop":
            replacements[index] = ""
        elif finding.action == "uncite" and current:
            replacements[index] = remove_citations(current, finding.pmids)
        elif finding.action in ("cite", "rewrite") and finding.replacement is not None:
            replacements[index] = finding.replacement
    if whole is not None:
        return Draft.parse(whole)
    return draft.replaced(replacements) if replacements else draft
