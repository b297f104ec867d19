"""How right are the evidence digest's yes/no verdicts, and how often does it abstain?

Runs :func:`medlit.digest.build_evidence_digest` (the no-LLM answer mode) on the 500 expert-labelled
PubMedQA questions in ``../shared/data/pubmedqa/pqal_dev.json``. Each record is one article: its
abstract sections (``CONTEXTS``/``LABELS``) plus its conclusion (``LONG_ANSWER``) become the
evidence, the title question (``QUESTION``) is the question, ``final_decision`` is the truth.

A yes/no verdict counts as right when it equals ``final_decision``; a yes/no verdict on a
``maybe`` record is wrong; ``uncertain`` or ``None`` is an abstention. PubMedQA has one article
per question, so the default policy (two agreeing sources, or one systematic review/RCT) would
abstain on nearly all of it; the table therefore reports the single-source reading
(``min_sources=1``: the per-conclusion stance the verdict is built from) and the default policy.

Usage::

    python benchmarks/digest_verdicts.py [--data ../shared/data/pubmedqa/pqal_dev.json] [--embed]

The last line is ``verdict_accuracy=... coverage=...`` for the single-source reading.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from medlit.words.grounding import word_stems
from medlit.words.topics import anchor_terms

try:
    from medlit.digest import build_evidence_digest
except ImportError:  # the code before the digest moved (turned_questions.py --set)
    from medlit.llm import build_evidence_digest  # type: ignore[attr-defined,no-redef]
from medlit.types import AbstractSection, Article, Chunk, Evidence
from pubmedqa_cases import add_half, both_halves, in_half

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/pubmedqa/pqal_dev.json"


def records_as_evidence(
    data: Path, half: str = "both"
) -> tuple[dict[str, Any], dict[str, list[Evidence]], dict[str, Article]] | None:
    """The labelled records of ``data`` (by PMID), each as retrieved evidence
    (:func:`record_evidence`) and as its article; None (after saying so) when ``data`` is
    absent."""
    if not data.exists():
        print(f"no data at {data}: see ../shared/data/README.md")
        return None
    records = in_half(json.loads(data.read_text()), half)
    evidence = {pmid: record_evidence(pmid, r) for pmid, r in records.items()}
    return records, evidence, {pmid: items[0].article for pmid, items in evidence.items()}


def nearest_others(question: str, pmid: str, said: dict[str, set[str]], n: int) -> list[str]:
    """The ``n`` records other than ``pmid`` whose articles say the most of ``question``'s
    subject words (``said``: each article's word stems, by PMID): the near misses a search
    returns around the one article that answers."""
    anchors = set().union(*map(word_stems, anchor_terms(question)))  # one word at a time
    others = (p for p in said if p != pmid)
    return sorted(others, key=lambda p: (-len(anchors & said[p]), p))[:n]


def record_evidence(pmid: str, record: dict[str, object]) -> list[Evidence]:
    """The record as retrieved evidence: one chunk per abstract section, conclusion last."""
    contexts = [str(c) for c in record["CONTEXTS"]]  # type: ignore[attr-defined]
    labels = [str(label) for label in record["LABELS"]]  # type: ignore[attr-defined]
    sections = [
        AbstractSection(label=label, category=label, text=text)
        for label, text in zip(labels, contexts, strict=False)
    ]
    sections.append(
        AbstractSection(
            label="CONCLUSIONS", category="CONCLUSIONS", text=str(record["LONG_ANSWER"])
        )
    )
    article = Article(
        pmid=pmid,
        title=str(record["QUESTION"]),
        abstract=sections,
        year=int(str(record["YEAR"])) if record.get("YEAR") else None,
        mesh_terms=[str(m) for m in record.get("MESHES", [])],  # type: ignore[attr-defined]
    )
    return [
        Evidence(
            chunk=Chunk(
                id=f"{article.key}#{i + 1}",
                article_key=article.key,
                ordinal=i + 1,
                section=section.label,
                text=section.text,
                is_conclusion=section.is_conclusion,
            ),
            article=article,
            similarity=0.0,
        )
        for i, section in enumerate(sections)
    ]


def evaluate(
    data: dict[str, dict[str, object]], min_sources: int, embedder: object = None
) -> dict[str, object]:
    """Confusion counts, accuracy of the verdicts given, and coverage."""
    confusion: Counter[tuple[str, str]] = Counter()
    for pmid, record in data.items():
        digest = build_evidence_digest(
            str(record["QUESTION"]),
            record_evidence(pmid, record),
            min_sources=min_sources,
            embedder=embedder,  # type: ignore[arg-type]
        )
        assert pmid in digest.pmids or not digest.sentences
        confusion[(str(record["final_decision"]), str(digest.verdict))] += 1
    given = sum(n for (_, v), n in confusion.items() if v in ("yes", "no"))
    right = sum(n for (g, v), n in confusion.items() if v in ("yes", "no") and g == v)
    return {
        "confusion": confusion,
        "given": given,
        "right": right,
        "accuracy": right / given if given else 0.0,
        "coverage": given / len(data),
    }


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_half(parser)
    parser.add_argument(
        "--embed", action="store_true", help="rank with medlit's embedder, not word overlap"
    )
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    data = in_half(json.loads(args.data.read_text()), args.half)
    truth = Counter(str(r["final_decision"]) for r in data.values())
    print(f"PubMedQA PQA-L dev: {len(data)} records, truth {dict(truth)}")
    print(f"majority-class baseline (always 'yes'): {truth['yes'] / len(data):.3f}\n")

    embedder = None
    if args.embed:
        from medlit.config import Settings
        from medlit.embeddings import load_embedder

        embedder = load_embedder(Settings())
    print(f"sentence ranking: {'embedder' if embedder else 'word overlap'}\n")
    results = {}
    for name, min_sources in (("single-source (min_sources=1)", 1), ("default (min_sources=2)", 2)):
        started = time.perf_counter()
        results[name] = evaluate(data, min_sources, embedder)
        results[name]["seconds"] = time.perf_counter() - started

    print(f"{'policy':32} {'given':>6} {'right':>6} {'accuracy':>9} {'coverage':>9} {'time_s':>7}")
    for name, r in results.items():
        print(
            f"{name:32} {r['given']:>6} {r['right']:>6} {r['accuracy']:>9.3f} "
            f"{r['coverage']:>9.3f} {r['seconds']:>7.1f}"
        )
    single = results["single-source (min_sources=1)"]
    confusion: Counter[tuple[str, str]] = single["confusion"]  # type: ignore[assignment]
    verdicts = ("yes", "no", "uncertain", "None")
    print("\nsingle-source confusion (rows: truth, columns: verdict)")
    print(f"{'':8}" + "".join(f"{v:>10}" for v in verdicts))
    for gold in ("yes", "no", "maybe"):
        print(f"{gold:8}" + "".join(f"{confusion[(gold, v)]:>10}" for v in verdicts))
    print(f"\nverdict_accuracy={single['accuracy']:.3f} coverage={single['coverage']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
