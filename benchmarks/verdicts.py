"""Yes/no verdicts of ``medlit ask`` with a real model, against PubMedQA's expert labels.

Each question is a PubMedQA PQA-L record's title question, asked through the real assistant
(plan, search, score, prompt, the configured LLM, verdict parsing) with the fake E-utilities
server serving the 500 records' own abstracts (``pqal_dev_pubmed.xml``), so the gold article
can be found but has to be retrieved and ranked among the others. The model is whatever the
environment configures (``MEDLIT_LLM_BASE_URL``, ``MEDLIT_LLM_MODEL``...): this measures a real
model, never a fake.

A verdict is right when it equals ``final_decision`` (``maybe`` = ``uncertain``); no verdict or
an error is wrong. ``always_yes`` is the accuracy of answering "yes" to the same questions;
``gold_cited`` the share of answers citing the record's own article; latency is wall time per
question. Questions are taken in a fixed shuffled order (``--seed``); ``--start`` skips the
ones used to tune the prompt.

Usage::

    export MEDLIT_LLM_BASE_URL=http://127.0.0.1:18800/v1 MEDLIT_LLM_API_KEY=local \\
        MEDLIT_LLM_MODEL=local-qwen
    python benchmarks/verdicts.py --n 20 [--start 20] [--data ../shared/data/pubmedqa/pqal_dev.json]
        [--record benchmarks/data/recorded_answers.jsonl]

``--record`` keeps each answer as the checks got it, for ``ablation.py`` (see ``recording.py``).

Every call is sent with a sampling seed (``--llm-seed``, unless ``MEDLIT_LLM_SEED`` sets one), so
a rerun reproduces its answers where the server honours seeds. Tokens are the servers' own
counts, as the LLM client accounts them per answer (``medlit.usage``); with ``--server-log``
(a llama.cpp server's log, e.g. ``/tmp/llm/server.log``) also the tokens the server says it
evaluated (``served_prompt_tokens``: a prefix reused from its prompt cache is not counted) and
generated. Run it alone on that server (``flock``) or other clients' calls count too.

``--compare OLD_SRC`` measures two versions in one run on the same questions: this checkout and
the ``src`` directory of another (e.g. ``git worktree add /tmp/old d5084ae``, then
``--compare /tmp/old/src``), each version answering the questions in alternating blocks of
``--block`` (each block a child process), so drift of a shared machine falls on both alike.

Last line: ``verdict_accuracy=... always_yes=... gold_cited=... p50_s=... prompt_tokens=...``
(with ``--compare``: each figure for ``old_`` and ``new_``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402

from medlit.assistant import Assistant  # noqa: E402
from medlit.config import Settings  # noqa: E402
from medlit.errors import MedlitError  # noqa: E402
from medlit.usage import usage_scope  # noqa: E402
from recording import Recorder, keep  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/data/pubmedqa/pqal_dev.json"
_TRUTH = {"yes": "yes", "no": "no", "maybe": "uncertain"}


def pick(records: dict[str, dict[str, Any]], n: int, start: int, seed: int) -> list[str]:
    """PMIDs of the questions to ask: a fixed shuffle of the records, ``start`` to ``start+n``."""
    pmids = sorted(records)
    random.Random(seed).shuffle(pmids)
    return pmids[start : start + n]


async def run(
    records: dict[str, dict[str, Any]],
    pmids: list[str],
    settings: Settings,
    dump: Path | None = None,
    record_to: Path | None = None,
    server_log: Path | None = None,
) -> list[dict[str, Any]]:
    """Ask each question once (no cache), one at a time; one row per question. With
    ``record_to``, what the model answered before its checks is kept there (:mod:`recording`)."""
    rows: list[dict[str, Any]] = []
    recorder = Recorder() if record_to is not None else None
    async with Assistant(settings) as assistant:
        for number, pmid in enumerate(pmids, 1):
            record = records[pmid]
            question = str(record["QUESTION"])
            started = time.perf_counter()
            log_at = log_size(server_log)
            row: dict[str, Any] = {"pmid": pmid, "gold": _TRUTH[str(record["final_decision"])]}
            if recorder is not None:
                recorder.row = {"pmid": pmid, "question": question, "gold": row["gold"]}
            with usage_scope() as usage:
                try:
                    result = await assistant.ask(question, use_cache=False)
                except MedlitError as exc:
                    row.update(verdict="error", cited=False, error=str(exc)[:120])
                else:
                    row.update(
                        verdict=result.verdict or "none",
                        cited=any(c.pmid == pmid for c in result.citations),
                        answer=result.answer,
                    )
            row["llm_calls"] = sum(t.calls for t in usage.llm.values())
            row["prompt_tokens"] = sum(t.prompt_tokens for t in usage.llm.values())
            row["completion_tokens"] = sum(t.completion_tokens for t in usage.llm.values())
            row["seconds"] = time.perf_counter() - started
            if server_log is not None:
                row.update(served_tokens(server_log, log_at))
            rows.append(row)
            if recorder is not None and not row.get("error"):
                recorder.row.update(verdict=result.verdict, answer=result.answer, mode=result.mode)
                recorder.row["seconds"] = round(row["seconds"], 1)
                keep(recorder.row, record_to)
            if dump is not None:
                with dump.open("a") as out:
                    out.write(json.dumps({"question": question, **row}) + "\n")
            print(
                f"{number:>3} {pmid:>9} gold={row['gold']:<9} verdict={row['verdict']:<9} "
                f"{'ok ' if row['verdict'] == row['gold'] else 'BAD'} "
                f"cited={'y' if row['cited'] else 'n'} llm_calls={row['llm_calls']} "
                f"tokens={row['prompt_tokens']}+{row['completion_tokens']} "
                f"{row['seconds']:.1f}s {row.get('error', '')}",
                flush=True,
            )
    return rows


_EVALUATED = re.compile(r"\b(prompt eval|eval) time =\s*[\d.]+ ms /\s*(\d+) tokens")


def log_size(log: Path | None) -> int:
    """Where the server's log ends now (0 without one)."""
    return os.path.getsize(log) if log is not None and os.path.exists(log) else 0


def served_tokens(log: Path, offset: int) -> dict[str, int]:
    """Prompt tokens the server evaluated (a prefix its cache held is not counted) and tokens
    it generated, from its log since ``offset`` (llama.cpp's ``print_timing`` lines)."""
    if not os.path.exists(log):
        return {}
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    found = {"served_prompt_tokens": 0, "served_generated_tokens": 0}
    for kind, tokens in _EVALUATED.findall(text):
        name = "served_prompt_tokens" if kind == "prompt eval" else "served_generated_tokens"
        found[name] += int(tokens)
    return found


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Accuracy, the always-yes baseline, gold-cited rate, median latency, mean tokens and
    LLM calls per answer."""
    n = len(rows) or 1
    return {
        "verdict_accuracy": sum(r["verdict"] == r["gold"] for r in rows) / n,
        "always_yes": sum(r["gold"] == "yes" for r in rows) / n,
        "gold_cited": sum(bool(r["cited"]) for r in rows) / n,
        "p50_s": statistics.median(r["seconds"] for r in rows) if rows else 0.0,
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in rows) / n,
        "completion_tokens": sum(r.get("completion_tokens", 0) for r in rows) / n,
        "llm_calls": sum(r.get("llm_calls", 0) for r in rows) / n,
        "served_prompt_tokens": sum(r.get("served_prompt_tokens", 0) for r in rows) / n,
        "served_generated_tokens": sum(r.get("served_generated_tokens", 0) for r in rows) / n,
    }


def compare(args: argparse.Namespace, old_src: Path) -> int:
    """Both versions on the same questions, in alternating blocks of child processes."""
    env_for = {
        "old": {**os.environ, "PYTHONPATH": f"{old_src}:{ROOT}"},
        "new": {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"},
    }
    rows: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for first in range(args.start, args.start + args.n, args.block):
            size = min(args.block, args.start + args.n - first)
            order = (
                ("old", "new") if (first - args.start) // args.block % 2 == 0 else ("new", "old")
            )
            for version in order:
                dump = Path(tmp) / f"{version}-{first}.jsonl"
                command = [sys.executable, __file__, "--data", str(args.data), "--n", str(size)]
                command += ["--start", str(first), "--seed", str(args.seed), "--dump", str(dump)]
                command += ["--llm-seed", str(args.llm_seed)]
                if args.server_log is not None:
                    command += ["--server-log", str(args.server_log)]
                print(f"--- {version}: questions {first}..{first + size - 1}", flush=True)
                subprocess.run(command, env=env_for[version], check=True, stderr=subprocess.DEVNULL)
                rows[version] += [json.loads(line) for line in dump.read_text().splitlines()]
    figures = {version: summarise(found) for version, found in rows.items()}
    print(f"\n{len(rows['new'])} questions, each answered by both versions")
    print(f"{'figure':<20}{'old':>12}{'new':>12}")
    for name in figures["new"]:
        print(f"{name:<20}{figures['old'][name]:>12.3f}{figures['new'][name]:>12.3f}")
    print(
        " ".join(
            f"{version}_{name}={value:.3f}"
            for version, found in figures.items()
            for name, value in found.items()
        )
    )
    return 0


async def main(argv: list[str] | None = None) -> int:
    """Parse arguments, ask the questions, print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="PubMedQA PQA-L JSON.")
    parser.add_argument("--xml", type=Path, default=None, help="Corpus (default: beside --data).")
    parser.add_argument("--n", type=int, default=20, help="Questions to ask.")
    parser.add_argument("--start", type=int, default=0, help="Skip this many (tuning set).")
    parser.add_argument("--seed", type=int, default=10, help="Shuffle of the question order.")
    parser.add_argument("--dump", type=Path, default=None, help="Write the answers (JSONL).")
    parser.add_argument(
        "--record", type=Path, default=None, help="Keep the answers before their checks (JSONL)."
    )
    parser.add_argument(
        "--llm-seed", type=int, default=1, help="Sampling seed (unless MEDLIT_LLM_SEED is set)."
    )
    parser.add_argument(
        "--compare", type=Path, default=None, help="Another version's src: both in one run."
    )
    parser.add_argument("--block", type=int, default=5, help="Questions per block (--compare).")
    parser.add_argument(
        "--server-log",
        type=Path,
        default=None,
        help="A llama.cpp server's log: also count the tokens it says it evaluated.",
    )
    args = parser.parse_args(argv)
    if args.compare is not None and args.data.exists():
        return compare(args, args.compare.resolve())
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    records: dict[str, dict[str, Any]] = json.loads(args.data.read_text())
    xml = args.xml or args.data.with_name(args.data.stem + "_pubmed.xml")
    pmids = pick(records, args.n, args.start, args.seed)

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as eutils,
    ):
        settings = Settings(home=Path(tmp))
        if not settings.llm.model:
            print(
                "skipped: no LLM configured (set MEDLIT_LLM_MODEL and _BASE_URL)", file=sys.stderr
            )
            return 0
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0  # the fake's limit is off
        settings.local.enabled = False
        settings.search.default_source = "pubmed"
        if "seed" in type(settings.llm).model_fields and settings.llm.seed is None:
            settings.llm.seed = args.llm_seed  # a version without seeds samples as it did
        print(
            f"model {settings.llm.model} at {settings.llm.base_url}; {len(pmids)} questions "
            f"(start {args.start}, seed {args.seed}); structured output "
            f"{'on' if settings.llm.structured_output else 'off'}",
            flush=True,
        )
        rows = await run(records, pmids, settings, args.dump, args.record, args.server_log)

    figures = summarise(rows)
    confusion = Counter((r["gold"], r["verdict"]) for r in rows)
    columns = ("yes", "no", "uncertain", "none", "error")
    print("\nconfusion (rows: expert label, columns: medlit's verdict)")
    print(f"{'':10}" + "".join(f"{c:>10}" for c in columns))
    for gold in ("yes", "no", "uncertain"):
        print(f"{gold:10}" + "".join(f"{confusion[(gold, c)]:>10}" for c in columns))
    fallback = sum(1 for r in rows if r["llm_calls"] > 1 and r["verdict"] != "error")
    print(
        f"\nquestions={len(rows)} verdict_calls(line missing)={fallback} "
        f"errors={sum(r['verdict'] == 'error' for r in rows)}"
    )
    print(" ".join(f"{name}={value:.3f}" for name, value in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
