"""The turned contrast set with a real model: old code and new, in one run.

PubMedQA questions whose expert answer is "yes" and whose frame asks a direction
(:mod:`turned_questions`) are asked through the assistant as written and turned (reduce ->
increase, prevent -> cause, improve -> worsen), over the 500 records' abstracts served by the
fake E-utilities (as ``verdicts.py``). Where the expert said yes, the articles say the opposite
of the turned question: a "yes" to it is wrong. The same questions are asked by the code at
``--old`` (a worktree, e.g. ``git worktree add --detach /tmp/old53 d5084ae``) and by this
code, one after the other, each in its own process; per half.

Usage (the model from ``MEDLIT_LLM_*``; keep it small, the local model is slow)::

    flock /tmp/llm/lock python benchmarks/turned_verdicts.py \\
        --data ../shared/data/pubmedqa/pqal_dev.json --old /tmp/old53 --n 4

Last line, per version and half: ``yes_gold_written_...=N`` (questions as written whose experts
said yes: every one asked), ``written_yes_...=k/N`` and ``turned_yes_...=k/N``.

``MEDLIT_LLM_SEED`` is passed to a version only if its settings have a ``seed``.

``--replay FILE`` needs no model: it replays answers recorded before their checks
(``record_answers.py --turned``) through this code's checks (``ablation.py``'s replay, with its
kept verdict reads), and gives the same figures, with the verdicts the recording's live run gave
beside them (``..._recorded``) and the verdict reads this code's checks wanted that no run made
(``unread``: such a verdict is the model's unread guess). Only the questions this code still
turns as they were turned count (``left_out``: a turn the frame no longer reads as the
opposite direction is no probe; a question with no turned answer recorded). This is how a
check's rule is written on the tune half and judged on the check half without asking the
model again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _questions(data: Path, n: int) -> list[dict[str, str]]:
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]
    from pubmedqa_cases import half_of
    from turned_questions import contrast_set

    rows = []
    records = json.loads(data.read_text())
    for half in ("tune", "check"):
        mine = {p: r for p, r in records.items() if half_of(p) == half}
        picked = [r for r in contrast_set(mine) if r[1] == "yes"][:n]
        rows += [{"pmid": p, "half": half, "written": q, "turned": t} for p, _, q, t, _ in picked]
    return rows


async def _ask_all(rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """Ask every question of ``rows`` as written and turned (this process's medlit)."""
    sys.path[:0] = [str(ROOT)]
    from tests.fakes.eutils_server import FakeEutils

    from medlit.assistant import Assistant
    from medlit.config import Settings

    out = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as eutils,
    ):
        settings = Settings(home=Path(tmp))
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0
        settings.local.enabled = False
        settings.search.default_source = "pubmed"
        async with Assistant(settings) as assistant:
            for row in rows:
                for form in ("written", "turned"):
                    result = await assistant.ask(row[form], use_cache=False)
                    out.append({**row, "form": form, "verdict": result.verdict or "none"})
                    print(f"  {row['half']} {form:8} {result.verdict} | {row[form]}", flush=True)
    return out


def _replay(path: Path, data: Path) -> dict[str, Any]:
    """``--replay``: the recorded rows of ``path`` checked by this code, per half."""
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]
    from ablation import READS, Reads, Replay
    from medlit.log import configure_logging
    from medlit.sources.pubmed_xml import parse_pubmed_xml
    from pubmedqa_cases import half_of

    configure_logging("error")
    xml = data.with_name(data.stem + "_pubmed.xml")
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    kept = Reads(READS)
    from turned_questions import turned

    recorded = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # Only the questions this code still turns the same way: a turn its frame no longer reads
    # as the opposite direction (a garbled one) is no probe.
    written = {r["pmid"]: r["question"] for r in recorded if r["form"] == "written"}
    pairs = {
        r["pmid"]
        for r in recorded
        if r["form"] == "turned" and turned(written[r["pmid"]]) == r["question"]
    }
    rows = [r for r in recorded if r["pmid"] in pairs]
    dropped = sorted({r["pmid"] for r in recorded} - pairs)
    print(f"{len(pairs)} recorded questions turned as this code turns them; left out: {dropped}")
    figures: dict[str, Any] = {"left_out": len(dropped)}
    unread = 0

    async def replay_all() -> list[tuple[dict[str, Any], str | None]]:
        nonlocal unread
        out = []
        for row in rows:
            replay = Replay(row, articles, kept)
            _, verdict = await replay.checked(frozenset())
            unread += replay.unread
            out.append((row, verdict))
        return out

    done = asyncio.run(replay_all())
    print(f"{'half':6} {'form':8} {'yes':>4} {'recorded_yes':>13} {'questions':>10}")
    for half in ("tune", "check"):
        for form in ("written", "turned"):
            mine = [(r, v) for r, v in done if half_of(r["pmid"]) == half and r["form"] == form]
            yes = sum(v == "yes" for _, v in mine)
            live = sum(r["verdict"] == "yes" for r, _ in mine)
            print(f"{half:6} {form:8} {yes:>4} {live:>13} {len(mine):>10}")
            for row, verdict in mine:
                if form == "turned" and verdict == "yes":
                    print(f"         turned yes: {row['question']} [{row['pmid']}]")
            figures[f"{form}_yes_{half}"] = f"{yes}/{len(mine)}"
            figures[f"{form}_yes_{half}_recorded"] = f"{live}/{len(mine)}"
    figures["unread"] = unread
    return figures


def _has_seed(env: dict[str, str]) -> bool:
    """Whether the medlit on ``env``'s ``PYTHONPATH`` has the ``llm.seed`` setting."""
    probe = "from medlit.config import LLMSettings; print('seed' in LLMSettings.model_fields)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={k: v for k, v in env.items() if not k.startswith("MEDLIT_")},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip() == "True"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/pubmedqa/pqal_dev.json"
    )
    parser.add_argument("--old", type=Path, help="a worktree of the old code")
    parser.add_argument("--n", type=int, default=4, help="questions per half")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help="replay recorded answers (no model)")
    args = parser.parse_args(argv)
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    if args.replay:
        if not (args.replay.exists() and xml.exists()):
            print(f"skipped: needs {args.replay} and {xml}", file=sys.stderr)
            return 0
        figures = _replay(args.replay, args.data)
        print(" ".join(f"{k}={v}" for k, v in figures.items()))
        return 0
    if args.child:  # one version's run: questions in, verdicts out
        rows = json.loads(args.child.read_text())
        args.child.write_text(json.dumps(asyncio.run(_ask_all(rows, xml))))
        return 0
    if not args.data.exists() or not os.environ.get("MEDLIT_LLM_MODEL"):
        print("skipped: needs ../shared/data and MEDLIT_LLM_MODEL", file=sys.stderr)
        return 0
    rows = _questions(args.data, args.n)
    results: dict[str, list[dict[str, Any]]] = {}
    versions = {"old": args.old, "new": ROOT} if args.old else {"new": ROOT}
    for name, tree in versions.items():
        print(f"{name}: {tree}", flush=True)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(rows, handle)
        env = {**os.environ, "PYTHONPATH": f"{tree}/src"}
        if "MEDLIT_LLM_SEED" in env and not _has_seed(env):
            # Code from before the seed setting rejects the variable (an unknown field).
            print(f"  {name}: no seed setting, MEDLIT_LLM_SEED not passed", flush=True)
            del env["MEDLIT_LLM_SEED"]
        subprocess.run(
            [sys.executable, __file__, "--data", str(args.data), "--child", handle.name],
            env=env,
            check=True,
        )
        results[name] = json.loads(Path(handle.name).read_text())
    figures = {}
    print(f"\n{'version':8} {'half':6} {'written_yes':>12} {'turned_yes':>11} {'questions':>10}")
    for name, got in results.items():
        for half in ("tune", "check"):
            mine = [r for r in got if r["half"] == half]
            written = sum(r["verdict"] == "yes" for r in mine if r["form"] == "written")
            turned = sum(r["verdict"] == "yes" for r in mine if r["form"] == "turned")
            n = len(mine) // 2
            print(f"{name:8} {half:6} {written:>12} {turned:>11} {n:>10}")
            figures[f"yes_gold_written_{name}_{half}"] = n
            figures[f"written_yes_{name}_{half}"] = f"{written}/{n}"
            figures[f"turned_yes_{name}_{half}"] = f"{turned}/{n}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
