"""The checks that hold a model's answer, a research claim and a report to their evidence.

Callers outside the package import from here only (``from medlit.checks import check_answer``);
the modules under it are the checks' own. The public face, by caller:

- an answer (ask): :func:`check_answer` runs every answer check; :func:`enforce_citations`,
  :func:`extract_pmids`, :func:`without_citations`, :func:`reasoned_verdict`,
  :class:`CitationCheck` and :class:`Verdict` tie citations to their statements and read a
  yes/no verdict; :func:`read_verdict` asks the model for one; :func:`third_person` and
  :func:`unauthored` reword an answer; :func:`unspoken_in` names the question's subjects the
  cited articles leave unsaid.
- research: :func:`check_claim` (:class:`CheckedClaim`) holds a claim to its quote;
  :func:`quote_passage` and :func:`without_label` read a claim's quote; :func:`ground_text`
  (:class:`GroundedSummary`) holds a report to its references.
- the checks by id: :data:`ORDER`, :data:`REGISTRY`, :class:`Check`, :func:`enabled`,
  :func:`unknown_ids` and :func:`refuse_unknown` (settings name the checks a user turns off).

Importing this package imports nothing else (a cached answer must not load the checks): each
name is imported from its module on first use (PEP 562). The word tools the checks share
(defined terms, conclusion sentences, unmentioned terms, an article's view) are in
:mod:`medlit.words`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medlit.checks.answer import check_answer
    from medlit.checks.answer_wording import third_person, unauthored
    from medlit.checks.citations import (
        CitationCheck,
        Verdict,
        enforce_citations,
        extract_pmids,
        reasoned_verdict,
        without_citations,
    )
    from medlit.checks.cited_subjects import unspoken_in
    from medlit.checks.claim_check import CheckedClaim, check_claim
    from medlit.checks.claims import quote_passage, without_label
    from medlit.checks.registry import (
        ORDER,
        REGISTRY,
        Check,
        enabled,
        refuse_unknown,
        unknown_ids,
    )
    from medlit.checks.report_check import GroundedSummary, ground_text
    from medlit.checks.verdict import read_verdict

#: Each public name and the module (under this package) it is defined in.
_WHERE: dict[str, str] = {
    # an answer
    "check_answer": "answer",
    "third_person": "answer_wording",
    "unauthored": "answer_wording",
    "CitationCheck": "citations",
    "Verdict": "citations",
    "enforce_citations": "citations",
    "extract_pmids": "citations",
    "reasoned_verdict": "citations",
    "without_citations": "citations",
    "unspoken_in": "cited_subjects",
    "read_verdict": "verdict",
    # research
    "CheckedClaim": "claim_check",
    "check_claim": "claim_check",
    "quote_passage": "claims",
    "without_label": "claims",
    "GroundedSummary": "report_check",
    "ground_text": "report_check",
    # the checks by id
    "ORDER": "registry",
    "REGISTRY": "registry",
    "Check": "registry",
    "enabled": "registry",
    "refuse_unknown": "registry",
    "unknown_ids": "registry",
}

__all__ = [
    "ORDER",
    "REGISTRY",
    "Check",
    "CheckedClaim",
    "CitationCheck",
    "GroundedSummary",
    "Verdict",
    "check_answer",
    "check_claim",
    "enabled",
    "enforce_citations",
    "extract_pmids",
    "ground_text",
    "quote_passage",
    "read_verdict",
    "reasoned_verdict",
    "refuse_unknown",
    "third_person",
    "unauthored",
    "unknown_ids",
    "unspoken_in",
    "without_citations",
    "without_label",
]


def __getattr__(name: str) -> Any:
    """A public name, read from its module (imported on first use). It is not kept here, so
    a name patched in its module is the name callers get."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
