"""How long the answer checks take per answer, warm and cold.

Replays answers through :func:`medlit.checks.answer.check_answer` (every check of the
registry, in order) over their evidence from ``pqal_dev_pubmed.xml``, and reports the p50 and
p99 CPU time per answer in a warm process (CPU, not wall time: on a shared machine the
wall time measures the neighbours), and what the checks add to a cold process: importing
them, and their first answer beyond a warm one (tables loaded on first use), in CPU time
too. The model's verdict reads are not timed (a recorded read is replayed; an unrecorded one
reads Uncertain).

What the word tools remember of texts is emptied before each answer (:func:`forget`): each
answer is timed as if its text were new to the process. What the checks work out of an
article (its view, :func:`medlit.words.evidence.article_view`: its texts' sentences, and
what the checks' memories, :mod:`medlit.words.memo`, work out of its texts, each on first
use; the abbreviations it defines, :func:`medlit.words.defined_terms.article_definitions`)
is kept per article, for every later answer that cites it: each
answer is timed twice, its articles new to the process (``new_p50_ms``, ``new_p99_ms``: a
cold ``medlit ask``'s case), then read before (``p50_ms``, ``p99_ms``: a server's answer over
articles it has read before); ``article_view_ms`` is the difference per article (p50), the
cost paid once when an article is first read.

The answers, reported apart: first the issue's target case (its figures are the last line's
``p50_ms``, ``p99_ms``, ``new_*``), ``--n`` answers assembled from the check half's abstracts:
for each question, 10 articles (its own and the 9 that say most of its words), and about 300
words of their result and conclusion sentences, each cited to its article, every fourth to
the wrong one (as a model miscites); then the recorded model answers of
``benchmarks/data/recorded_answers.jsonl`` (see ``record_answers.py``; shorter, with fewer
articles: ``recorded_p50_ms``, ``recorded_p99_ms``, their articles read before). Targets:
p50 <= 10 ms, p99 <= 50 ms per answer of ~300 words over 10 articles; cold <= 150 ms.

Usage::

    python benchmarks/checks_speed.py [--data ../shared/data/pubmedqa/pqal_dev.json] [--n 60]

Last line: ``answers=... words_p50=... articles=... p50_ms=... p99_ms=... article_view_ms=...
new_p50_ms=... new_p99_ms=... recorded=... recorded_p50_ms=... recorded_p99_ms=...
cold_import_ms=... first_answer_ms=...`` (all but the ``recorded`` ones of the assembled
answers).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_verdicts import DEFAULT_DATA, nearest_others
from medlit import text
from medlit.cache import guard
from medlit.checks import REGISTRY, Check, check_answer, citations, swapped_terms
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.types import Article
from medlit.words import defined_terms, evidence, grounding, memo, qualified_names, topics
from medlit.words.grounding import word_stems
from pubmedqa_cases import half_of

RECORDED = Path(__file__).resolve().parent / "data" / "recorded_answers.jsonl"


def recorded(articles: dict[str, Article]) -> list[dict[str, Any]]:
    """The recorded answers whose evidence is all in ``articles``."""
    if not RECORDED.exists():
        return []
    rows = [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]
    return [r for r in rows if all(p in articles for p in r["evidence"])]


def assembled(records: dict[str, Any], articles: dict[str, Article], n: int) -> list[dict]:
    """``n`` answers of ~300 words from the check half's abstracts (see the module doc)."""
    said = {p: word_stems(a.everything_said.lower()) for p, a in articles.items()}
    rows = []
    for pmid in sorted(p for p in records if half_of(p) == "check" and p in articles)[:n]:
        question = str(records[pmid]["QUESTION"])
        evidence = [pmid, *nearest_others(question, pmid, said, 9)]
        sentences = [
            (p, s)
            for p in evidence
            for section in articles[p].abstract
            if section.is_result
            for s in text.split_sentences(section.text)
        ]
        parts, words = [], 0
        for number, (p, sentence) in enumerate(sentences):
            cited = evidence[(evidence.index(p) + 1) % 10] if number % 4 == 3 else p
            parts.append(f"{sentence.rstrip('.')} [PMID:{cited}].")
            words += len(sentence.split())
            if words >= 300:
                break
        rows.append(
            {
                "standalone": question,
                "is_yes_no": True,
                "evidence": evidence,
                "drafted": " ".join(parts),
            }
        )
    return rows


SPENT: Counter[str] = Counter()


def time_each_check() -> None:
    """Count the CPU each check of the registry takes (its run wrapped, in this process)."""

    def timed(check: Check) -> Check:
        def run(ctx: Any) -> Any:
            started = time.process_time()
            try:
                return check.run(ctx)
            finally:
                SPENT[check.id] += time.process_time() - started

        return dataclasses.replace(check, run=run)

    for check_id, check in list(REGISTRY.items()):
        REGISTRY[check_id] = timed(check)


def forget() -> None:
    """Empty what the word tools remember of texts (sentences, stems, topic keys, names,
    question features): every answer is timed as a server meets it, its own
    text and its articles' read afresh. (What they remember of single words, a word's stem
    or its frequency, is kept: a table, not a text.)"""
    for remembered in (
        text._sentence_starts,
        text._split_sentences,
        grounding._word_stems,
        topics.normalise_topic,
        swapped_terms._words,
        qualified_names.qualified_names,
        guard.question_features,
    ):
        remembered.cache_clear()
    text.forget_kept_pieces()
    memo.forget()


async def _one(row: dict[str, Any], articles: dict[str, Article], *, seen: bool = False) -> float:
    """The CPU ms of the checks of one answer, its articles new to the process (their views
    forgotten) or, ``seen``, read before."""
    forget()
    if not seen:
        evidence.forget_views()
        defined_terms._definitions.clear()  # an article's abbreviations: the article's
        citations._citation_patterns.cache_clear()  # its PMID's patterns
    reads = {text: verdict for text, verdict in row.get("reads", [])}

    async def read(question: str, text: str) -> Any:
        return reads.get(text, "uncertain")

    cited = {p: articles[p] for p in row["evidence"]}
    started = time.process_time()  # the CPU the checks take (the machine may be shared)
    await check_answer(
        row["standalone"],
        row["drafted"],
        row.get("drafted_verdict"),
        cited,
        cited[row["evidence"][0]],
        is_yes_no=row["is_yes_no"],
        read_verdict=read,
        nothing_supported="Nothing the evidence supports is left.",
    )
    return (time.process_time() - started) * 1000


def _both(row: dict[str, Any], articles: dict[str, Article]) -> tuple[float, float]:
    """The checks' CPU ms on one answer, its articles new, then read before."""
    return asyncio.run(_one(row, articles)), asyncio.run(_one(row, articles, seen=True))


_COLD = """
import time, asyncio, json, sys
sys.path.insert(0, {bench!r})
t0 = time.process_time()
import medlit.assistant, medlit.runtime, medlit.cache.answers, medlit.llm.client  # an ask's own
t1 = time.process_time()
import medlit.checks.answer
t2 = time.process_time()
import checks_speed
row = json.loads({row!r})
articles = checks_speed.load_articles({xml!r}, row["evidence"])
first = asyncio.run(checks_speed._one(row, articles))
warm = min(asyncio.run(checks_speed._one(row, articles)) for _ in range(3))
print(json.dumps({{"import_ms": (t2 - t1) * 1000, "first_extra_ms": first - warm}}))
"""


def load_articles(xml: str, pmids: list[str] | None = None) -> dict[str, Article]:
    """The articles of ``xml`` by PMID (only ``pmids`` when given)."""
    found = {a.pmid: a for a in parse_pubmed_xml(Path(xml).read_bytes()) if a.pmid}
    return found if pmids is None else {p: found[p] for p in pmids}


def cold(row: dict[str, Any], xml: Path, runs: int = 3) -> tuple[float, float]:
    """The checks' import time and their first answer's extra time in fresh processes (the
    least of ``runs``)."""
    code = _COLD.format(bench=str(Path(__file__).parent), row=json.dumps(row), xml=str(xml))
    measured = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        measured.append(json.loads(out.strip().splitlines()[-1]))
    return min(m["import_ms"] for m in measured), min(m["first_extra_ms"] for m in measured)


def _measure(rows: list[dict[str, Any]], articles: dict[str, Article], rounds: int) -> dict:
    """The warm figures of ``rows`` replayed ``rounds`` times: p50/p99 with the articles read
    before and all new, and the per-article first reading (p50)."""
    measured = [(row, *_both(row, articles)) for _ in range(rounds) for row in rows]
    seen = statistics.quantiles([s for _, _, s in measured], n=100)
    new = statistics.quantiles([f for _, f, _ in measured], n=100)
    return {
        "answers": len(rows),
        "timings": len(measured),
        "words": statistics.median(len(r["drafted"].split()) for r in rows),
        "articles": statistics.median(len(set(r["evidence"])) for r in rows),
        "p50": seen[49],
        "p99": seen[98],
        "new_p50": new[49],
        "new_p99": new[98],
        "view": statistics.median((f - s) / len(set(r["evidence"])) for r, f, s in measured),
    }


def _table(title: str, got: dict) -> None:
    print(
        f"\n{title}: {got['answers']} answers, words p50 {got['words']:.0f}, "
        f"articles p50 {got['articles']:.0f}"
    )
    print(f"{'':40}{'ms':>8}")
    for name, value in (
        ("p50 per answer, its articles read before", got["p50"]),
        ("p99 per answer, its articles read before", got["p99"]),
        ("p50 article's first reading, per article", got["view"]),
        ("p50 per answer, its articles all new", got["new_p50"]),
        ("p99 per answer, its articles all new", got["new_p99"]),
    ):
        print(f"{name:40}{value:>8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--n", type=int, default=60, help="Assembled ~300-word answers (the target case)."
    )
    parser.add_argument("--rounds", type=int, default=3, help="Times each answer is replayed.")
    args = parser.parse_args(argv)
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    if not (args.data.exists() and xml.exists()):
        print(f"no data at {args.data}: see ../shared/data/README.md")
        return 1
    configure_logging("error")
    records = json.loads(args.data.read_text())
    articles = load_articles(str(xml))
    rows = assembled(records, articles, args.n)
    replayed = recorded(articles)
    asyncio.run(_one(rows[0], articles))  # warm up
    time_each_check()
    target = _measure(rows, articles, args.rounds)
    by_check = dict(SPENT)
    model = _measure(replayed, articles, args.rounds) if replayed else None
    import_ms, first_ms = cold(rows[0], xml)
    print(f"{args.rounds} rounds each; CPU ms (process_time)")
    _table("the target case, assembled ~300-word answers over 10 articles", target)
    if model is not None:
        _table("recorded model answers", model)
    print(f"\n{'cold import':40}{import_ms:>8.1f}\n{'first answer, extra':40}{first_ms:>8.1f}")
    print("\nCPU per assembled answer by check (the costliest; mean of both timings):")
    for check_id, spent in Counter(by_check).most_common(8):
        print(f"  {check_id:26}{spent * 1000 / (2 * target['timings']):>8.1f} ms")
    recorded_part = (
        f"recorded={model['answers']} recorded_p50_ms={model['p50']:.1f} "
        f"recorded_p99_ms={model['p99']:.1f} "
        if model is not None
        else "recorded=0 "
    )
    print(
        f"answers={target['answers']} words_p50={target['words']:.0f} "
        f"articles={target['articles']:.0f} p50_ms={target['p50']:.1f} "
        f"p99_ms={target['p99']:.1f} article_view_ms={target['view']:.2f} "
        f"new_p50_ms={target['new_p50']:.1f} new_p99_ms={target['new_p99']:.1f} "
        + recorded_part
        + f"cold_import_ms={import_ms:.1f} first_answer_ms={first_ms:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
