"""The research report's summary and sections held to its verified facts.

The sentence-level checking (:mod:`medlit.checks`' :func:`ground_text`) is the checks'; what
is here knows the report's facts and references: the words each reference number stands
behind, the summary when no drafted sentence survives, and a section's fallback.
"""

from __future__ import annotations

from collections.abc import Collection

from medlit.checks import GroundedSummary, ground_text
from medlit.research.models import Discrepancy, Reference, VerifiedFact
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import question_parts, topic_words
from medlit.words.search_plan import asked_terms
from medlit.words.topics import normalise_topic

__all__ = [
    "fact_support",
    "facts_as_found",
    "ground_summary",
    "not_answered",
    "same_finding",
    "section_fallback",
]


def _cited_statement(fact: VerifiedFact, numbers: dict[str, int]) -> str:
    """A fact's statement with its report references: "Aspirin cut stroke [1] [3]"."""
    from medlit.research.synthesizer import reference_numbers

    refs = reference_numbers(fact.sources, numbers)
    return fact.statement.rstrip(". ") + "".join(f" [{n}]" for n in refs)


def not_answered(facts: list[VerifiedFact], numbers: dict[str, int], limit: int = 3) -> str:
    """The summary of a report whose evidence does not answer the question."""
    text = "The evidence found does not answer this question."
    if facts:
        text += " What the retrieved articles do show: " + _listed(facts, numbers, limit) + "."
    return text


def _listed(facts: list[VerifiedFact], numbers: dict[str, int], limit: int) -> str:
    """Up to ``limit`` facts with their references, one finding read for two sub-questions
    once (:func:`same_finding`)."""
    shown: list[VerifiedFact] = []
    for fact in facts:
        if len(shown) < limit and not any(same_finding(fact, other) for other in shown):
            shown.append(fact)
    return "; ".join(_cited_statement(fact, numbers) for fact in shown)


def fact_support(
    facts: list[VerifiedFact],
    references: list[Reference],
    numbers: dict[str, int],
    discrepancies: list[Discrepancy] = (),  # type: ignore[assignment]
) -> dict[int, set[str]]:
    """The words each reference number stands behind: its title and its facts' statements."""
    from medlit.research.synthesizer import citation_key

    support: dict[int, set[str]] = {r.number: topic_words(r.title) for r in references}
    statements = [(f.statement, f.sources) for f in facts]
    statements += [(c.claim, c.sources) for d in discrepancies for c in d.claims]
    for statement, sources in statements:
        words = topic_words(statement)
        for source in sources:
            number = numbers.get(citation_key(source))
            if number is not None:
                support.setdefault(number, set()).update(words)
    return support


def ground_summary(
    summary: str,
    frame: QuestionFrame,
    facts: list[VerifiedFact],
    numbers: dict[str, int],
    support: dict[int, set[str]],
    disabled: Collection[str] = (),
) -> GroundedSummary:
    """Keep the sentences of ``summary`` that rest on the facts they cite (see module doc).

    Args:
        summary: the model's executive summary, citations already cleaned.
        frame: the research question's frame (the words it asks about are checked).
        facts: the verified facts the summary was written from.
        numbers: reference number by article key.
        support: what each reference stands behind (:func:`fact_support`), shared with the
            sections' check.
        disabled: ids of checks not to run.
    """
    grounded = ground_text(summary, frame, support, disabled)
    if grounded.answered:
        return grounded
    asks = question_parts(frame.question)
    # The whole question as its frame reads it; each ask of a question asking two things as
    # the frame reads that part (its subject, the concepts the part names, its own words).
    parts = [asked_terms(frame), *(asked_terms(frame, ask) for ask in asks[1:])]
    # Which of the question's parts (the whole, then each ask) each fact speaks of.
    speaks = [[_on_question(fact, part, numbers) for part in parts] for fact in facts]
    on_question = [fact for fact, said in zip(facts, speaks, strict=True) if any(said)]
    if not on_question:
        return GroundedSummary(not_answered(facts, numbers), grounded.removed, answered=False)
    text = facts_as_found(on_question, numbers)
    # A two-part question whose facts answer one part: the other is said to be unanswered,
    # not passed over (the reader would take silence for an answer).
    unanswered = [ask for i, ask in enumerate(asks[1:], 1) if not any(s[i] for s in speaks)]
    if unanswered:
        text += " The evidence found does not answer the rest of the question: " + "; ".join(
            f"{ask}?" for ask in unanswered
        )
    return GroundedSummary(text, grounded.removed)


def _on_question(fact: VerifiedFact, anchors: set[str], numbers: dict[str, int]) -> bool:
    """Whether a fact with references speaks, with the title of one of its sources, of the
    question's whole subject: every subject word of the question (one may be missing from four
    or more)."""
    from medlit.research.synthesizer import reference_numbers

    if not reference_numbers(fact.sources, numbers):
        return False
    said = set(normalise_topic(fact.statement).split())
    allowed = 1 if len(anchors) >= 4 else 0
    return any(
        len(anchors - said - set(normalise_topic(source.title or "").split())) <= allowed
        for source in fact.sources
    )


#: Share of two statements' words (of the words either uses) they must share to be read as
#: one finding (see :func:`same_finding`).
SAME_FINDING = 0.8


def same_finding(fact: VerifiedFact, other: VerifiedFact) -> bool:
    """Whether ``fact`` says what ``other`` says, resting on sources ``other`` also cites.

    One article's finding is often read for two sub-questions, worded nearly alike ("X is
    not a prognostic factor in Y" and "X is not a prognostic factor in Y patients").
    """
    keys = {(c.pmid, c.doi, c.title) for c in other.sources}
    if not {(c.pmid, c.doi, c.title) for c in fact.sources} <= keys:
        return False
    words = set(normalise_topic(fact.statement).split())
    others = set(normalise_topic(other.statement).split())
    return len(words & others) >= SAME_FINDING * len(words | others)


def facts_as_found(facts: list[VerifiedFact], numbers: dict[str, int], limit: int = 3) -> str:
    """The summary of a report none of whose drafted sentences rests on a fact, when some
    facts speak of the question's subject: those facts, as verified (the sentences left out are
    the Limitations' business, not the reader's first line)."""
    return (
        "The summary below lists the verified findings directly: "
        + _listed(facts, numbers, limit)
        + "."
    )


def section_fallback(facts: list[VerifiedFact], numbers: dict[str, int]) -> str:
    """A section none of whose drafted sentences rests on a fact: the facts themselves."""
    from medlit.research.synthesizer import reference_numbers

    # A fact whose every source is unknown to the report is not shown.
    lines = [
        _cited_statement(fact, numbers) + "."
        for fact in facts
        if reference_numbers(fact.sources, numbers)
    ]
    if not lines:
        return "No finding on this topic could be confirmed in the articles' text."
    return "The verified findings on this topic: " + " ".join(lines)
