"""Does the evidence digest follow the evidence or the question's wording? A contrast set.

Each PubMedQA PQA-L question (``../shared/data/pubmedqa/pqal_dev.json``) whose frame asks a
direction (:func:`medlit.words.frame.read_frame`) is asked three ways over the same articles
(its own and the :data:`NEAREST` records saying most of its words, as a search returns them):

- *as written*, judged against the expert label;
- *turned*: its direction word swapped for the opposite (:data:`TURNS`: reduce -> increase,
  prevent -> cause, improve -> worsen ...). Where the expert said yes, the articles say the
  opposite of the turned question: a "yes" to it is wrong (``turned_yes``);
- *population changed*: a population the articles do not speak of put in its place (or added):
  a "yes" is a verdict on people no article studied (``moved_yes``).

Reported per half (tune: the frame's cues were written from it; check: unseen), for the
default policy (two agreeing sources, or one systematic review/RCT) and the single-source
reading (``min_sources=1``): verdicts given, their precision on the as-written questions, and
the yes counts of the turned and population-changed forms.

Usage::

    python benchmarks/turned_questions.py --data ../shared/data/pubmedqa/pqal_dev.json [--half]

Last line: ``precision_check=... turned_yes_check=... moved_yes_check=...`` (tune likewise).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from digest_verdicts import DEFAULT_DATA, nearest_others, record_evidence
from medlit.checks.grounding import word_stems
from medlit.digest import build_evidence_digest
from medlit.words.frame import read_frame
from pubmedqa_cases import add_half, both_halves, in_half

NEAREST = 4
#: A direction's words and their opposite, longest first (the first that matches is turned).
TURNS = (
    ("associated with increased", "associated with reduced"),
    ("associated with reduced", "associated with increased"),
    ("increased risk", "reduced risk"),
    ("be prevented", "be caused"),
    ("be improved", "be worsened"),
    ("adversely affect", "improve"),
    ("predispose", "protect"),
    ("reduces", "increases"),
    ("reducing", "increasing"),
    ("reduce", "increase"),
    ("decreases", "increases"),
    ("decrease", "increase"),
    ("increases", "reduces"),
    ("increase", "reduce"),
    ("prevents", "causes"),
    ("prevent", "cause"),
    ("improves", "worsens"),
    ("improving", "worsening"),
    ("improve", "worsen"),
    ("relieve", "worsen"),
    ("enhance", "impair"),
    ("benefit", "harm"),
    ("lower", "higher"),
    ("induce", "prevent"),
    ("cause", "prevent"),
    ("damage", "protect"),
    ("harmful", "beneficial"),
)
#: A population named, and one put in its place (none of them: "in children" is added).
MOVES = (
    ("children", "older adults"),
    ("infants", "older adults"),
    ("elderly", "children"),
    ("older", "young"),
    ("women", "men"),
    ("pregnancy", "childhood"),
    ("adults", "children"),
)


def turned(question: str) -> str | None:
    """``question`` with the direction its frame reads turned, or None when no turn applies."""
    asked = read_frame(question).direction_words
    for words, opposite in TURNS:
        if not asked.startswith(words):
            continue
        pattern = re.compile(rf"\b{re.escape(asked)}\b", re.IGNORECASE)
        return pattern.sub(asked.replace(words, opposite, 1), question, count=1)
    return None


def moved(question: str) -> str:
    """``question`` asked of another population: its own swapped, or "in children" added."""
    for words, other in MOVES:
        pattern = re.compile(rf"\b{words}\b", re.IGNORECASE)
        if pattern.search(question):
            return pattern.sub(other, question, count=1)
    return question.rstrip(" ?") + " in children?"


def contrast_set(records: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(pmid, gold, as written, turned, moved) for each question with a direction to turn."""
    rows = []
    for pmid, record in sorted(records.items()):
        question = str(record["QUESTION"])
        turn = turned(question)
        if read_frame(question).direction is None or turn is None:
            continue
        rows.append((pmid, str(record["final_decision"]), question, turn, moved(question)))
    return rows


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print every turned 'yes'")
    add_half(parser)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    every = json.loads(args.data.read_text())
    said = {p: word_stems(f"{r['QUESTION']} {' '.join(r['CONTEXTS'])}") for p, r in every.items()}
    rows = contrast_set(in_half(every, args.half))
    print(f"{len(rows)} questions with a direction to turn\n")
    print(
        f"{'policy':14} {'given':>6} {'right':>6} {'precision':>10} {'turned_yes':>11} "
        f"{'of_yes_gold':>12} {'moved_yes':>10}"
    )
    figures: dict[str, float] = {}
    for name, min_sources in (("single-source", 1), ("default", 2)):
        given = right = turned_yes = yes_gold = moved_yes = 0
        for pmid, gold, question, turn, move in rows:
            evidence = [
                e
                for p in (pmid, *nearest_others(question, pmid, said, NEAREST))
                for e in record_evidence(p, every[p])
            ]
            verdict = build_evidence_digest(question, evidence, min_sources=min_sources).verdict
            if verdict in ("yes", "no"):
                given += 1
                right += verdict == gold
            if gold == "yes":
                yes_gold += 1
                if build_evidence_digest(turn, evidence, min_sources=min_sources).verdict == "yes":
                    turned_yes += 1
                    if args.show:
                        print(f"  turned yes: {turn} [{pmid}]")
            if build_evidence_digest(move, evidence, min_sources=min_sources).verdict == "yes":
                moved_yes += 1
                if args.show:
                    print(f"  moved yes: {move} [{pmid}]")
        precision = right / given if given else 0.0
        print(
            f"{name:14} {given:>6} {right:>6} {precision:>10.3f} {turned_yes:>11} "
            f"{yes_gold:>12} {moved_yes:>10}"
        )
        if name == "default":
            figures = {
                "given": given,
                "precision": precision,
                "turned_yes": turned_yes,
                "moved_yes": moved_yes,
            }
        else:
            figures_single = {"precision_single": precision, "turned_yes_single": turned_yes}
    figures.update(figures_single)
    print(
        "\n"
        + " ".join(
            f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
