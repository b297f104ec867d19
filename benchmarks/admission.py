"""The tier-1 admission rule, measured: right first answers it keeps out, wrong ones it lets in.

Two bases, each with its labels:

- the reworded questions (default): each question of ``benchmarks/data/reworded_questions.tsv``
  (hand-written rewordings of PubMedQA questions, each with the article that answers it and
  that article's expert answer, yes or no) is asked with ``medlit ask``'s engine against the
  fake E-utilities server over the 500 PubMedQA abstracts (no model: the evidence digest;
  ``--llm``: the ``MEDLIT_LLM_*`` model), then asked again at once, the way a person repeats
  a question. Each version of the code runs in a child process of its own (a fresh data
  directory, the questions in one order), so the old rule and the new are measured in one run;
- the recorded model answers (``--recorded``): the 133 answers of a real model to PubMedQA
  titles in ``benchmarks/data/recorded_answers.jsonl`` (``record_answers.py``, experts'
  yes / no / maybe as gold), each checked again as the check node checks it (the model's
  verdict reads replayed, ``ablation.Replay``) and its recorded evidence scored as the score
  node scores it (the real embedder), then admitted or not by the new rule and by the old
  code's ``should_cache`` (``--old``), in this process. No repeat is asked.

Per half and version, over the first answers:

- ``answers``: questions asked; ``right``: first answers whose verdict is the experts';
  ``wrong``: a yes or no the experts did not give; the rest are "uncertain" or carry no
  verdict;
- ``admitted``: first answers the rule stored in tier 1, and of them ``admitted_right``,
  ``admitted_wrong`` and ``admitted_uncertain``;
- ``right_kept_out``: right first answers the rule did not store (each repeat of them searches
  and answers afresh);
- ``wrong_hit_rate``: ``admitted_wrong / admitted``, the share of tier-1 hits on a repeat that
  serve a wrong answer (every admitted answer repeated alike);
- reworded questions only: ``repeat_pubmed`` / ``repeat_llm``, PubMed and model calls per
  repeat (0 when tier 1 serves it); ``repeat_hits``, repeats tier 1 served;
  ``repeat_changed``, repeats whose verdict differs from the first answer's.

Then the new rule with the subject bar's floor (``cache.subject_min_score``) at each of
:data:`GRID` and off, on both halves, and the floors at which the tune half admits no more
wrong answers than with the bar off; last, the reasons each version kept first answers out.

    python benchmarks/admission.py --old /work/base/src          # old and new, both halves
    python benchmarks/admission.py --old OLD --llm --half check  # a model answers
    python benchmarks/admission.py --recorded --old OLD          # the recorded answers

The last line gives every figure as ``name=value`` (``_old``/``_new`` and the half suffixed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reworded_search import DATA, ROOT, SHARED, pubmed_home, rows_of, run_child

_OTHER = {"yes": "no", "no": "yes"}


async def _child(rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """Ask every question twice with the code on ``sys.path`` against a fake E-utilities
    server; what the first answer was, whether it was admitted and why, what the repeat cost."""

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
    with pubmed_home(xml):
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


RECORDED = ROOT / "benchmarks" / "data" / "recorded_answers.jsonl"


def _old_rule(src: Path) -> Any:
    """``should_cache`` of the old code's ``medlit/agent/decisions.py`` (a pure function of the
    state and the settings: loaded beside the new one, its imports from this code)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "old_decisions", src / "medlit" / "agent" / "decisions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.should_cache


async def _replayed(rows: list[dict[str, Any]], xml: bytes, old: Path | None) -> list[Any]:
    """The recorded model answers (``record_answers.py``) as the ask's state ends: each
    answer checked again as the check node checks it (``ablation.Replay``, the model's
    verdict reads replayed), its evidence scored as the score node scores it (the real
    embedder over the recorded evidence's articles), then admitted or not by each rule."""
    import numpy as np

    from ablation import READS, Reads, Replay
    from medlit.agent.decisions import should_cache
    from medlit.agent.scoring import score_evidence
    from medlit.cache.chunking import chunk_article
    from medlit.config import AgentSettings, CacheSettings
    from medlit.embeddings.onnx import OnnxEmbedder
    from medlit.sources.pubmed_xml import parse_pubmed_xml
    from medlit.types import Citation, Evidence
    from medlit.words.frame import read_frame
    from pubmedqa_cases import half_of

    articles = {a.pmid: a for a in parse_pubmed_xml(xml) if a.pmid}
    embedder, kept, agent = OnnxEmbedder(), Reads(READS), AgentSettings()
    old_rule = _old_rule(old) if old is not None else None
    out: list[dict[str, Any]] = []
    for row in rows:
        replay = Replay(row, articles, kept)
        checked, verdict = await replay.checked(frozenset())
        read = {p: a.as_read() for p, a in replay.articles.items()}
        chunks = [c for a in read.values() for c in chunk_article(a)]
        vectors = np.asarray(embedder.embed([row["standalone"], *(c.text for c in chunks)]))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        by_key = {a.key: a for a in read.values()}
        report = score_evidence(
            [
                Evidence(chunk=c, article=by_key[c.article_key], similarity=float(v @ vectors[0]))
                for c, v in zip(chunks, vectors[1:], strict=True)
            ],
            agent,
        )
        fallback = checked.fallback is not None  # the digest answers, with the checks' warning
        state: dict[str, Any] = {
            "frame": read_frame(row["standalone"]),
            "final_answer": checked.text or "(the digest)",
            "verdict": verdict,
            "drafted_verdict": row.get("drafted_verdict"),
            "verdict_cause": None if fallback else checked.cause,
            "citations": [Citation.from_article(read[p]) for p in checked.cited if p in read],
            "removed_citations": checked.removed,
            "left_out": len(checked.warnings) + fallback,
            "documents": by_key,
            "retrieval_score": report.retrieval_score,
            "confident": report.confident,
            "stop_reason": "threshold",
        }
        retrieved = list(read)
        new = should_cache(state, agent, CacheSettings(), retrieved_pmids=retrieved)  # type: ignore[arg-type]
        sweep = {
            str(floor): should_cache(
                state,  # type: ignore[arg-type]
                agent,
                CacheSettings(subject_min_score=floor),
                retrieved_pmids=retrieved,
            ).admit
            for floor in (None, *GRID)
        }
        record = {
            "id": row["pmid"],
            "half": half_of(row["pmid"]),
            "gold": row["gold"],
            "verdict": verdict,
            "score": report.retrieval_score,
            "confident": report.confident,
            "reason": new.reason,
            "admitted": new.admit,
            "sweep": sweep,
        }
        if old_rule is not None:
            was = old_rule(state, agent, CacheSettings(), retrieved_pmids=retrieved)
            record |= {"old_admitted": was.admit, "old_reason": was.reason}
        out.append(record)
    return out


def _run(src: Path, rows_path: Path, xml: Path, llm: bool) -> list[dict[str, Any]]:
    keep = ("MEDLIT_LLM_", "MEDLIT_AGENT_") if llm else ()
    return run_child(__file__, src, rows_path, xml, keep)


def figures(records: list[dict[str, Any]]) -> dict[str, str]:
    """The figures of the module doc over one half's ``records`` of one version."""
    n = len(records)
    right = [r for r in records if r["verdict"] == r["gold"]]
    # A yes or no the experts did not give (for a "maybe", either) is wrong.
    wrong = [r for r in records if r["verdict"] in _OTHER and r["verdict"] != r["gold"]]
    admitted = [r for r in records if r["admitted"]]
    admitted_wrong = sum(r in wrong for r in admitted)
    repeats = {}
    if records and "repeat_pubmed" in records[0]:
        repeats = {
            "repeat_pubmed": f"{sum(r['repeat_pubmed'] for r in records) / max(n, 1):.2f}",
            "repeat_llm": f"{sum(r['repeat_llm'] for r in records) / max(n, 1):.2f}",
            "repeat_hits": str(sum(r["repeat_hit"] for r in records)),
            "repeat_changed": str(sum(r["repeat_verdict"] != r["verdict"] for r in records)),
        }
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
        **repeats,
    }


_COLUMNS = (
    "answers", "right", "wrong", "admitted", "admitted_right", "admitted_wrong",
    "admitted_uncertain", "right_kept_out", "wrong_hit_rate", "repeat_pubmed", "repeat_llm",
    "repeat_hits", "repeat_changed",
)  # fmt: skip


def _swept(records: list[dict[str, Any]], floor: str) -> list[dict[str, Any]]:
    """``records`` as the rule with the subject bar at ``floor`` would have admitted them."""
    return [{**r, "admitted": r["sweep"][floor]} for r in records]


def _sweep_table(records: list[dict[str, Any]], half: dict[str, str], last: dict[str, str]) -> None:
    """Print the subject bar's floors on both halves, and the floors at which the tune half
    admits no more wrong first answers than with the bar off (``subject_floor_safe_*``)."""
    records = [r for r in records if r.get("sweep")]
    if not records:
        return
    floors = list(records[0]["sweep"])
    print(f"\nthe subject bar's floor (new code; None: the bar off)\n{'half':6}{'floor':>6}"
          + "".join(f"{c:>20}" for c in _SWEPT))  # fmt: skip
    for part in ("tune", "check"):
        mine = [r for r in records if half[r["id"]] == part]
        for floor in floors if mine else ():
            values = figures(_swept(mine, floor))
            print(f"{part:6}{floor:>6}" + "".join(f"{values[c]:>20}" for c in _SWEPT))
    tune = [r for r in records if half[r["id"]] == "tune"]
    if not tune:
        return
    wrong_off = int(figures(_swept(tune, "None"))["admitted_wrong"])
    safe = [f for f in floors[1:] if int(figures(_swept(tune, f))["admitted_wrong"]) <= wrong_off]
    if safe:
        print(f"floors admitting no more wrong tune answers than the bar off: {', '.join(safe)}")
        last |= {"subject_floor_safe_min": safe[0], "subject_floor_safe_max": safe[-1]}


_SWEPT = ("admitted", "admitted_wrong", "admitted_uncertain", "right_kept_out", "wrong_hit_rate")


def _report(results: dict[str, list[dict[str, Any]]], half: dict[str, str]) -> None:
    """Print the table, the sweep and the reasons kept out; the last line of figures."""
    last: dict[str, str] = {}
    heads = {"admitted_right": "adm_right", "admitted_wrong": "adm_wrong"}
    heads |= {"admitted_uncertain": "adm_unc", "right_kept_out": "kept_out"}
    heads |= {"wrong_hit_rate": "wrong_hits", "repeat_pubmed": "rep_pubmed"}
    heads |= {"repeat_llm": "rep_llm", "repeat_hits": "rep_hits", "repeat_changed": "rep_moved"}
    some = next(iter(results.values()), [])
    columns = [c for c in _COLUMNS if c in figures(some)]
    print(f"{'half':6}{'code':5}" + "".join(f"{heads.get(c, c):>11}" for c in columns))
    for part in ("tune", "check"):
        for name, records in results.items():
            mine = [r for r in records if half[r["id"]] == part]
            if not mine:
                continue
            values = figures(mine)
            print(f"{part:6}{name:5}" + "".join(f"{values[c]:>11}" for c in columns))
            last |= {f"{key}_{name}_{part}": value for key, value in values.items()}
    _sweep_table(results.get("new", []), half, last)
    for name, records in results.items():
        out = Counter(r["reason"] for r in records if not r["admitted"])
        print(f"kept out by {name}: " + ", ".join(f"{k} {v}" for k, v in out.most_common()))
    print(" ".join(f"{k}={v}" for k, v in last.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="the old code's src folder")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--xml", type=Path, default=SHARED)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--llm", action="store_true", help="answer with MEDLIT_LLM_*'s model")
    parser.add_argument(
        "--recorded",
        nargs="?",
        const=RECORDED,
        type=Path,
        help="measure on the recorded model answers instead (record_answers.py)",
    )
    parser.add_argument("--half", choices=("tune", "check"), help="only questions of a half")
    parser.add_argument("--dump", type=Path, help="write every record of both versions (JSONL)")
    args = parser.parse_args(argv)
    if not args.xml.exists():
        print(f"{args.xml} is absent: the shared data sets are needed", file=sys.stderr)
        return 2
    if args.recorded:
        from medlit.log import configure_logging

        configure_logging("error")
        lines, xml = args.recorded.read_text().splitlines(), args.xml.read_bytes()
        replayed = asyncio.run(
            _replayed([json.loads(line) for line in lines if line.strip()], xml, args.old)
        )
        replayed = [r for r in replayed if args.half is None or r["half"] == args.half]
        results = {"new": replayed}
        if args.old:
            results = {
                "old": [{**r, "admitted": r["old_admitted"], "reason": r["old_reason"]}
                        for r in replayed],
                **results,
            }  # fmt: skip
        if args.dump:
            args.dump.write_text("\n".join(json.dumps(r) for r in replayed))
        _report(results, {r["id"]: r["half"] for r in replayed})
        return 0
    rows = [r for r in rows_of(args.data) if args.half is None or r["half"] == args.half]
    if args.child:
        records = asyncio.run(_child(rows, args.xml))
        args.child.write_text("\n".join(json.dumps(r) for r in records))
        return 0
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
    _report(results, {r["id"]: r["half"] for r in rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
