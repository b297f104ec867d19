"""The tier-1 admission rule, measured: right first answers it keeps out, wrong ones it lets in.

Each question of ``benchmarks/data/reworded_questions.tsv`` (hand-written rewordings of PubMedQA
questions, each with the article that answers it and that article's expert answer, yes or no)
is asked with ``medlit ask``'s engine against the fake E-utilities server over the 500 PubMedQA
abstracts (no model: the evidence digest; ``--llm``: the ``MEDLIT_LLM_*`` model), then asked
again at once, the way a person repeats a question. Each version of the code runs in a child
process of its own (a fresh data directory, the questions in one order), so the old rule and
the new are measured in one run on the same first answers' ground.

Per half and version, over the first answers:

- ``answers``: questions asked; ``right``: first answers whose verdict is the expert's;
  ``wrong``: whose verdict is the other one (yes for no, no for yes); the rest are
  "uncertain" or carry no verdict;
- ``admitted``: first answers the rule stored in tier 1, and of them ``admitted_right``,
  ``admitted_wrong`` and ``admitted_uncertain``;
- ``right_kept_out``: right first answers the rule did not store (each repeat of them searches
  and answers afresh);
- ``wrong_hit_rate``: ``admitted_wrong / admitted``, the share of tier-1 hits on a repeat that
  serve a wrong answer (every admitted answer repeated alike);
- ``repeat_pubmed`` / ``repeat_llm``: PubMed and model calls per repeat (0 when tier 1
  serves it); ``repeat_hits``: repeats tier 1 served; ``repeat_changed``: repeats whose
  verdict differs from the first answer's.

Below the table, the reasons the new rule kept first answers out, counted.

    python benchmarks/admission.py --old /work/base/src          # old and new, both halves
    python benchmarks/admission.py --old OLD --llm --half check  # a model answers

The last line gives every figure as ``name=value`` (``_old``/``_new`` and the half suffixed).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "reworded_questions.tsv"
SHARED = ROOT.parent / "shared" / "data" / "pubmedqa" / "pqal_dev_pubmed.xml"
_OTHER = {"yes": "no", "no": "yes"}


def _rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


async def _child(rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """Ask every question twice with the code on ``sys.path`` against a fake E-utilities
    server; what the first answer was, whether it was admitted and why, what the repeat cost."""
    from tests.fakes.eutils_server import FakeEutils

    import medlit.agent.nodes as nodes
    from medlit.assistant import Assistant
    from medlit.config import Settings
    from medlit.log import configure_logging

    configure_logging("error")
    seen: list[dict[str, Any]] = []
    admit_cache = nodes.AskNodes.admit_cache

    async def admit(this: Any, state: Any) -> dict[str, Any]:
        update = await admit_cache(this, state)
        cause = state.get("verdict_cause")
        seen.append(
            {
                "reason": str(update.get("admission_reason")),
                "confident": bool(state.get("confident")),
                "cause": cause.kind if cause is not None else None,
                "sweep": _sweep(this, state),
            }
        )
        return update

    nodes.AskNodes.admit_cache = admit  # type: ignore[method-assign]
    with FakeEutils.from_xml(xml, rate_limit=None) as eutils, tempfile.TemporaryDirectory() as home:
        os.environ.update(
            {
                "MEDLIT_HOME": home,
                "MEDLIT_PUBMED_BASE_URL": eutils.base_url,
                "MEDLIT_PUBMED_REQUESTS_PER_SECOND": "50",
                "MEDLIT_EUROPEPMC_ENABLED": "false",
                "MEDLIT_FULLTEXT_MODE": "off",
            }
        )
        records: list[dict[str, Any]] = []
        async with Assistant(Settings()) as assistant:
            for row in rows:
                seen.clear()
                first = await assistant.ask(row["question"])
                repeat = await assistant.ask(row["question"])
                records.append(
                    {
                        "id": row["id"],
                        "gold": row["answer"],
                        "verdict": first.verdict,
                        "first_hit": first.cache.tier1 == "hit",
                        "admitted": first.cache.admitted,
                        **(seen[0] if seen else {"reason": "none"}),
                        "score": first.retrieval_score,
                        "cited": len({c.pmid for c in first.citations if c.pmid}),
                        "gold_cited": row["pmid"] in {c.pmid for c in first.citations},
                        "repeat_hit": repeat.cache.tier1 == "hit",
                        "repeat_pubmed": repeat.api_calls.pubmed,
                        "repeat_llm": repeat.api_calls.llm,
                        "repeat_verdict": repeat.verdict,
                    }
                )
    return records


#: The floors of the subject bar the tune half chooses from (``cache.subject_min_score``).
GRID = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


def _sweep(nodes: Any, state: Any) -> dict[str, bool]:
    """Whether the rule admits ``state`` with each floor of :data:`GRID` (and with the
    subject bar off: "off"); empty for code without the subject bar."""
    from medlit.agent.decisions import should_cache

    cache = nodes.deps.settings.cache
    if "subject_min_score" not in type(cache).model_fields:
        return {}
    retrieved = [a.pmid for a in state.get("documents", {}).values() if a.pmid]
    return {
        str(floor): should_cache(
            state,
            nodes.agent,
            cache.model_copy(update={"subject_min_score": floor}),
            retrieved_pmids=retrieved,
        ).admit
        for floor in (None, *GRID)
    }


def _run(src: Path, rows_path: Path, xml: Path, llm: bool) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        kept = ("MEDLIT_LLM_",) if llm else ()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MEDLIT_") or k.startswith(kept or ("\0",))
        }
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(ROOT)])
        command = [sys.executable, __file__, "--child", str(out), "--data", str(rows_path)]
        subprocess.run([*command, "--xml", str(xml)], env=env, check=True)
        return [json.loads(line) for line in out.read_text().splitlines() if line]


def figures(records: list[dict[str, Any]]) -> dict[str, str]:
    """The figures of the module doc over one half's ``records`` of one version."""
    n = len(records)
    right = [r for r in records if r["verdict"] == r["gold"]]
    wrong = [r for r in records if r["verdict"] == _OTHER.get(r["gold"])]
    admitted = [r for r in records if r["admitted"]]
    admitted_wrong = sum(r in wrong for r in admitted)
    return {
        "answers": str(n),
        "right": str(len(right)),
        "wrong": str(len(wrong)),
        "admitted": str(len(admitted)),
        "admitted_right": str(sum(r in right for r in admitted)),
        "admitted_wrong": str(admitted_wrong),
        "admitted_uncertain": str(sum(r["verdict"] not in ("yes", "no") for r in admitted)),
        "right_kept_out": str(sum(not r["admitted"] for r in right)),
        "wrong_hit_rate": f"{admitted_wrong / max(len(admitted), 1):.3f}",
        "repeat_pubmed": f"{sum(r['repeat_pubmed'] for r in records) / max(n, 1):.2f}",
        "repeat_llm": f"{sum(r['repeat_llm'] for r in records) / max(n, 1):.2f}",
        "repeat_hits": str(sum(r["repeat_hit"] for r in records)),
        "repeat_changed": str(sum(r["repeat_verdict"] != r["verdict"] for r in records)),
    }


_COLUMNS = (
    "answers", "right", "wrong", "admitted", "admitted_right", "admitted_wrong",
    "admitted_uncertain", "right_kept_out", "wrong_hit_rate", "repeat_pubmed", "repeat_llm",
    "repeat_hits", "repeat_changed",
)  # fmt: skip


def _swept(records: list[dict[str, Any]], floor: str) -> list[dict[str, Any]]:
    """``records`` as the rule with the subject bar at ``floor`` would have admitted them."""
    return [{**r, "admitted": r["sweep"][floor]} for r in records]


def _sweep_table(
    records: list[dict[str, Any]], half: dict[str, str], last: dict[str, str]
) -> str | None:
    """Print the subject bar's floors on both halves; the floor the tune half chooses (the
    lowest admitting no more wrong first answers than the bar off), its figures in ``last``."""
    records = [r for r in records if r.get("sweep")]
    if not records:
        return None
    floors = list(records[0]["sweep"])
    print(f"\nthe subject bar's floor (new code; None: the bar off)\n{'half':6}{'floor':>6}"
          + "".join(f"{c:>16}" for c in _SWEPT))  # fmt: skip
    tune = [r for r in records if half[r["id"]] == "tune"]
    wrong_off = int(figures(_swept(tune, "None"))["admitted_wrong"]) if tune else 0
    chosen = next(
        (
            f
            for f in floors[1:]
            if tune and int(figures(_swept(tune, f))["admitted_wrong"]) <= wrong_off
        ),
        None,
    )
    for part in ("tune", "check"):
        mine = [r for r in records if half[r["id"]] == part]
        for floor in floors if mine else ():
            values = figures(_swept(mine, floor))
            print(f"{part:6}{floor:>6}" + "".join(f"{values[c]:>16}" for c in _SWEPT))
    if chosen is not None:
        print(f"chosen on the tune half: {chosen}")
        last["subject_floor_chosen"] = chosen
        for part in ("tune", "check"):
            mine = [r for r in records if half[r["id"]] == part]
            values = figures(_swept(mine, chosen)) if mine else {}
            last |= {f"{k}_at_chosen_{part}": values[k] for k in _SWEPT if k in values}
    return chosen


_SWEPT = ("admitted", "admitted_wrong", "admitted_uncertain", "right_kept_out", "wrong_hit_rate")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="the old code's src folder")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--xml", type=Path, default=SHARED)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--llm", action="store_true", help="answer with MEDLIT_LLM_*'s model")
    parser.add_argument("--half", choices=("tune", "check"), help="only questions of a half")
    parser.add_argument("--dump", type=Path, help="write every record of both versions (JSONL)")
    args = parser.parse_args(argv)
    rows = [r for r in _rows(args.data) if args.half is None or r["half"] == args.half]
    if args.child:
        records = asyncio.run(_child(rows, args.xml))
        args.child.write_text("\n".join(json.dumps(r) for r in records))
        return 0
    if not args.xml.exists():
        print(f"{args.xml} is absent: the shared data sets are needed", file=sys.stderr)
        return 2
    versions = ({"old": args.old} if args.old else {}) | {"new": ROOT / "src"}
    chosen = args.data
    if args.half:  # the child reads the rows chosen, from a file of its own
        chosen = Path(tempfile.mkdtemp()) / "rows.tsv"
        header = "\t".join(rows[0]) if rows else ""
        chosen.write_text("\n".join([header, *("\t".join(r.values()) for r in rows)]) + "\n")
    results = {name: _run(src, chosen, args.xml, args.llm) for name, src in versions.items()}
    if args.dump:
        args.dump.write_text(
            "\n".join(json.dumps({"code": n, **r}) for n, rs in results.items() for r in rs)
        )
    half = {r["id"]: r["half"] for r in rows}
    last: dict[str, str] = {}
    heads = {"admitted_right": "adm_right", "admitted_wrong": "adm_wrong"}
    heads |= {"admitted_uncertain": "adm_unc", "right_kept_out": "kept_out"}
    heads |= {"wrong_hit_rate": "wrong_hits", "repeat_pubmed": "rep_pubmed"}
    heads |= {"repeat_llm": "rep_llm", "repeat_hits": "rep_hits", "repeat_changed": "rep_moved"}
    print(f"{'half':6}{'code':5}" + "".join(f"{heads.get(c, c):>11}" for c in _COLUMNS))
    for part in ("tune", "check"):
        for name, records in results.items():
            mine = [r for r in records if half[r["id"]] == part]
            if not mine:
                continue
            values = figures(mine)
            print(f"{part:6}{name:5}" + "".join(f"{values[c]:>11}" for c in _COLUMNS))
            last |= {f"{key}_{name}_{part}": value for key, value in values.items()}
    _sweep_table(results.get("new", []), half, last)
    for name, records in results.items():
        out = Counter(r["reason"] for r in records if not r["admitted"])
        print(f"kept out by {name}: " + ", ".join(f"{k} {v}" for k, v in out.most_common()))
    print(" ".join(f"{k}={v}" for k, v in last.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
