"""Why each Uncertain verdict was withheld: the recorded model answers replayed through the
checks, every Uncertain verdict's cause tallied, per half.

Replays ``benchmarks/data/recorded_answers.jsonl`` and ``recorded_turned.jsonl`` (a real
model's answers before their checks, with the PMIDs retrieved; ``record_answers.py``) through
:func:`medlit.checks.answer.check_answer` with every check on, as ``ablation.py`` does (no
model: the verdicts it read off checked texts are the recording's and those kept in
``recorded_reads.jsonl``). When nothing of an answer stands, the evidence digest answers, and
its verdict's cause is the digest's (its policy's rule, or no evidence).

Each Uncertain verdict is counted by its cause's kind (``model``, ``check``, ``policy``,
``no_evidence``) and by what named it (the check's id, the policy's rule). ``uncaused`` counts
the Uncertain verdicts without a cause: it must be 0. A verdict the model was never asked to
read off a text (the replay falls back to the model's verdict line, or Uncertain) is counted
apart as ``unread`` and not among the causes.

``--expert`` replays ``recorded_expert.jsonl`` instead (``record_answers.py --expert``: the
expert-style questions of ``reworded_questions.tsv``, the same articles), ``--plain``
``recorded_plain.jsonl`` (``record_answers.py --plain``: its plain rewordings). Their halves are
the halves of ``reworded_questions.tsv``.

Usage::

    python benchmarks/uncertain_causes.py [--data ../shared/data/pubmedqa/pqal_dev.json]
    python benchmarks/uncertain_causes.py --expert
    python benchmarks/uncertain_causes.py --plain

Last line: ``answers=... uncertain=... uncaused=... unread=...`` and per half
``<half>_uncertain=... <half>_<kind>=...`` and ``<half>_<kind>_<id>=...`` per check or rule.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablation import READS, Reads, Replay, _evidence
from digest_verdicts import DEFAULT_DATA
from medlit.digest import build_evidence_digest
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.types import Article, VerdictCause
from pubmedqa_cases import HALVES, half_of

DATA = Path(__file__).resolve().parent / "data"
RECORDED = (DATA / "recorded_answers.jsonl", DATA / "recorded_turned.jsonl")
EXPERT = DATA / "recorded_expert.jsonl"
PLAIN = DATA / "recorded_plain.jsonl"
KINDS = ("model", "check", "policy", "no_evidence")


async def cause_of(
    row: dict[str, Any], articles: dict[str, Article], kept: Reads
) -> tuple[str | None, VerdictCause | None, bool]:
    """The verdict shown for ``row`` with every check on, its cause, and whether a verdict the
    replay needed was never read."""
    replay = Replay(row, articles, kept)
    answer, verdict = await replay.checked(frozenset())
    cause = answer.cause
    if answer.fallback is not None:
        digest = build_evidence_digest(row["standalone"], _evidence(list(replay.articles.values())))
        cause = digest.cause if row["is_yes_no"] else None
    return verdict, cause, replay.unread > 0


async def tally(
    rows: list[dict[str, Any]], articles: dict[str, Article], kept: Reads
) -> dict[str, Counter[str]]:
    """Per half, the Uncertain verdicts by cause (see the module doc)."""
    per: dict[str, Counter[str]] = {half: Counter() for half in HALVES}
    for row in rows:
        verdict, cause, unread = await cause_of(row, articles, kept)
        counts = per[half_of(row["pmid"])]
        counts["answers"] += 1
        if verdict != "uncertain":
            continue
        counts["uncertain"] += 1
        if cause is None:
            counts["uncaused"] += 1
        elif unread and cause.kind == "model":
            counts["unread"] += 1
        else:
            counts[cause.kind] += 1
            named = cause.check or cause.rule
            if named:
                counts[f"{cause.kind}_{named}"] += 1
    return per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--recorded", type=Path, nargs="+", default=list(RECORDED))
    parser.add_argument("--reads", type=Path, default=READS, help="The kept reads (JSONL).")
    parser.add_argument("--expert", action="store_true", help=f"Replay {EXPERT.name} instead.")
    parser.add_argument("--plain", action="store_true", help=f"Replay {PLAIN.name} instead.")
    args = parser.parse_args(argv)
    if args.expert or args.plain:
        args.recorded = [EXPERT if args.expert else PLAIN]
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    missing = [p for p in [*args.recorded, xml] if not p.exists()]
    if missing:
        print(f"missing: {', '.join(map(str, missing))} (see record_answers.py)")
        return 1
    configure_logging("error")
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    rows = [
        json.loads(line)
        for path in args.recorded
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    per = asyncio.run(tally(rows, articles, Reads(args.reads)))
    figures = {
        "answers": sum(c["answers"] for c in per.values()),
        "uncertain": sum(c["uncertain"] for c in per.values()),
        "uncaused": sum(c["uncaused"] for c in per.values()),
        "unread": sum(c["unread"] for c in per.values()),
    }
    for half in HALVES:
        c = per[half]
        print(f"{half} half: {c['answers']} answers, {c['uncertain']} Uncertain")
        for kind in KINDS:
            print(f"  {kind:12}{c[kind]:>5}")
            for key in sorted(k for k in c if k.startswith(f"{kind}_")):
                print(f"    {key[len(kind) + 1 :]:30}{c[key]:>5}")
        print(f"  {'unread':12}{c['unread']:>5}\n  {'uncaused':12}{c['uncaused']:>5}")
        figures[f"{half}_uncertain"] = c["uncertain"]
        for kind in KINDS:
            figures[f"{half}_{kind}"] = c[kind]
        for key in sorted(k for k in c if any(k.startswith(f"{kind}_") for kind in KINDS)):
            figures[f"{half}_{key}"] = c[key]
    print(" ".join(f"{name}={value}" for name, value in figures.items()))
    return 0 if not figures["uncaused"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
