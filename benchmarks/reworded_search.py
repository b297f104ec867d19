"""Reworded and expert-phrased questions, searched and answered: old code and new in one run.

Each question of ``benchmarks/data/reworded_questions.tsv`` (hand-written rewordings of PubMedQA
questions, not their titles, with the article that answers each) is asked with ``medlit ask``'s
engine (no model: the evidence digest) against the fake E-utilities server over the 500
PubMedQA abstracts, by each version of the code in a child process of its own (each question
from a fresh data directory, so no article an earlier one fetched is found locally instead; the
questions in one order). Per half, for each version:

- ``gold``: questions whose answering article is cited;
- ``calls``: PubMed requests per question (the answer's own count);
- ``refetched``: questions where an efetch asked again for a PMID the question already had;
- ``verdicts``: yes/no verdicts given, ``right`` of them equal to the article's answer;
- ``off_subject``: verdicts resting on no cited article that says the hand-labelled subject
  (the words of one of its ``|``-separated alternatives, by stem): a verdict about something
  else (strict: an article naming the subject otherwise counts here);
- ``accuracy`` (right verdicts over questions), ``precision`` (right over yes/no verdicts
  given) and ``coverage`` (yes/no verdicts given over questions); and, under the table, every
  question left without a yes or no tallied by its cause (``kind:check-or-rule`` of the
  answer's ``verdict_cause``; ``none`` where the answer gives none).

    python benchmarks/reworded_search.py --old /path/to/old/src
    python benchmarks/reworded_search.py --old OLD --llm --style expert --half check  # a model

With ``--llm``, the ``MEDLIT_LLM_*`` and ``MEDLIT_AGENT_*`` settings of the environment reach
both versions (a real model answers and the checks hold it; set ``MEDLIT_LLM_SEED`` for a
repeatable run), and the answers of both are kept in ``--dump`` if given.

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "reworded_questions.tsv"
SHARED = ROOT.parent / "shared" / "data" / "pubmedqa" / "pqal_dev_pubmed.xml"


@contextmanager
def pubmed_home(xml: Path) -> Iterator[Any]:
    """A fake E-utilities server over ``xml``'s records, and a fresh medlit home (environment)
    that asks it alone: no Europe PMC, no full text. Yields the server."""
    from tests.fakes.eutils_server import FakeEutils

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
        yield eutils


def rows_of(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def _stems(text: str) -> set[str]:
    import re

    return {w[:6] for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


async def _child(rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """Ask every question with the code on ``sys.path`` against a fake E-utilities server."""
    from medlit.assistant import Assistant
    from medlit.config import Settings
    from medlit.log import configure_logging

    configure_logging("error")
    with pubmed_home(xml) as eutils:
        records: list[dict[str, Any]] = []
        for row in rows:
            # Each question from a fresh home: no article an earlier question fetched (a
            # tenth of this corpus, after a few) is found in the local store instead.
            with tempfile.TemporaryDirectory() as home:
                os.environ["MEDLIT_HOME"] = home
                seen = len(eutils.requests("efetch"))
                async with Assistant(Settings()) as assistant:
                    result = await assistant.ask(row["question"])
                fetched = Counter(
                    pmid
                    for request in eutils.requests("efetch")[seen:]
                    for pmid in request.params.get("id", "").split(",")
                    if pmid
                )
                cited = [c.pmid for c in result.citations if c.pmid]
                cause = getattr(result, "verdict_cause", None)
                # The label's alternatives ("telmisartan|arb telmisartan"): any one said in full.
                subjects = [_stems(s) for s in row["subject"].split("|") if s.strip()]
                on_subject = [
                    pmid
                    for c in result.citations
                    if (pmid := c.pmid)
                    and any(
                        subject <= _stems(f"{c.title} {eutils_text(eutils, pmid)}")
                        for subject in subjects
                    )
                ]
                records.append(
                    {
                        "id": row["id"],
                        "calls": result.api_calls.pubmed,
                        "gold": row["pmid"] in cited,
                        "refetched": any(n > 1 for n in fetched.values()),
                        "verdict": result.verdict,
                        "answer": row["answer"],
                        "off_subject": result.verdict in ("yes", "no") and not on_subject,
                        "llm_calls": result.api_calls.llm,
                        "text": result.answer,
                        "cause": None
                        if cause is None
                        else ":".join(filter(None, (cause.kind, cause.check or cause.rule))),
                    }
                )
    return records


def eutils_text(eutils: Any, pmid: str) -> str:
    """The words the fake server holds of a record (title, abstract, MeSH)."""
    return eutils._texts.get(pmid, "")  # a benchmark reads its own fake's index


def run_child(
    script: str, src: Path, rows_path: Path, xml: Path, keep: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Run ``script --child`` with the code of ``src`` on the path over the questions of
    ``rows_path`` and the records of ``xml``; its JSON lines. The ``MEDLIT_`` settings of this
    environment are left out but those starting with a prefix of ``keep``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.jsonl"
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MEDLIT_") or k.startswith(keep or ("\0",))
        }
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(ROOT)])
        command = [sys.executable, script, "--child", str(out), "--data", str(rows_path)]
        subprocess.run([*command, "--xml", str(xml)], env=env, check=True)
        return [json.loads(line) for line in out.read_text().splitlines() if line]


def _run(src: Path, rows_path: Path, xml: Path, llm: bool) -> list[dict[str, Any]]:
    return run_child(__file__, src, rows_path, xml, ("MEDLIT_LLM_", "MEDLIT_AGENT_") if llm else ())


def _figures(records: list[dict[str, Any]]) -> dict[str, str]:
    n = len(records)
    verdicts = [r for r in records if r["verdict"] in ("yes", "no")]
    right = sum(r["verdict"] == r["answer"] for r in verdicts)
    return {
        "accuracy": f"{right / max(n, 1):.3f}",
        "precision": f"{right / max(len(verdicts), 1):.3f}",
        "coverage": f"{len(verdicts) / max(n, 1):.3f}",
        "gold": f"{sum(r['gold'] for r in records)}/{n}",
        "calls": f"{sum(r['calls'] for r in records) / max(n, 1):.2f}",
        "refetched": str(sum(r["refetched"] for r in records)),
        "verdicts": str(len(verdicts)),
        "right": str(sum(r["verdict"] == r["answer"] for r in verdicts)),
        "off_subject": str(sum(r["off_subject"] for r in records)),
        "uncertain": str(sum(r["verdict"] == "uncertain" for r in records)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="the old code's src folder")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--xml", type=Path, default=SHARED)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--llm", action="store_true", help="answer with MEDLIT_LLM_*'s model")
    parser.add_argument("--style", choices=("plain", "expert"), help="only questions of a style")
    parser.add_argument("--half", choices=("tune", "check"), help="only questions of a half")
    parser.add_argument("--dump", type=Path, help="write every answer of both versions (JSONL)")
    args = parser.parse_args(argv)
    rows = [
        r
        for r in rows_of(args.data)
        if (args.style is None or r["style"] == args.style)
        and (args.half is None or r["half"] == args.half)
    ]
    if args.child:
        records = asyncio.run(_child(rows, args.xml))
        args.child.write_text("\n".join(json.dumps(r) for r in records))
        return 0
    if not args.xml.exists():
        print(f"{args.xml} is absent: the shared data sets are needed", file=sys.stderr)
        return 2
    versions = {"new": ROOT / "src"} | ({"old": args.old} if args.old else {})
    chosen = args.data
    if args.style or args.half:  # the child reads the rows chosen, from a file of its own
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
    print(f"{'half':6} {'code':4} {'gold':>7} {'calls':>6} {'refetched':>9} {'verdicts':>8} "
          f"{'right':>5} {'off_subject':>11} {'uncertain':>9}")  # fmt: skip
    for part in ("tune", "check"):
        for name, records in results.items():
            mine = [r for r in records if half[r["id"]] == part]
            if not mine:
                continue
            figures = _figures(mine)
            print(
                f"{part:6} {name:4} {figures['gold']:>7} {figures['calls']:>6} "
                f"{figures['refetched']:>9} {figures['verdicts']:>8} {figures['right']:>5} "
                f"{figures['off_subject']:>11} {figures['uncertain']:>9}"
            )
            last |= {f"{key}_{name}_{part}": value for key, value in figures.items()}
    for part in ("tune", "check"):
        for name, records in results.items():
            mine = [r for r in records if half[r["id"]] == part]
            causes = Counter(
                r.get("cause") or "none" for r in mine if r["verdict"] not in ("yes", "no")
            )
            if not mine:
                continue
            told = ", ".join(f"{cause} {n}" for cause, n in causes.most_common()) or "none"
            print(f"uncertain causes, {part} half, {name}: {told}")
    print(" ".join(f"{k}={v}" for k, v in last.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
