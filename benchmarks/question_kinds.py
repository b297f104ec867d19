"""How well does the question-type reader (:func:`medlit.words.question_kind`) read real questions?

::

    python benchmarks/question_kinds.py [--half tune|check|both] [--misses] [--compare OLD/src]

The questions and their hand labels are ``benchmarks/data/question_kinds.tsv`` (labelled from
the question alone before the reader was run; the header says how): PubMedQA titles named by
PMID in ``pqal_dev.json`` and consumer questions named by their line in ``mqp_dev.csv``, both
read from ``../shared/data``. Each question is in the *tune* or the *check* half by the hash
split of :func:`pubmedqa_cases.half_of`: of the PMID for PubMedQA, of the question's text for
MQP. Cues are written from the tune half only (``--misses`` lists the misses of the halves
measured); the check half says how they read questions they were not written from.

Printed per half: accuracy, each type's precision, recall and support, and the confusion
(rows: the label, columns: the type read). ``--compare OLD/src`` reads every question with
another version's reader too (a child process with that ``src`` on its path), in the same run.

Last line: ``n=N accuracy=F`` and each type's ``recall_KIND=F`` (each suffixed ``_tune`` and
``_check`` with both halves; with ``--compare`` also ``old_accuracy=F``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlit.words.question_kind import QUESTION_KINDS, question_kind
from pubmedqa_cases import add_half, both_halves, half_of

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks/data/question_kinds.tsv"
SHARED = ROOT.parent / "shared/data"


@dataclass(frozen=True)
class Labelled:
    """One question with its hand label and its half."""

    ref: str
    question: str
    kind: str
    half: str


def load(labels: Path, shared: Path, allowed: Iterable[str] = QUESTION_KINDS) -> list[Labelled]:
    """The labelled questions, their text read from the shared data by reference; each label
    one of ``allowed`` (a type by default)."""
    allowed = tuple(allowed)
    pubmedqa = json.loads((shared / "pubmedqa/pqal_dev.json").read_text())
    with (shared / "mqp/mqp_dev.csv").open(newline="") as handle:
        mqp = [row[1] for row in csv.reader(handle)]
    out: list[Labelled] = []
    for line in labels.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        ref, kind = line.split("\t")
        source, _, key = ref.partition(":")
        if kind not in allowed:
            raise SystemExit(f"{labels}: {ref} has an unknown label {kind!r}")
        if source == "pubmedqa":
            question, half = pubmedqa[key]["QUESTION"], half_of(key)
        elif source == "mqp":
            question = mqp[int(key) - 1]
            half = half_of(question)
        else:
            raise SystemExit(f"{labels}: {ref} names an unknown source")
        out.append(Labelled(ref, question, kind, half))
    return out


_OLD_READER = (
    "import json, sys\n"
    "from medlit.words.question_kind import question_kind\n"
    "print(json.dumps([question_kind(q) for q in json.load(sys.stdin)]))\n"
)


def read_with(src: Path, questions: list[str], reader: str = _OLD_READER) -> list[str]:
    """What another version's reader (its ``src``) reads in ``questions``: their types, or
    what the child script ``reader`` prints for the JSON list on its stdin."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", reader],
        input=json.dumps(questions),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return list(json.loads(done.stdout))


def per_label(
    pairs: list[tuple[str, str]], labels: Sequence[str], title: str
) -> dict[str, tuple[int, int, int]]:
    """Print each label's support, how often it is read, its precision and recall, of (label,
    read) pairs; each label's (support, read, right)."""
    confusion = Counter(pairs)
    print(f"{title:<12}{'support':>8}{'read':>6}{'precision':>11}{'recall':>8}")
    counts: dict[str, tuple[int, int, int]] = {}
    for kind in labels:
        support = sum(label == kind for label, _ in pairs)
        read = sum(r == kind for _, r in pairs)
        hit = confusion[(kind, kind)]
        precision = f"{hit / read:.2f}" if read else "-"
        recall = f"{hit / support:.2f}" if support else "-"
        print(f"{kind:<12}{support:>8}{read:>6}{precision:>11}{recall:>8}")
        counts[kind] = (support, read, hit)
    return counts


def print_confusion(pairs: list[tuple[str, str]], labels: Sequence[str], width: int = 5) -> None:
    """Print the confusion of (label, read) pairs: rows the label, columns what was read."""
    confusion = Counter(pairs)
    print("label \\ read " + "".join(f"{k[:width]:>7}" for k in labels))
    for label in labels:
        cells = "".join(f"{confusion[(label, read)] or '.':>7}" for read in labels)
        print(f"{label:<13}{cells}")


def print_misses(cases: list[Labelled], read: list[str], width: int = 10, ref: int = 16) -> None:
    """Print the questions whose label is not what was read."""
    print("\nmisread (label <- read):")
    for case, label in zip(cases, read, strict=True):
        if label != case.kind:
            print(
                f"  {case.kind:<{width}} <- {label:<{width}} {case.ref:<{ref}} {case.question[:90]}"
            )


def _table(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """Print precision, recall and the confusion of (label, read) pairs; the figures."""
    n = len(pairs)
    right = sum(label == read for label, read in pairs)
    figures = {"n": float(n), "accuracy": right / n if n else 0.0}
    for kind, (support, _, hit) in per_label(pairs, QUESTION_KINDS, "type").items():
        if support:
            figures[f"recall_{kind}"] = hit / support
    print(f"\naccuracy {right}/{n} = {figures['accuracy']:.3f}\n")
    print_confusion(pairs, QUESTION_KINDS)
    return figures


def labelled_half(
    argv: list[str] | None, doc: str, labels: Path, allowed: Iterable[str] = QUESTION_KINDS
) -> tuple[argparse.Namespace, list[Labelled]] | None:
    """The options (``--labels --data --misses --compare --half``) of a labelled-question
    benchmark described by ``doc`` and the labelled questions of the half asked; ``None``
    (said) without the shared data."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=labels, help="The labelled TSV.")
    parser.add_argument("--data", type=Path, default=SHARED, help="../shared/data.")
    parser.add_argument("--misses", action="store_true", help="List the questions misread.")
    parser.add_argument("--compare", type=Path, default=None, help="Another version's src.")
    add_half(parser)
    args = parser.parse_args(argv)
    if not (args.data / "pubmedqa/pqal_dev.json").exists():
        print(f"no PubMedQA data under {args.data}")
        return None
    cases = [c for c in load(args.labels, args.data, allowed) if c.half == args.half]
    print(f"{len(cases)} questions of the {args.half} half")
    return args, cases


@both_halves
def main(argv: list[str] | None = None) -> int:
    """Read the labelled questions of one half; print the tables and the figures."""
    chosen = labelled_half(argv, __doc__, LABELS)
    if chosen is None:
        return 2
    args, cases = chosen
    read = [question_kind(c.question) for c in cases]
    figures = _table([(c.kind, r) for c, r in zip(cases, read, strict=True)])
    if args.compare is not None:
        old = read_with(args.compare.resolve(), [c.question for c in cases])
        right = sum(c.kind == o for c, o in zip(cases, old, strict=True))
        figures["old_accuracy"] = right / len(cases) if cases else 0.0
        changed = sum(o != r for o, r in zip(old, read, strict=True))
        print(f"\nold reader ({args.compare}): accuracy {right}/{len(cases)}; {changed} read anew")
    if args.misses:
        print_misses(cases, read)
    print(" ".join(f"{k}={v:.0f}" if k == "n" else f"{k}={v:.3f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
