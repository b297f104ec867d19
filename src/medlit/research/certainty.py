"""A GRADE-style draft of how certain the body of evidence is: for a person to confirm.

The start is set by the designs of the evidence table's primary studies (randomised trials
high; observational designs low, but high on a risk, diagnosis or frequency question, which
they answer; case series and others very low). A review is not a trial: reviews are left out
of the count, and a table of reviews only starts low (moderate when most pool randomised
trials), saying it rests on reviews. Definition and list questions are not rated ("not
applicable", with why). The start is then moved down one level for each concern the job can
see, each with its reason and the rows behind it:

* risk of bias: most of the rows' designs are case series, reports or unstated;
* inconsistency: the verifier found conflicting findings, or the rows point different ways;
* imprecision: few studies, or a small total number of participants;
* indirectness: studies whose population or intervention cells (and title) keep too few of
  the question's subject words.

Nothing here upgrades (large effects, dose response): a reviewer judges those. The result is
labelled a draft everywhere it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from medlit.research.models import LEVELS, Certainty, CertaintyMove, Discrepancy, EvidenceRow, Level
from medlit.words.frame import QuestionFrame
from medlit.words.topics import anchor_terms, on_topic

__all__ = ["LEVELS", "Certainty", "CertaintyMove", "draft_certainty", "render_certainty"]

#: Fewer included studies than this is imprecise.
FEW_STUDIES = 3
#: A smaller total of participants than this is imprecise (GRADE's optimal information size
#: for a dichotomous outcome is of this order).
SMALL_TOTAL_N = 400

_OBSERVATIONAL = {"cohort", "case-control", "cross-sectional"}


def _id(row: EvidenceRow) -> str:
    return row.pmid or row.article_key


#: Question types certainty does not apply to: a definition or a list is stated, not estimated.
NOT_RATED = {
    "definition": "a definition or description is what the articles state, not an effect "
    "estimated from studies",
    "list": "a list of names is what the articles state, not an effect estimated from studies",
}
#: Question types whose answer comes from observational designs first (GRADE starts test
#: accuracy, prognosis and frequency studies of these designs high).
_OBSERVATIONAL_FIRST = {"risk", "diagnosis", "frequency"}
_REVIEWS = {"systematic review/meta-analysis", "guideline"}
_OF_TRIALS = re.compile(r"\brandomi[sz]ed\b", re.I)


def _start(rows: Sequence[EvidenceRow], kind: str) -> tuple[Level, str]:
    """Where certainty starts: from the designs of the primary studies; a review is not a
    trial, and when the rows are reviews only, the start says it rests on them."""
    primary = [r for r in rows if r.design not in _REVIEWS]
    reviews = len(rows) - len(primary)
    rests = f" ({reviews} review{'s' if reviews != 1 else ''} not counted as studies)"
    if not primary:
        of_trials = [r for r in rows if _OF_TRIALS.search(r.design_quote or r.title)]
        if of_trials and len(of_trials) * 2 >= len(rows):
            return "moderate", f"it rests on {reviews} review(s), not primary studies, " + (
                f"{len(of_trials)} of them of randomised trials"
            )
        return "low", f"it rests on {reviews} review(s), not primary studies"
    rest = rests if reviews else ""
    trials = [r for r in primary if r.design == "RCT"]
    observational = [r for r in primary if r.design in _OBSERVATIONAL]
    if kind in _OBSERVATIONAL_FIRST and len(trials) + len(observational) * 2 >= len(primary):
        n = len(trials) + len(observational)
        return (
            "high",
            f"{n} of {len(primary)} primary studies are cohort, cross-sectional, "
            f"case-control or randomised designs, which answer a {kind} question{rest}",
        )
    if trials and len(trials) * 2 >= len(primary):
        return (
            "high",
            f"{len(trials)} of {len(primary)} primary studies are randomised trials{rest}",
        )
    if trials or observational:
        return "low", f"the primary studies are mostly observational{rest}"
    return "very low", f"no randomised or observational design is stated{rest}"


def draft_certainty(
    rows: Sequence[EvidenceRow], discrepancies: Sequence[Discrepancy], frame: QuestionFrame
) -> Certainty:
    """The draft certainty of the evidence in ``rows`` on the question ``frame`` reads (see
    the module docstring; its kind sets the start); "not applicable", with why, for
    definition and list questions."""
    kind = frame.kind
    if kind in NOT_RATED:
        why = NOT_RATED[kind]
        return Certainty(start="not applicable", start_reason=why, level="not applicable")
    if not rows:
        return Certainty(start="very low", start_reason="No study was included.", level="very low")
    start, why = _start(rows, kind)
    moves: list[CertaintyMove] = []
    weak = [r for r in rows if r.design in {"case series/report", "other"}]
    if start != "very low" and len(weak) * 2 > len(rows):
        moves.append(
            CertaintyMove(
                domain="risk of bias",
                reason=f"{len(weak)} of {len(rows)} studies are case series, reports or of "
                "an unstated design",
                rows=[_id(r) for r in weak],
            )
        )
    keys = {r.article_key for r in rows}
    conflict_rows = sorted(
        {
            s.pmid or s.title
            for d in discrepancies
            for c in d.claims
            for s in c.sources
            if s.pmid and f"pmid:{s.pmid}" in keys
        }
    )
    pointing = {r.direction for r in rows if r.direction in {"supports", "opposes"}}
    if conflict_rows:
        moves.append(
            CertaintyMove(
                domain="inconsistency",
                reason=f"the sources disagree ({len(discrepancies)} conflict"
                f"{'' if len(discrepancies) == 1 else 's'} found by the cross-check)",
                rows=conflict_rows,
            )
        )
    elif len(pointing) > 1:
        moves.append(
            CertaintyMove(
                domain="inconsistency",
                reason="the studies' conclusions point different ways",
                rows=[_id(r) for r in rows if r.direction in {"supports", "opposes"}],
            )
        )
    total = sum(r.n for r in rows if r.n is not None)
    if len(rows) < FEW_STUDIES or total < SMALL_TOTAL_N:
        why_imprecise = (
            f"{len(rows)} stud{'y' if len(rows) == 1 else 'ies'}" if len(rows) < FEW_STUDIES else ""
        )
        if total < SMALL_TOTAL_N:
            told = f"{total} participants stated" if total else "no study states its size"
            why_imprecise = f"{why_imprecise}; {told}" if why_imprecise else told
        moves.append(
            CertaintyMove(domain="imprecision", reason=why_imprecise, rows=[_id(r) for r in rows])
        )
    # The question's own words, not the fewer the frame asks about (asked_terms): on the
    # reworded questions (benchmarks/evidence_table.py, check half) those moved down 5 fewer
    # rows, every one off the question's subject and outcome.
    anchors = anchor_terms(frame.question)
    indirect = [
        r
        for r in rows
        if (cells := [c.text for c in (r.population, r.intervention) if c is not None])
        and not on_topic(" ".join(cells) + " " + r.title, anchors)
    ]
    if indirect:
        moves.append(
            CertaintyMove(
                domain="indirectness",
                reason="the population or intervention of these studies is not what the "
                "question names",
                rows=[_id(r) for r in indirect],
            )
        )
    index = min(LEVELS.index(start) + len(moves), len(LEVELS) - 1)
    return Certainty(start=start, start_reason=why, level=LEVELS[index], moves=moves)


def render_certainty(certainty: Certainty) -> list[str]:
    """The draft as Markdown lines."""
    out = [
        "## Certainty of the evidence (draft)",
        "",
    ]
    if certainty.level == "not applicable":
        return [*out, f"> Certainty: **not applicable**: {certainty.start_reason}.", ""]
    out += [
        f"> **{certainty.label}.** Certainty: **{certainty.level}** "
        f"(start {certainty.start}: {certainty.start_reason}).",
        "",
    ]
    for move in certainty.moves:
        rows = ", ".join(move.rows[:12]) + (" ..." if len(move.rows) > 12 else "")
        out.append(f"- Down for {move.domain}: {move.reason} (studies: {rows}).")
    if not certainty.moves:
        out.append("- No concern found that moves it down; a reviewer should still check.")
    out.append("")
    return out
