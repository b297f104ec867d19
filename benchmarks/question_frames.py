"""How well does the question frame read what a question asks about: its subject and outcome?

::

    python benchmarks/question_frames.py [--half tune|check|both] [--misses] [--compare OLD/src]

The questions and their hand labels are ``benchmarks/data/question_frames.tsv`` (labelled from
the question alone before any reader was run on them; the header says how): PubMedQA titles
named by PMID in ``pqal_dev.json``, consumer questions named by their line in ``mqp_dev.csv``
(both read from ``../shared/data``) and questions written in a specialist's voice (their text
in the TSV), split into halves as :mod:`question_kinds` does (by the PMID's hash; an MQP
question's by its text's). What is read is :func:`medlit.words.frame.read_frame` ``(q)``'s
``.subject`` and ``.outcome``. ``--reworded`` reads the labelled rewordings of
``reworded_questions.tsv`` instead (plain and expert-phrased questions; their shape is their style).

A reading is *right* when it equals one of the label's ``|``-separated alternatives, both
lower-cased, with the articles (a, an, the) and the spaces around the words dropped; an empty
label is right only when nothing is read. It is *near* (the lenient match, reported apart) when
it is right, or when the label's content words (the words but the articles and linking words:
of, in, for, with, and, or, to, ...) are all in the reading and the reading has at most one
content word more.

Printed per half: how many subjects and outcomes are right and near, the same by the question's
shape, and (``--misses``) each question misread. ``--compare OLD/src`` reads every question with
another version's frame too (a child process with that ``src`` on its path), in the same run,
its figures printed beside the current ones.

Last line: ``n=N subject=F outcome=F subject_near=F outcome_near=F`` (with ``--compare`` also
``old_subject=F old_outcome=F old_subject_near=F old_outcome_near=F``), each suffixed ``_tune``
and ``_check`` with both halves.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from medlit.words.frame import read_frame
from pubmedqa_cases import add_half, both_halves, half_of
from question_kinds import read_with as read_kinds_with

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "benchmarks/data/question_frames.tsv"
REWORDED = ROOT / "benchmarks/data/reworded_questions.tsv"
SHARED = ROOT.parent / "shared/data"
FIELDS = ("subject", "outcome")

_ARTICLES = frozenset({"a", "an", "the"})
_LINKING = _ARTICLES | frozenset(
    {"of", "in", "on", "for", "with", "without", "and", "or", "to", "from", "by", "at", "as"}
)
_WORD = re.compile(r"[a-z0-9]+(?:['/.:-][a-z0-9]+)*")

_OLD_READER = (
    "import json, sys\n"
    "from medlit.words.frame import read_frame\n"
    "frames = [read_frame(q) for q in json.load(sys.stdin)]\n"
    "print(json.dumps([[f.subject or '', f.outcome or ''] for f in frames]))\n"
)


@dataclass(frozen=True)
class Labelled:
    """One question with its hand-labelled subject and outcome (``|`` between alternatives)."""

    ref: str
    half: str
    shape: str
    question: str
    subject: str
    outcome: str

    def label(self, field: str) -> str:
        return self.subject if field == "subject" else self.outcome


def _words(phrase: str) -> list[str]:
    return _WORD.findall(phrase.lower())


def normal(phrase: str) -> str:
    """``phrase`` lower-cased, its articles dropped, its words joined by one space."""
    return " ".join(w for w in phrase.lower().split() if w not in _ARTICLES).strip(" ,.;:?")


def right(label: str, read: str) -> bool:
    """Whether ``read`` equals one of the alternatives of ``label`` (normalised)."""
    if not label:
        return not read.strip()
    return normal(read) in {normal(alt) for alt in label.split("|")}


def near(label: str, read: str) -> bool:
    """Whether ``read`` is right, or holds all the content words of an alternative of
    ``label`` and at most one content word more (the lenient match)."""
    if right(label, read) or not label or not read.strip():
        return right(label, read)
    said = [w for w in _words(read) if w not in _LINKING]
    for alt in label.split("|"):
        wanted = {w for w in _words(alt) if w not in _LINKING}
        if wanted and wanted <= set(said) and len(said) - len(wanted) <= 1:
            return True
    return False


def load(labels: Path, shared: Path) -> list[Labelled]:
    """The labelled questions, the text of PubMedQA and MQP ones read from the shared data by
    reference; a half that is not the project's split for its source is refused."""
    pubmedqa = json.loads((shared / "pubmedqa/pqal_dev.json").read_text())
    with (shared / "mqp/mqp_dev.csv").open(newline="") as handle:
        mqp = [row[1] for row in csv.reader(handle)]
    lines = [ln for ln in labels.read_text().splitlines() if ln.strip() and ln[0] != "#"]
    out: list[Labelled] = []
    for line in lines[1:]:
        _id, ref, half, shape, question, subject, outcome, _pops = line.split("\t")
        source, _, key = ref.partition(":")
        if source == "pubmedqa":
            question, split = pubmedqa[key]["QUESTION"], half_of(key)
        elif source == "mqp":
            question = mqp[int(key) - 1]
            split = half_of(question)
        elif source == "expert" and question:
            split = half_of(key)
        elif source == "written" and question:
            split = half_of(question)
        else:
            raise SystemExit(f"{labels}: {ref} names an unknown source or has no text")
        if half != split:
            raise SystemExit(f"{labels}: {ref} is in the {split} half, not {half}")
        out.append(Labelled(ref, half, shape, question, subject, outcome))
    return out


def load_reworded(labels: Path) -> list[Labelled]:
    """The reworded questions of ``reworded_questions.tsv`` (their text and labels in the TSV;
    their shape is their style, plain or expert)."""
    lines = [ln for ln in labels.read_text().splitlines() if ln.strip() and ln[0] != "#"]
    out: list[Labelled] = []
    for line in lines[1:]:
        rid, pmid, half, style, _answer, question, subject, outcome = line.split("\t")
        if half != half_of(pmid):
            raise SystemExit(f"{labels}: {rid} is in the {half_of(pmid)} half, not {half}")
        out.append(Labelled(f"{rid}:{pmid}", half, style, question, subject, outcome))
    return out


def read_with(src: Path, questions: list[str]) -> list[tuple[str, str]]:
    """The (subject, outcome) another version's frame (its ``src``) reads in ``questions``."""
    return [(s, o) for s, o in read_kinds_with(src, questions, _OLD_READER)]  # type: ignore[misc]


def score(cases: list[Labelled], read: list[tuple[str, str]]) -> dict[str, float]:
    """The share of subjects and outcomes right and near."""
    n = len(cases) or 1
    figures: dict[str, float] = {}
    for i, field in enumerate(FIELDS):
        pairs = [(c.label(field), r[i]) for c, r in zip(cases, read, strict=True)]
        figures[field] = sum(right(lab, got) for lab, got in pairs) / n
        figures[f"{field}_near"] = sum(near(lab, got) for lab, got in pairs) / n
    return figures


def print_table(
    cases: list[Labelled], read: list[tuple[str, str]], old: list[tuple[str, str]] | None
) -> None:
    """Print right and near of subject and outcome, in all and by shape (old beside new)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        groups[case.shape].append(i)
    head = f"{'shape':<12}{'n':>4}{'subject':>9}{'~near':>7}{'outcome':>9}{'~near':>7}"
    print(head + (f"   |{'old subj':>9}{'~near':>7}{'old outc':>9}{'~near':>7}" if old else ""))
    rows = [("all", list(range(len(cases)))), *sorted(groups.items())]
    for name, idx in rows:
        chosen = [cases[i] for i in idx]
        new = score(chosen, [read[i] for i in idx])
        line = f"{name:<12}{len(idx):>4}" + "".join(
            f"{new[k]:>9.2f}{new[k + '_near']:>7.2f}" for k in FIELDS
        )
        if old is not None:
            was = score(chosen, [old[i] for i in idx])
            line += "   |" + "".join(f"{was[k]:>9.2f}{was[k + '_near']:>7.2f}" for k in FIELDS)
        print(line)


def print_misses(cases: list[Labelled], read: list[tuple[str, str]]) -> None:
    """Print each question whose subject or outcome is not right: label <- read."""
    print("\nmisread (label <- read; ~ near):")
    for case, got in zip(cases, read, strict=True):
        parts = []
        for i, field in enumerate(FIELDS):
            label = case.label(field)
            if not right(label, got[i]):
                mark = "~" if near(label, got[i]) else " "
                parts.append(f"{field[:4]}{mark} {label or '-'!r} <- {got[i] or '-'!r}")
        if parts:
            print(f"  {case.ref:<18}{case.shape:<11}{case.question[:80]}")
            for part in parts:
                print(f"      {part}")


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="The labelled TSV.")
    parser.add_argument("--data", type=Path, default=SHARED, help="../shared/data.")
    parser.add_argument("--misses", action="store_true", help="List the questions misread.")
    parser.add_argument("--compare", type=Path, default=None, help="Another version's src.")
    parser.add_argument(
        "--reworded", action="store_true", help=f"Read the labels of {REWORDED.name} instead."
    )
    add_half(parser)
    return parser.parse_args(argv)


@both_halves
def main(argv: list[str] | None = None) -> int:
    """Read the labelled questions of one half; print the table and the figures."""
    args = _options(argv)
    if not (args.data / "pubmedqa/pqal_dev.json").exists():
        print(f"no PubMedQA data under {args.data}")
        return 2
    loaded = load_reworded(REWORDED) if args.reworded else load(args.labels, args.data)
    cases = [c for c in loaded if c.half == args.half]
    print(f"{len(cases)} questions of the {args.half} half\n")
    frames = [read_frame(c.question) for c in cases]
    read = [(f.subject or "", f.outcome or "") for f in frames]
    old = None
    if args.compare is not None:
        old = read_with(args.compare.resolve(), [c.question for c in cases])
        changed = sum(o != r for o, r in zip(old, read, strict=True))
        print(f"old reader: {args.compare}; {changed} questions read anew\n")
    print_table(cases, read, old)
    if args.misses:
        print_misses(cases, read)
    figures = {"n": float(len(cases)), **score(cases, read)}
    if old is not None:
        figures.update({f"old_{k}": v for k, v in score(cases, old).items()})
    print(" ".join(f"{k}={v:.0f}" if k == "n" else f"{k}={v:.3f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
