"""How well does the question frame read the direction a question asks?

::

    python benchmarks/question_directions.py [--half tune|check|both] [--misses] [--compare OLD/src]

The questions and their hand labels are ``benchmarks/data/question_directions.tsv`` (labelled
from the question alone before the reader was run on them; the header says how): PubMedQA titles
named by PMID in ``pqal_dev.json`` and consumer questions named by their line in
``mqp_dev.csv``, both read from ``../shared/data``, split into halves as
:mod:`question_kinds` does. The direction read is
:func:`medlit.words.frame.read_frame` ``(q).direction`` (``none`` for ``None``); its cues are
written from the tune half only (``--misses`` lists the misses of the halves measured).

Printed per half: accuracy, each direction's precision, recall and support, and the confusion
(rows: the label, columns: the direction read). ``--compare OLD/src`` reads every question with
another version's frame too (a child process with that ``src`` on its path), in the same run.

Last line: ``n=N accuracy=F`` with ``precision_D=F recall_D=F`` of each direction ``D`` asked
(up, down, better, worse: the ones a verdict is turned by) and ``turned_wrongly=N`` (questions
read with a direction other than the label's: a verdict turned where it should not be); with
``--compare`` also ``old_accuracy=F old_turned_wrongly=N``. Each suffixed ``_tune`` and
``_check`` with both halves.
"""

from __future__ import annotations

import sys
from pathlib import Path

from medlit.words.frame import read_frame
from pubmedqa_cases import both_halves
from question_kinds import labelled_half, per_label, print_confusion, print_misses
from question_kinds import read_with as read_kinds_with

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks/data/question_directions.tsv"
DIRECTIONS = ("up", "down", "better", "worse", "none")

_OLD_READER = (
    "import json, sys\n"
    "from medlit.words.frame import read_frame\n"
    "print(json.dumps([read_frame(q).direction or 'none' for q in json.load(sys.stdin)]))\n"
)


def read_with(src: Path, questions: list[str]) -> list[str]:
    """The directions another version's frame (its ``src``) reads in ``questions``."""
    return read_kinds_with(src, questions, _OLD_READER)


def turned_wrongly(pairs: list[tuple[str, str]]) -> int:
    """How many questions are read with a direction that is not the one asked."""
    return sum(read != "none" and read != label for label, read in pairs)


def _table(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """Print precision, recall and the confusion of (label, read) pairs; the figures."""
    n = len(pairs)
    right = sum(label == read for label, read in pairs)
    figures = {"n": float(n), "accuracy": right / n if n else 0.0}
    for direction, (support, read, hit) in per_label(pairs, DIRECTIONS, "direction").items():
        if direction != "none":
            figures[f"precision_{direction}"] = hit / read if read else 0.0
            figures[f"recall_{direction}"] = hit / support if support else 0.0
    figures["turned_wrongly"] = float(turned_wrongly(pairs))
    print(f"\naccuracy {right}/{n} = {figures['accuracy']:.3f}; ", end="")
    print(f"read with a direction not asked: {figures['turned_wrongly']:.0f}\n")
    print_confusion(pairs, DIRECTIONS, width=7)
    return figures


def _figure(name: str, value: float) -> str:
    counted = name in ("n", "turned_wrongly", "old_turned_wrongly")
    return f"{name}={value:.0f}" if counted else f"{name}={value:.3f}"


@both_halves
def main(argv: list[str] | None = None) -> int:
    """Read the labelled questions of one half; print the tables and the figures."""
    chosen = labelled_half(argv, __doc__, LABELS, DIRECTIONS)
    if chosen is None:
        return 2
    args, cases = chosen
    read = [read_frame(c.question).direction or "none" for c in cases]
    figures = _table([(c.kind, r) for c, r in zip(cases, read, strict=True)])
    if args.compare is not None:
        old = read_with(args.compare.resolve(), [c.question for c in cases])
        right = sum(c.kind == o for c, o in zip(cases, old, strict=True))
        figures["old_accuracy"] = right / len(cases) if cases else 0.0
        figures["old_turned_wrongly"] = float(
            turned_wrongly([(c.kind, o) for c, o in zip(cases, old, strict=True)])
        )
        changed = sum(o != r for o, r in zip(old, read, strict=True))
        print(f"\nold reader ({args.compare}): accuracy {right}/{len(cases)}; {changed} read anew")
    if args.misses:
        print_misses(cases, read, width=7, ref=18)
    print(" ".join(_figure(k, v) for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
