"""Every check of an answer: its stable id, the stage it runs in, what it catches, in order.

A check is a function of a :class:`~medlit.checks.context.CheckContext` returning findings.
:data:`ORDER` is the order they run in (each sees the answer as the ones before it left it).
Stages: ``cite`` ties citations to their statements; ``sentence`` holds each cited sentence
to its articles; ``note`` says what the answer left no longer covers; ``verdict`` holds a
yes/no verdict and the sentences stating an answer to the articles' conclusions; ``claim``
holds a research finding to the article it was drawn from; ``report`` holds each sentence of
a research report to what the references it cites stand behind. Adding a check is a function
(in its own module) and one line here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from medlit.checks import claim_direction, claims, notes, report, units, verdict_units
from medlit.checks.findings import Finding

__all__ = ["ORDER", "REGISTRY", "Check", "Stage", "enabled", "refuse_unknown", "unknown_ids"]

Stage = Literal["cite", "sentence", "note", "verdict", "claim", "report"]


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


_CHECKS = (
    Check("question-remarks", "cite", units.question_remarks),
    Check("uncited-attribution", "cite", units.uncited_attribution),
    Check("citation-only", "cite", units.citation_only),
    Check("misattributed-names", "sentence", units.misattributed_names),
    Check("unsourced-numbers", "sentence", units.unsourced_numbers),
    Check("swapped-groups", "sentence", units.swapped_groups),
    Check("level-changes", "sentence", units.level_changes),
    Check("swapped-subjects", "sentence", units.swapped_subjects),
    Check("wrong-years", "sentence", units.wrong_years),
    Check("wrong-authors", "sentence", units.wrong_authors),
    Check("wrong-designs", "sentence", units.wrong_designs),
    Check("overstated-correlations", "sentence", units.overstated_correlations),
    Check("reversed-findings", "sentence", units.reversed_findings),
    Check("unsupported-inferences", "sentence", units.unsupported_inferences),
    Check("aims-as-findings", "sentence", units.aims_as_findings),
    Check("restated-titles", "sentence", units.restated_titles),
    Check("off-question", "sentence", units.off_question),
    Check("borrowed-support", "sentence", units.borrowed_support),
    Check("unsaid-subjects", "sentence", units.unsaid_subjects),
    Check("borrowed-terms", "sentence", units.borrowed_terms),
    Check("unsupported-conclusions", "sentence", units.unsupported_conclusions),
    Check("opening-connective", "sentence", units.opening_connective),
    Check("left-unanswered", "note", notes.left_unanswered),
    Check("unaddressed-words", "note", notes.unaddressed_words),
    Check("untold-subjects", "note", notes.untold_subjects),
    Check("populations-unspoken", "note", notes.populations_unspoken),
    Check("cited-off-subject", "note", notes.cited_off_subject),
    Check("unmentioned-terms", "note", notes.unmentioned),
    Check("restated-verdict", "verdict", verdict_units.restated_verdict),
    Check("contradicted", "verdict", verdict_units.contradicted),
    Check("against-conclusions", "verdict", verdict_units.against_conclusions),
    Check("against-direction", "verdict", verdict_units.against_direction),
    Check("against-own-words", "verdict", verdict_units.against_own_words),
    Check("claim-quote", "claim", claims.claim_quote),
    Check("claim-reverses-quote", "claim", claims.claim_reverses_quote),
    Check("claim-opposite-direction", "claim", claim_direction.claim_opposite_direction),
    Check("claim-denied-by-article", "claim", claims.claim_denied_by_article),
    Check("claim-subject-unsaid", "claim", claims.claim_subject_unsaid),
    Check("report-prompt-frame", "report", report.prompt_frame),
    Check("report-uncited", "report", report.uncited),
    Check("report-unbacked-words", "report", report.unbacked_words),
    Check("report-misnamed", "report", report.misnamed),
    Check("report-says-nothing", "report", report.says_nothing),
    Check("report-citation-only", "report", report.citation_only),
    Check("report-overcounts", "report", report.overcounts),
    Check("report-prompt-talk", "report", report.prompt_talk),
)

#: Every check by id.
REGISTRY: dict[str, Check] = {check.id: check for check in _CHECKS}
#: The order the checks run in.
ORDER: tuple[str, ...] = tuple(check.id for check in _CHECKS)


def unknown_ids(ids: Collection[str]) -> list[str]:
    """The ids in ``ids`` that name no check."""
    return sorted(set(ids) - set(REGISTRY))


def refuse_unknown(ids: Collection[str]) -> None:
    """Raise ValueError naming the ids in ``ids`` that name no check (a misspelt id would
    leave its check on unseen)."""
    unknown = unknown_ids(ids)
    if unknown:
        raise ValueError(f"unknown check id(s): {', '.join(unknown)}; known: {', '.join(ORDER)}")


def enabled(stage: Stage, disabled: Collection[str] = ()) -> list[Check]:
    """The checks of ``stage`` not in ``disabled``, in order (an unknown id in ``disabled``
    is a ValueError: :func:`refuse_unknown`)."""
    if disabled:
        refuse_unknown(disabled)
    return [REGISTRY[i] for i in ORDER if REGISTRY[i].stage == stage and i not in disabled]
