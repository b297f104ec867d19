"""A GRADE-style draft of how certain the body of evidence is: for a person to confirm.

The start is set by the designs of the evidence table (randomised trials, and systematic
reviews, high; observational designs low; case series and others very low), then moved down
one level for each concern the job can see, each with its reason and the rows behind it:

* risk of bias: most of the rows' designs are case series, reports or unstated;
* inconsistency: the verifier found conflicting findings, or the rows point different ways;
* imprecision: few studies, or a small total number of participants;
* indirectness: studies whose population or intervention cells do not name what the
  question names.

Nothing here upgrades (large effects, dose response): a reviewer judges those. The result is
labelled a draft everywhere it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from medlit.research.models import LEVELS, Certainty, CertaintyMove, Discrepancy, EvidenceRow, Level
from medlit.research.planner import anchor_terms, on_topic

__all__ = ["LEVELS", "Certainty", "CertaintyMove", "draft_certainty", "render_certainty"]

#: Fewer included studies than this is imprecise.
FEW_STUDIES = 3
#: A smaller total of participants than this is imprecise (GRADE's optimal information size
#: for a dichotomous outcome is of this order).
SMALL_TOTAL_N = 400

_RANDOMISED = {"RCT", "systematic review/meta-analysis"}
_OBSERVATIONAL = {"cohort", "case-control", "cross-sectional"}


def _id(row: EvidenceRow) -> str:
    return row.pmid or row.article_key


def draft_certainty(
    rows: Sequence[EvidenceRow], discrepancies: Sequence[Discrepancy], question: str
) -> Certainty:
    """The draft certainty of the evidence in ``rows`` (see the module docstring)."""
    if not rows:
        return Certainty(start="very low", start_reason="No study was included.", level="very low")
    designs = [r.design for r in rows]
    randomised = [r for r in rows if r.design in _RANDOMISED]
    if randomised and len(randomised) * 2 >= len(rows):
        start: Level = "high"
        why = f"{len(randomised)} of {len(rows)} studies are randomised trials or reviews"
    elif randomised or any(d in _OBSERVATIONAL for d in designs):
        start = "low"
        why = "the evidence is mostly observational"
    else:
        start = "very low"
        why = "no randomised or observational design is stated"
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
    anchors = anchor_terms(question)
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
