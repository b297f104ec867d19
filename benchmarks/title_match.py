"""Where does an article's title ask the question itself? The threshold of the title match.

::

    python benchmarks/title_match.py [--xml ../shared/data/pubmedqa/pqal_dev_pubmed.xml]

A verdict withheld for the question's words alone is earned back by a cited article whose title
is near the question (:func:`medlit.checks.answering.title_matched_verdict`, cosine of the
shipped all-MiniLM-L6-v2 at least :data:`~medlit.checks.answering.TITLE_MATCH`). Here each
question of ``benchmarks/data/reworded_questions.tsv`` (plain and expert rewordings, each of
one PubMedQA article) is set against the titles of all 500 articles of the corpus: its own
article's title (``gold``) and the nearest title of any other (``other``: an article that
does not ask the question, the error the threshold must keep out). Per half: how many
questions reach each threshold with their own title, and with another's.

The threshold is set on the tune half: the least value, in steps of 0.05, above every tune
question's nearest other title. The check half says what it keeps out there.

Last line: ``threshold=... gold_tune=... other_tune=... gold_check=... other_check=...
max_other_tune=... max_other_check=...``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "reworded_questions.tsv"
SHARED = ROOT.parent / "shared" / "data" / "pubmedqa" / "pqal_dev_pubmed.xml"
STEPS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xml", type=Path, default=SHARED)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.xml.exists():
        sys.exit(f"no corpus at {args.xml}: ../shared/data is needed")

    from medlit.checks.answering import TITLE_MATCH
    from medlit.embeddings.onnx import OnnxEmbedder
    from medlit.sources.pubmed_xml import parse_pubmed_xml

    articles = [a for a in parse_pubmed_xml(args.xml.read_bytes()) if a.pmid and a.title]
    lines = [line for line in args.data.open(encoding="utf-8") if not line.startswith("#")]
    questions = list(csv.DictReader(lines, delimiter="\t"))
    embedder = OnnxEmbedder()
    titles = embedder.embed([a.title for a in articles])
    index = {a.pmid: i for i, a in enumerate(articles)}

    near: dict[str, list[tuple[float, float]]] = {"tune": [], "check": []}
    for row in questions:
        nearness = titles @ embedder.embed([row["question"]])[0]
        own = float(nearness[index[row["pmid"]]])
        nearness[index[row["pmid"]]] = -1.0
        near[row["half"]].append((own, float(nearness.max())))

    header = "  ".join(f"{f'gold≥{t:.2f}':>10} {'other':>5}" for t in STEPS)
    print(f"{'half':6} {'n':>3}  {header}")
    for half, pairs in near.items():
        cells = [
            f"{sum(g >= t for g, _ in pairs):>10} {sum(o >= t for _, o in pairs):>5}" for t in STEPS
        ]
        print(f"{half:6} {len(pairs):>3}  " + "  ".join(cells))
    max_tune = max(o for _, o in near["tune"])
    threshold = math.floor(max_tune / 0.05 + 1) * 0.05
    print(f"\nnearest other title, tune: {max_tune:.3f} -> threshold {threshold:.2f}")
    print(f"shipped TITLE_MATCH: {TITLE_MATCH}")
    figures = {"threshold": f"{threshold:.2f}", "shipped": TITLE_MATCH}
    for half, pairs in near.items():
        figures[f"gold_{half}"] = f"{sum(g >= TITLE_MATCH for g, _ in pairs)}/{len(pairs)}"
        figures[f"other_{half}"] = sum(o >= TITLE_MATCH for _, o in pairs)
        figures[f"max_other_{half}"] = f"{max(o for _, o in pairs):.3f}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
