"""Where does an article name the question's subject or outcome in other words? The threshold
of a near name.

::

    python benchmarks/near_names.py [--xml ../shared/data/pubmedqa/pqal_dev_pubmed.xml]

A verdict follows a cited statement left only when its article names the question's subject
and outcome (:func:`medlit.checks.answering.answering_statements`); an article that names one
in other words ("cognitive decline" for "cognitive deterioration") names it when a run of its
words holding a word of the concept is near it (:func:`medlit.checks.answering.names_near`,
cosine of the shipped all-MiniLM-L6-v2 at least :data:`~medlit.checks.answering.NEAR_NAME`).
Here each question of ``benchmarks/data/reworded_questions.tsv`` (rewordings of PubMedQA
questions, each with its own article) is read into its frame; for each of its subject and
outcome that its own article does not name as asked, the nearest run of the article's words
(``own``, printed: read them to judge), and the nearest run of any other article of the 500
that names the question's other concept and not this one (``other``: an article about the same
subject or outcome that names this concept, if at all, otherwise). Per half: how many concepts
reach each threshold in their own article, and in another.

The threshold is set on the tune half, by reading the runs: the least step of 0.05 at which
every own run reaching it names the concept (0.75: "electronic health records" for
"electronic sharing patient records", 0.745, does not). The check half says what it finds
there.

Last line: ``threshold=... own_tune=... other_tune=... own_check=... other_check=...``
(concepts reaching the threshold) and ``unnamed_tune=... unnamed_check=...``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reworded_search import DATA, SHARED, rows_of

STEPS = (0.7, 0.75, 0.8, 0.85, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xml", type=Path, default=SHARED)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.xml.exists():
        raise SystemExit(f"{args.xml} is absent: the shared data sets are needed")
    from medlit.checks.answering import NEAR_NAME, nearest_name
    from medlit.embeddings.onnx import OnnxEmbedder
    from medlit.log import configure_logging
    from medlit.sources.pubmed_xml import parse_pubmed_xml
    from medlit.words.frame import read_frame
    from medlit.words.search_plan import concepts_of, names_concept

    configure_logging("error")
    rows = rows_of(args.data)
    articles = {a.pmid: a for a in parse_pubmed_xml(args.xml.read_bytes()) if a.pmid}
    texts = {pmid: a.everything_said for pmid, a in articles.items()}
    embedder = OnnxEmbedder()
    found: dict[str, list[tuple[float, float]]] = {"tune": [], "check": []}
    print(f"{'id':5} {'half':5} {'role':8} {'concept':34} {'own':>5}  {'run':34} {'other':>5}")
    for row in rows:
        frame = read_frame(row["question"])
        for role, others in (("subject", "outcome"), ("outcome", "subject")):
            if names_concept(frame, role, texts[row["pmid"]]):  # type: ignore[arg-type]
                continue
            concept = next(c.phrases[0] for c in concepts_of(frame) if c.role == role)
            own, run = nearest_name(concept, texts[row["pmid"]], embedder)
            other = max(
                (
                    nearest_name(concept, text, embedder)[0]
                    for pmid, text in texts.items()
                    if pmid != row["pmid"]
                    and names_concept(frame, others, text)  # type: ignore[arg-type]
                    and not names_concept(frame, role, text)  # type: ignore[arg-type]
                ),
                default=0.0,
            )
            found[row["half"]].append((own, other))
            print(
                f"{row['id']:5} {row['half']:5} {role:8} {concept[:34]:34} {own:5.3f}  "
                f"{run[:34]:34} {other:5.3f}"
            )
    print(f"\n{'half':6} {'threshold':>9} {'own':>4} {'other':>5}")
    last = {"threshold": f"{NEAR_NAME:.2f}"}
    for half, pairs in found.items():
        for step in STEPS:
            own = sum(o >= step for o, _ in pairs)
            other = sum(x >= step for _, x in pairs)
            print(f"{half:6} {step:9.2f} {own:>4} {other:>5}")
        last[f"own_{half}"] = str(sum(o >= NEAR_NAME for o, _ in pairs))
        last[f"other_{half}"] = str(sum(x >= NEAR_NAME for _, x in pairs))
        last[f"unnamed_{half}"] = str(len(pairs))
    print(" ".join(f"{k}={v}" for k, v in last.items()))


if __name__ == "__main__":
    main()
