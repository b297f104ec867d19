"""Every check of an answer: its stable id, the stage it runs in, what it catches, in order.

A check is a function of a :class:`~medlit.checks.context.CheckContext` returning findings.
:data:`ORDER` is the order they run in (each sees the answer as the ones before it left it).
Stages: ``cite`` ties citations to their statements; ``sentence`` holds each cited sentence
to its articles; ``note`` says what the answer left no longer covers; ``verdict`` holds a
yes/no verdict and the sentences stating an answer to the articles' conclusions; ``claim``
holds a research finding to the article it was drawn from; ``report`` holds each sentence of
a research report to what the references it cites stand behind. A check declares itself in its
own module (:func:`medlit.checks.declare.check`); adding one is its id put in :data:`ORDER`.
"""

from __future__ import annotations

from collections.abc import Collection

# Each module below declares its checks (``@check``) when imported: imported for that alone.
from medlit.checks import (  # noqa: F401
    answer_wording,
    attribution,
    borrowed_terms,
    citation_names,
    citation_only,
    cited_authors,
    cited_designs,
    cited_numbers,
    cited_subjects,
    cited_years,
    claim_direction,
    claims,
    correlation_strength,
    inferences,
    level_changes,
    notes,
    off_question,
    question_remarks,
    report,
    restated_titles,
    reversed_findings,
    stated_aims,
    swapped_groups,
    swapped_subjects,
    unsupported,
    verdict_units,
)
from medlit.checks.declare import DECLARED, Check, Stage

__all__ = ["ORDER", "REGISTRY", "Check", "Stage", "enabled", "refuse_unknown", "unknown_ids"]

#: The order the checks run in, by id (each declared in its own module: ``@check``).
ORDER: tuple[str, ...] = (
    "question-remarks",
    "uncited-attribution",
    "citation-only",
    "misattributed-names",
    "unsourced-numbers",
    "swapped-groups",
    "level-changes",
    "swapped-subjects",
    "wrong-years",
    "wrong-authors",
    "wrong-designs",
    "overstated-correlations",
    "reversed-findings",
    "unsupported-inferences",
    "aims-as-findings",
    "restated-titles",
    "off-question",
    "borrowed-support",
    "unsaid-subjects",
    "borrowed-terms",
    "unsupported-conclusions",
    "opening-connective",
    "left-unanswered",
    "unaddressed-words",
    "untold-subjects",
    "populations-unspoken",
    "cited-off-subject",
    "unmentioned-terms",
    "restated-verdict",
    "contradicted",
    "against-conclusions",
    "against-direction",
    "against-own-words",
    "claim-quote",
    "claim-reverses-quote",
    "claim-opposite-direction",
    "claim-denied-by-article",
    "claim-subject-unsaid",
    "report-prompt-frame",
    "report-uncited",
    "report-unbacked-words",
    "report-misnamed",
    "report-says-nothing",
    "report-citation-only",
    "report-overcounts",
    "report-prompt-talk",
)

if set(DECLARED) != set(ORDER):  # a check declared and not ordered, or ordered and not declared
    raise RuntimeError(
        f"checks declared but not ordered, or the reverse: {set(DECLARED) ^ set(ORDER)}"
    )

#: Every check by id, in order.
REGISTRY: dict[str, Check] = {i: DECLARED[i] for i in ORDER}


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
