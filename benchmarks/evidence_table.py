"""Research jobs over the PubMedQA corpus: how full and how well quoted the evidence table is.

Each job runs through the real orchestrator (real sources code, store, evidence cache,
embedder, checks) against the fake E-utilities server over ``../shared/data/pubmedqa/
pqal_dev_pubmed.xml`` (500 real abstracts) and either the fake LLM server answering as a
careful model (:class:`tests.fakes.research_responder.CorpusResponder`: the default) or, with
``--real``, the model ``MEDLIT_LLM_*`` names (``../shared/tools/local_llm.sh``). The questions
are PubMedQA questions (each the title of an article of the corpus; a fixed sample).

Per job: status, evidence-table rows, the share of cells filled (of rows x 5 quoted cells), the
share of proposed cells whose quote passed (verbatim in the article and the claim check), the
references whose titles keep the question's subject, whether the question's own article is a
row, how many of the articles ``ask`` cites for the same question are rows of the table (ask
runs first, with the same settings and model; in the fake run, the fake that answers ask's
prompts), the certainty drafted, and minutes (the job's alone). Also the sub-questions the
plans kept (``sub_questions``), the articles found that a sub-question set aside as off the
question (``off_question``) and the rows the certainty moved down as indirect (``indirect``).
Last line: ``jobs=... completed=... rows=... cells_filled=... cells_passed=...
refs_on_question=... refs=... own_article_rows=... ask_cited=... ask_cited_in_table=...
sub_questions=... off_question=... indirect=... minutes=...``, per half of ``pqal_dev``
(``--half``, by the PMID as ``pubmedqa_cases.half_of`` splits it; both by default, each
suffixed ``_tune`` and ``_check``, ``--jobs`` jobs each). Another version's figures on the
same questions: run it with ``PYTHONPATH`` on that version's ``src``.

Usage::

    python benchmarks/evidence_table.py [--jobs 5] [--depth quick] [--real] [--seed 7]
        [--half tune|check|both]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402
from tests.fakes.evidence_llm import EvidenceResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402
from tests.fakes.research_responder import CorpusResponder  # noqa: E402

from medlit.assistant import Assistant  # noqa: E402
from medlit.config import Settings  # noqa: E402
from medlit.research.answer import VERDICT_HEAD  # noqa: E402
from medlit.research.models import CELLS, ResearchJob  # noqa: E402
from medlit.research.runtime import open_orchestrator  # noqa: E402
from medlit.words.topics import anchor_terms, on_topic  # noqa: E402
from pubmedqa_cases import add_half, both_halves, half_of  # noqa: E402

DATA = ROOT.parent / "shared/data/pubmedqa"


def _figures(job: ResearchJob, pmid: str, cited: set[str | None]) -> dict[str, int]:
    rows = job.evidence_table
    columns = job.columns or list(CELLS)
    filled = sum(getattr(row, name) is not None for row in rows for name in columns)
    dropped = sum(1 for row in rows for name in row.dropped if name in columns)
    refs = job.report.references if job.report else []
    anchors = anchor_terms(job.question)  # the yardstick: the same for every version measured
    questions = job.plan.sub_questions if job.plan else []
    moves = job.certainty.moves if job.certainty else []
    return {
        "sub_questions": len(questions),
        "off_question": sum(len(q.off_question) for q in questions),
        "indirect": sum(len(m.rows) for m in moves if m.domain == "indirectness"),
        "rows": len(rows),
        "cells": len(rows) * len(columns),
        "filled": filled,
        "proposed": filled + dropped,
        "findings": len(job.findings),
        "findings_proposed": sum(q.proposed_findings for q in questions),
        "quoted": sum(f.quoted for f in job.findings),
        "refs": len(refs),
        "on_question": sum(on_topic(r.title, anchors) for r in refs),
        "own": int(any(r.pmid == pmid for r in rows)),
        "ask_cited": len(cited),
        "ask_in_table": len(cited & {r.pmid for r in rows}),
    }


def _print_notes(job: ResearchJob) -> None:
    """Under a job's line: its verdict, as the report says it, and its error."""
    lead = job.report.executive_summary.strip().split("\n")[0] if job.report else ""
    if lead.startswith(VERDICT_HEAD):  # a yes/no question's
        print(f"    {lead[:160]}")
    if job.error:
        print(f"    error: {job.error}")


def _rate(good: int, total: int) -> str:
    return f"{good / total:.2f}" if total else "n/a"


async def main(argv: list[str] | None = None) -> int:
    """Run the jobs; print one line per job and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument("--depth", default="quick")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--real", action="store_true", help="Use the model MEDLIT_LLM_* names.")
    parser.add_argument("--max-seconds", type=float, default=None, help="Time budget per job.")
    parser.add_argument("--data", type=Path, default=DATA, help="The pubmedqa folder.")
    parser.add_argument(
        "--questions",
        type=Path,
        default=None,
        help="pmid<TAB>question lines (# comments) asked instead of PubMedQA's questions "
        "(benchmarks/data/research_types.tsv: the other question types).",
    )
    parser.add_argument(
        "--no-ask", action="store_true", help="Skip ask's run (halves a --real run's time)."
    )
    add_half(parser)
    args = parser.parse_args(argv)
    xml, labels = args.data / "pqal_dev_pubmed.xml", args.data / "pqal_dev.json"
    if not xml.exists() or not labels.exists():
        print(f"skipped: {DATA} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    if args.real and not os.environ.get("MEDLIT_LLM_BASE_URL"):
        print("--real needs MEDLIT_LLM_BASE_URL (../shared/tools/local_llm.sh)", file=sys.stderr)
        return 2
    records = json.loads(labels.read_text())
    pmids = sorted(records)
    random.Random(args.seed).shuffle(pmids)
    if args.questions is not None:
        asked = [
            line.split("\t", 1)
            for line in args.questions.read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ]
        records = {pmid: {"QUESTION": question.strip()} for pmid, question in asked}
        pmids = [pmid for pmid, _ in asked]
    pmids = [pmid for pmid in pmids if args.half == "both" or half_of(pmid) == args.half]
    with ExitStack() as stack:
        eutils = stack.enter_context(
            FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None)
        )
        llm = None if args.real else stack.enter_context(FakeLLMServer(CorpusResponder()))
        # The fake research model answers research prompts only: ``ask`` gets the fake that
        # answers ask's (the real model answers both).
        ask_llm = None if args.real else stack.enter_context(FakeLLMServer(EvidenceResponder()))

        @contextmanager
        def settings_for() -> Iterator[Settings]:
            with tempfile.TemporaryDirectory() as tmp:
                settings = Settings(home=Path(tmp))
                settings.pubmed.base_url = eutils.base_url
                settings.pubmed.requests_per_second = 50.0
                settings.europepmc.enabled = False
                settings.local.enabled = False
                if llm is not None:
                    settings.llm.base_url = llm.base_url
                    settings.llm.model = "fake-model"
                if args.max_seconds:
                    settings.research.depth_config(args.depth).max_seconds = args.max_seconds
                yield settings

        totals: dict[str, float] = {}
        completed = 0
        print(
            f"{'pmid':<9} {'status':<10} {'type':<10} {'rows':>4} {'filled':>6} {'passed':>6} "
            f"{'kept':>5} {'refs':>4} {'on-q':>4} {'own':>3} {'ask':>5} {'certainty':<9} "
            f"{'min':>5}  question"
        )
        for pmid in pmids[: args.jobs]:
            question = records[pmid]["QUESTION"]
            with settings_for() as settings:
                ask_settings = settings.model_copy(deep=True)
                if ask_llm is not None:
                    ask_settings.llm.base_url = ask_llm.base_url
                cited: set[str | None] = set()
                if not args.no_ask:
                    async with Assistant(ask_settings) as assistant:
                        answer = await assistant.ask(question, use_cache=False)
                    cited = {c.pmid for c in answer.citations}
                started = time.monotonic()
                async with open_orchestrator(settings) as orchestrator:
                    job = await orchestrator.run(orchestrator.create_job(question, args.depth))
            minutes = (time.monotonic() - started) / 60
            figures = _figures(job, pmid, cited)
            figures["no_ref_with_rows"] = int(bool(figures["rows"]) and not figures["refs"])
            for key, value in figures.items():
                totals[key] = totals.get(key, 0) + value
            totals["minutes"] = totals.get("minutes", 0.0) + minutes
            completed += job.status.value == "COMPLETED"
            level = job.certainty.level if job.certainty else "-"
            kept = f"{figures['findings']}/{figures['findings_proposed']}"
            print(
                f"{pmid:<9} {job.status.value:<10} {job.question_kind or '-':<10} "
                f"{figures['rows']:>4} {_rate(figures['filled'], figures['cells']):>6} "
                f"{_rate(figures['filled'], figures['proposed']):>6} {kept:>5} "
                f"{figures['refs']:>4} "
                f"{figures['on_question']:>4} {figures['own']:>3} "
                f"{figures['ask_in_table']:>2}/{figures['ask_cited']:<2} {level:<9} "
                f"{minutes:>5.1f}  {question[:60]}",
                flush=True,
            )
            _print_notes(job)
    print(
        f"jobs={min(args.jobs, len(pmids))} completed={completed} rows={int(totals['rows'])} "
        f"cells_filled={_rate(int(totals['filled']), int(totals['cells']))} "
        f"cells_passed={_rate(int(totals['filled']), int(totals['proposed']))} "
        f"findings={int(totals['findings'])} findings_proposed="
        f"{int(totals['findings_proposed'])} findings_quoted={int(totals['quoted'])} "
        f"no_ref_with_rows={int(totals['no_ref_with_rows'])} "
        f"refs_on_question={int(totals['on_question'])} refs={int(totals['refs'])} "
        f"own_article_rows={int(totals['own'])} ask_cited={int(totals['ask_cited'])} "
        f"ask_cited_in_table={int(totals['ask_in_table'])} "
        f"sub_questions={int(totals['sub_questions'])} off_question={int(totals['off_question'])} "
        f"indirect={int(totals['indirect'])} minutes={totals['minutes']:.1f}"
    )
    return 0


@both_halves
def run(argv: list[str] | None = None) -> int:
    return asyncio.run(main(argv))


if __name__ == "__main__":
    raise SystemExit(run())
