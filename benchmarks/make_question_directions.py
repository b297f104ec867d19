"""Choose the questions of ``benchmarks/data/question_directions.tsv`` (to be labelled by hand).

Usage::

    python benchmarks/make_question_directions.py [--data ../shared/data] [--text FILE]

Prints the references chosen, one a line, in a shuffled order that does not group them by
how the reader on the path reads them (run with the reader the labels are to measure, before
it changes): every PubMedQA title of ``pubmedqa/pqal_dev.json`` the reader gives a direction
(:func:`medlit.words.frame.read_frame`), as many it gives none (:data:`SEED`, half of them
from each half of :func:`pubmedqa_cases.half_of`), and :data:`MQP_COUNT` first questions of
``mqp/mqp_dev.csv`` (distinct, by their first line) naming a word of change (:data:`CHANGE`).
``--fresh``: a second sample instead (:func:`fresh`), labelled after the reader changed.
``--text FILE`` writes each reference with its question, for the labeller, outside the repo.
The reader's reading is never printed: the labels are made from the question alone.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from pathlib import Path

from medlit.words.frame import read_frame
from pubmedqa_cases import HALVES, half_of

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
SEED = 53
MQP_COUNT = 70
FRESH_PUBMEDQA = 15
FRESH_MQP = 25
#: A word of change in a consumer question: the ones a direction may be asked with.
CHANGE = re.compile(
    r"\b(?:caus|increas|reduc|decreas|rais|lower|prevent|improv|wors|harm|damag|benefi|protect"
    r"|induc|trigger|impair|aggravat|exacerbat|reliev|alleviat|lessen|boost|enhanc)\w*",
    re.IGNORECASE,
)


def choose(data: Path) -> list[tuple[str, str]]:
    """The (reference, question) pairs chosen, shuffled with :data:`SEED`."""
    rng = random.Random(SEED)
    pubmedqa = json.loads((data / "pubmedqa/pqal_dev.json").read_text())
    asked = [k for k in sorted(pubmedqa) if read_frame(pubmedqa[k]["QUESTION"]).direction]
    chosen = list(asked)
    for half in HALVES:
        none = [k for k in sorted(pubmedqa) if half_of(k) == half and k not in asked]
        chosen += rng.sample(none, len(asked) // 2 + (half == HALVES[0]) * (len(asked) % 2))
    pairs = [(f"pubmedqa:{k}", pubmedqa[k]["QUESTION"]) for k in chosen]
    with (data / "mqp/mqp_dev.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=1):
        seen.setdefault(row[1], line)
    changing = sorted((line, q) for q, line in seen.items() if CHANGE.search(q))
    pairs += [(f"mqp:{line}", q) for line, q in rng.sample(changing, MQP_COUNT)]
    rng.shuffle(pairs)
    return pairs


def fresh(data: Path, chosen: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A second sample, labelled after the reader had changed (questions it was not changed
    from): :data:`FRESH_MQP` MQP questions naming a word of change and :data:`FRESH_PUBMEDQA`
    PubMedQA titles, none of them in ``chosen``, shuffled with ``SEED + 1``."""
    rng = random.Random(SEED + 1)
    taken = {ref for ref, _ in chosen}
    pubmedqa = json.loads((data / "pubmedqa/pqal_dev.json").read_text())
    titles = [(f"pubmedqa:{k}", pubmedqa[k]["QUESTION"]) for k in sorted(pubmedqa)]
    with (data / "mqp/mqp_dev.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=1):
        seen.setdefault(row[1], line)
    changing = sorted((f"mqp:{line}", q) for q, line in seen.items() if CHANGE.search(q))
    pairs = rng.sample([p for p in titles if p[0] not in taken], FRESH_PUBMEDQA)
    pairs += rng.sample([p for p in changing if p[0] not in taken], FRESH_MQP)
    rng.shuffle(pairs)
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED, help="../shared/data.")
    parser.add_argument("--text", type=Path, default=None, help="Where to write the questions.")
    parser.add_argument("--fresh", action="store_true", help="The second sample only.")
    args = parser.parse_args(argv)
    pairs = choose(args.data)
    pairs = fresh(args.data, pairs) if args.fresh else pairs
    for ref, _ in pairs:
        print(ref)
    if args.text is not None:
        args.text.write_text("".join(f"{ref}\t{q}\n" for ref, q in pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
