"""Record a real model's answers, before their checks, for the checks' replays.

Asks PubMedQA PQA-L title questions of one half (the *check* half unless ``--half tune``,
:func:`pubmedqa_cases.half_of`) through the real assistant, as ``benchmarks/verdicts.py``
does (fake E-utilities over the 500 records' abstracts, the configured model), and writes one
JSON line per question to
``benchmarks/data/recorded_answers.jsonl``: the question as planned, whether it asks yes or
no, the PMIDs of the evidence retrieved (best first), the model's answer as the checks get it
(``drafted``) and its verdict line, every verdict the model was asked to read off a checked
text (text -> verdict), and what the assistant answered. ``benchmarks/ablation.py`` and
``benchmarks/checks_speed.py`` replay them without the model.

``--turned`` records the turned contrast set of the half instead (``turned_verdicts.py``: the
questions whose experts said yes and whose direction turns), each question as written and
turned (``form``), to ``benchmarks/data/recorded_turned.jsonl``; a turned question's "gold" is
"no" (the articles say the opposite of what it asks). ``turned_verdicts.py --replay`` replays
them.

``--expert`` and ``--plain`` record the expert-style and the plain rows of
``benchmarks/data/reworded_questions.tsv`` (both halves unless ``--half``) to
``recorded_expert.jsonl`` and ``recorded_plain.jsonl``, asked as ``reworded_search.py`` asks
them (no Europe PMC, no full text, each question from a fresh data directory).

Usage::

    export MEDLIT_LLM_BASE_URL=http://127.0.0.1:18800/v1 MEDLIT_LLM_API_KEY=local \\
        MEDLIT_LLM_MODEL=local-qwen MEDLIT_LLM_TIMEOUT_S=900 \\
        MEDLIT_AGENT_MAX_CONTEXT_CHARS=5000 MEDLIT_LLM_MAX_TOKENS=400
    python benchmarks/record_answers.py --n 30 [--half tune] [--start 92]
        [--data ../shared/data/pubmedqa/pqal_dev.json]
    python benchmarks/record_answers.py --expert --n 50 [--half tune]
    python benchmarks/record_answers.py --plain --n 50

Last line: ``recorded=... verdict_accuracy=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402

from medlit.assistant import Assistant  # noqa: E402
from medlit.config import Settings  # noqa: E402
from medlit.errors import MedlitError  # noqa: E402
from pubmedqa_cases import half_of  # noqa: E402
from recording import RECORDED, Recorder, keep  # noqa: E402
from turned_questions import contrast_set  # noqa: E402
from verdicts import DEFAULT_DATA, pick  # noqa: E402

_TRUTH = {"yes": "yes", "no": "no", "maybe": "uncertain"}


TURNED = ROOT / "benchmarks" / "data" / "recorded_turned.jsonl"
EXPERT = ROOT / "benchmarks" / "data" / "recorded_expert.jsonl"
PLAIN = ROOT / "benchmarks" / "data" / "recorded_plain.jsonl"
REWORDED = ROOT / "benchmarks" / "data" / "reworded_questions.tsv"


def reworded_rows(
    path: Path = REWORDED, half: str | None = None, style: str = "expert"
) -> list[dict[str, Any]]:
    """The questions of ``style`` ("expert" or "plain") of ``path`` (of ``half`` if given) as
    rows to ask."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return [
        {"pmid": r["pmid"], "form": style, "id": r["id"], "question": r["question"],
         "gold": r["answer"]}
        for r in csv.DictReader(lines, delimiter="\t")
        if r["style"] == style and (half is None or r["half"] == half)
    ]  # fmt: skip


async def _asked(question: str, settings: Settings, shared: Assistant | None) -> Any:
    """``question`` asked, no cache: of ``shared``, or else of an assistant of its own in a
    fresh data directory."""
    if shared is not None:
        return await shared.ask(question, use_cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        async with Assistant(settings.model_copy(update={"home": Path(tmp)})) as assistant:
            return await assistant.ask(question, use_cache=False)


async def record(
    asked: list[dict[str, Any]], settings: Settings, out: Path, fresh: bool = False
) -> int:
    """Ask each question of ``asked`` (rows of pmid, question, gold and perhaps form) once,
    no cache, and append its line to ``out``; the count right. ``fresh``: each question from
    a data directory of its own (as ``reworded_search.py`` asks), so no article an earlier
    question fetched is found locally instead; else one assistant asks them all."""
    recorder, right = Recorder(), 0
    async with AsyncExitStack() as stack:
        shared = None if fresh else await stack.enter_async_context(Assistant(settings))
        for number, asking in enumerate(asked, 1):
            pmid = asking["pmid"]
            recorder.row = dict(asking)
            started = time.perf_counter()
            try:
                result = await _asked(recorder.row["question"], settings, shared)
            except MedlitError as exc:
                print(f"{number:>3} {pmid} error: {str(exc)[:100]}", flush=True)
                continue
            row = recorder.row
            row.update(verdict=result.verdict, answer=result.answer, mode=result.mode)
            row["seconds"] = round(time.perf_counter() - started, 1)
            right += row["verdict"] == row["gold"]
            keep(row, out)
            print(
                f"{number:>3} {pmid:>9} gold={row['gold']:<9} verdict={row['verdict']} "
                f"mode={row['mode']} {row['seconds']}s",
                flush=True,
            )
    return right


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="PubMedQA PQA-L JSON.")
    parser.add_argument("--n", type=int, default=30, help="Questions to record.")
    parser.add_argument("--start", type=int, default=92, help="Skip this many of the shuffle.")
    parser.add_argument("--out", type=Path, default=RECORDED)
    parser.add_argument("--again", action="store_true", help="Ask recorded questions again.")
    parser.add_argument("--half", choices=("check", "tune"), help="The half (default: check).")
    parser.add_argument("--turned", action="store_true", help="Record the turned contrast set.")
    parser.add_argument("--expert", action="store_true", help="Record the expert-style set.")
    parser.add_argument("--plain", action="store_true", help="Record the plain rewordings.")
    args = parser.parse_args(argv)
    if args.out == RECORDED and (args.turned or args.expert or args.plain):
        args.out = TURNED if args.turned else EXPERT if args.expert else PLAIN
    reworded = "expert" if args.expert else "plain" if args.plain else None
    if not reworded:
        args.half = args.half or "check"
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    records: dict[str, Any] = json.loads(args.data.read_text())
    ordered = pick(records, len(records), 0, 10)[args.start :]
    lines = args.out.read_text().splitlines() if args.out.exists() and not args.again else []
    rows = [json.loads(line) for line in lines if line.strip()]
    done = {(r["pmid"], r.get("form")) for r in rows}
    if reworded:
        asked = reworded_rows(half=args.half, style=reworded)
    elif args.turned:
        mine = {p: r for p, r in records.items() if half_of(p) == args.half}
        asked = [
            {"pmid": pmid, "form": form, "question": question, "gold": gold}
            for pmid, _, written, turn, _ in [r for r in contrast_set(mine) if r[1] == "yes"]
            for form, question, gold in (("written", written, "yes"), ("turned", turn, "no"))
        ]
    else:
        asked = [
            {
                "pmid": p,
                "question": str(records[p]["QUESTION"]),
                "gold": _TRUTH[str(records[p]["final_decision"])],
            }
            for p in ordered
            if half_of(p) == args.half
        ]
    asked = [a for a in asked if (a["pmid"], a.get("form")) not in done][: args.n]
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as eutils,
    ):
        settings = Settings(home=Path(tmp))
        if not settings.llm.model:
            print("skipped: no LLM configured (set MEDLIT_LLM_MODEL)", file=sys.stderr)
            return 0
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0
        settings.local.enabled = False
        settings.search.default_source = "pubmed"
        if reworded:  # as reworded_search.py asks them
            settings.europepmc.enabled = False
            settings.fulltext.mode = "off"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        right = await record(asked, settings, args.out, fresh=reworded is not None)
    print(f"recorded={len(asked)} verdict_accuracy={right / max(1, len(asked)):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
