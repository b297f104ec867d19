"""Does the evidence digest follow the evidence or the question's wording? A contrast set.

Each PubMedQA PQA-L question (``../shared/data/pubmedqa/pqal_dev.json``) whose frame asks a
direction (:func:`medlit.words.frame.read_frame`) is asked three ways over the same articles
(its own and the :data:`NEAREST` records saying most of its words, as a search returns them):

- *as written*, judged against the expert label;
- *turned*: its direction word swapped for the opposite (:data:`TURNS`: reduce -> increase,
  prevent -> cause, improve -> worsen ...), kept only where the frame reads the turned
  question as asking the opposite direction (a turn that garbles the question is no probe).
  Where the expert said yes, the articles say the opposite of the turned question: a "yes"
  to it is wrong (``turned_yes``);
- *population changed*: a population the articles do not speak of put in its place (or added):
  a "yes" is a verdict on people no article studied (``moved_yes``).

The research evidence table's row of the question's own article is read too
(:func:`medlit.research.evidence_table.conclusion_direction`): of the yes-gold questions, how
many rows point "supports" as written (``row_supports_written``) and turned
(``row_supports_turned``: a research verdict of yes to the turned question).

Reported per half (tune: the frame's cues were written from it; check: unseen), for the
default policy (two agreeing sources, or one systematic review/RCT) and the single-source
reading (``min_sources=1``): verdicts given, their precision on the as-written questions, and
the yes counts of the turned and population-changed forms.

Usage::

    python benchmarks/turned_questions.py --data ../shared/data/pubmedqa/pqal_dev.json [--half]

The old code on the same set: ``--write set.json`` with this code, then ``--set set.json`` with
``PYTHONPATH`` on the old code's ``src`` (a worktree of it).

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
from medlit.words.frame import OPPOSITE, read_frame
from medlit.words.grounding import word_stems

try:
    from medlit.digest import build_evidence_digest
except ImportError:  # the code before the digest moved (run with --set, PYTHONPATH on it)
    from medlit.llm import build_evidence_digest  # type: ignore[attr-defined,no-redef]
from pubmedqa_cases import add_half, both_halves, in_half

try:
    from medlit.research.evidence_table import conclusion_direction
except ImportError:  # the code before it was named (run with --set, PYTHONPATH on it)
    from medlit.research.evidence_table import (  # type: ignore[attr-defined,no-redef]
        _direction as conclusion_direction,
    )

NEAREST = 4
#: A direction's words and their opposite, longest first (the first that matches is turned).
TURNS = (
    ("associated with increased", "associated with reduced"),
    ("associated with reduced", "associated with increased"),
    ("increased risk", "reduced risk"),
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
    ("preventing", "causing"),
    ("prevent", "cause"),
    ("improves", "worsens"),
    ("improving", "worsening"),
    ("improve", "worsen"),
    ("relieve", "increase"),
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
    """``question`` with the direction its frame reads turned, or None when no turn applies,
    or the turned question does not ask the opposite direction (its frame reads another, or
    none: "... in worsening symptoms and long-term benefits" asks both ways)."""
    frame = read_frame(question)
    for words, opposite in TURNS:
        if not frame.direction or not frame.direction_words.startswith(words):
            continue
        asked = frame.direction_words
        pattern = re.compile(rf"\b{re.escape(asked)}\b", re.IGNORECASE)
        turn = pattern.sub(asked.replace(words, opposite, 1), question, count=1)
        return turn if read_frame(turn).direction == OPPOSITE[frame.direction] else None
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


def evaluate(
    rows: list[tuple[str, ...]], every: dict[str, Any], min_sources: int, show: bool = False
) -> dict[str, Any]:
    """Verdicts given and right on the questions as written; yes to the turned (where the
    experts said yes) and to the moved ones."""
    said = {p: word_stems(f"{r['QUESTION']} {' '.join(r['CONTEXTS'])}") for p, r in every.items()}
    counts = dict.fromkeys(
        ("given", "right", "turned_yes", "yes_gold", "moved_yes", "row_written", "row_turned"), 0
    )

    def verdict(question: str, evidence: list[Any]) -> str | None:
        return build_evidence_digest(question, evidence, min_sources=min_sources).verdict

    for pmid, gold, question, turn, move in rows:
        others = nearest_others(question, pmid, said, NEAREST)
        evidence = [e for p in (pmid, *others) for e in record_evidence(p, every[p])]
        written = verdict(question, evidence)
        counts["given"] += written in ("yes", "no")
        counts["right"] += written in ("yes", "no") and written == gold
        if gold == "yes":
            counts["yes_gold"] += 1
            # The research table's row of the question's own article: which way it points.
            own = evidence[0].article
            counts["row_written"] += conclusion_direction(question, own)[0] == "supports"
            counts["row_turned"] += conclusion_direction(turn, own)[0] == "supports"
            if verdict(turn, evidence) == "yes":
                counts["turned_yes"] += 1
                print(f"  turned yes: {turn} [{pmid}]" if show else "", end="\n" if show else "")
        if verdict(move, evidence) == "yes":
            counts["moved_yes"] += 1
            print(f"  moved yes: {move} [{pmid}]" if show else "", end="\n" if show else "")
    counts["precision"] = counts["right"] / counts["given"] if counts["given"] else 0.0
    return counts


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print every turned 'yes'")
    parser.add_argument("--write", type=Path, help="write the contrast set (JSON) and stop")
    parser.add_argument("--set", type=Path, help="read the contrast set (JSON), e.g. for old code")
    add_half(parser)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    every = json.loads(args.data.read_text())
    if args.write:
        args.write.write_text(json.dumps(contrast_set(every), indent=0))
        return 0
    mine = in_half(every, args.half)
    if args.set:
        rows = [tuple(r) for r in json.loads(args.set.read_text()) if r[0] in mine]
    else:
        rows = contrast_set(mine)
    print(f"{len(rows)} questions with a direction to turn\n")
    print(
        f"{'policy':14} {'given':>6} {'right':>6} {'precision':>10} {'turned_yes':>11} "
        f"{'of_yes_gold':>12} {'moved_yes':>10}"
    )
    figures: dict[str, Any] = {}
    for name, min_sources in (("single-source", 1), ("default", 2)):
        c = evaluate(rows, every, min_sources, args.show)
        print(
            f"{name:14} {c['given']:>6} {c['right']:>6} {c['precision']:>10.3f} "
            f"{c['turned_yes']:>11} {c['yes_gold']:>12} {c['moved_yes']:>10}"
        )
        suffix = "" if name == "default" else "_single"
        for key in ("given", "precision", "turned_yes", "moved_yes"):
            figures[key + suffix] = c[key]
        if name == "default":  # the research rows do not depend on the digest's policy
            figures["row_supports_written"] = c["row_written"]
            figures["row_supports_turned"] = c["row_turned"]
    print(
        "\n"
        + " ".join(
            f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
