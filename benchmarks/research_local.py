"""A research job (default ``--depth quick``) with a real model: how well each stage holds up.

The job runs through the real orchestrator with the configured LLM (``MEDLIT_LLM_*``: this
measures a real model, never a fake) and the fake E-utilities server over the PubMedQA corpus
(``../shared/data/pubmedqa/pqal_dev_pubmed.xml``, 500 real abstracts); Europe PMC and the local
corpus are off. Structured output stays as configured (on by default).

Measured:

- per stage (planner ``plan_research``, extraction ``extract_facts``, cross-reference
  ``cross_reference``, ``synthesize``): JSON replies valid at the first try, and calls that
  returned a valid object in the end (after the one repair request);
- the share of extracted quotes found verbatim in their abstracts (the others are dropped), and
  the claims dropped because their verbatim quote does not say them;
- the share of report references that bear on the question (title keeps the question's
  subject words, :func:`medlit.words.topics.on_topic`);
- sections at 300 words or marked short, and whether every reference is a retrieved article.

Usage::

    python benchmarks/research_local.py ["question"] [--depth quick]

Last line: ``status=... plan_json=... extract_json=... crossref_json=... verbatim=...
on_topic_refs=... minutes=...``.

``--pubmedqa N`` runs N jobs instead, one per PubMedQA question (a fixed sample, ``--seed``),
each question the title of an article of the corpus, and reports per job what its executive
summary did (``answered``: the model's summary kept; ``facts``: no drafted sentence kept, the
facts on the question given as found; ``not answered``: the evidence found does not answer;
``none``: no evidence), whether the question's own article is among the references, and the
claims kept and dropped. Last line: ``jobs=... completed=... answered=... facts_as_found=...
not_answered=... no_evidence=... source_cited=... claims_kept=... quote_dropped=...
claim_dropped=... claim_swapped=... claim_reversed=... claim_denied=... claim_unsaid=...
minutes=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from tests.fakes.eutils_server import FakeEutils  # noqa: E402

from medlit.config import Settings  # noqa: E402
from medlit.errors import LLMError  # noqa: E402
from medlit.research.models import ResearchJob  # noqa: E402
from medlit.research.runtime import open_orchestrator  # noqa: E402
from medlit.words.topics import anchor_terms, on_topic  # noqa: E402

DEFAULT_XML = ROOT.parent / "shared/data/pubmedqa/pqal_dev_pubmed.xml"
DEFAULT_JSON = ROOT.parent / "shared/data/pubmedqa/pqal_dev.json"
QUESTION = "Does laparoscopic surgery lead to fewer postoperative complications than open surgery?"
T = TypeVar("T", bound=BaseModel)


class CountingLLM:
    """The job's LLM client, counting the outcome of every JSON call per task."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.ok: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete_json(self, task: str, messages: Any, schema: type[T], **kw: Any) -> T:
        """Forward, counting success and failure by task."""
        try:
            out = await self.inner.complete_json(task, messages, schema, **kw)
        except LLMError:
            self.failed[str(task)] += 1
            raise
        self.ok[str(task)] += 1
        return out


def _rate(good: int, total: int) -> str:
    return f"{good / total:.2f}" if total else "n/a"


async def _run_job(
    settings: Settings, question: str, depth: str, *, verbose: bool
) -> tuple[ResearchJob, list[Any], CountingLLM, float]:
    """One job through the real orchestrator: the job, its log events, the LLM counts, minutes."""
    started = time.monotonic()
    with structlog.testing.capture_logs() as logs:
        async with open_orchestrator(settings) as orchestrator:
            counting = CountingLLM(orchestrator.llm)
            orchestrator.llm = counting
            job = orchestrator.create_job(question, depth)
            job = await orchestrator.run(
                job,
                (lambda e: print(f"  {e.stage.value} {e.message}", flush=True))
                if verbose
                else None,
            )
    return job, logs, counting, (time.monotonic() - started) / 60


def _summary_kind(summary: str) -> str:
    """What the executive summary did (see the module doc)."""
    if summary.startswith("No articles were found") or " draws no conclusion from them" in summary:
        return "none"
    if summary.startswith("The evidence found does not answer"):
        return "not answered"
    if summary.startswith("The summary below lists the verified findings directly"):
        return "facts"
    return "answered"


def _dropped(logs: list[Any]) -> Counter[str]:
    return Counter(str(e.get("reason")) for e in logs if e["event"] == "fabricated_claim_dropped")


async def _pubmedqa(args: argparse.Namespace, settings_for: Any) -> int:
    """``--pubmedqa N``: one job per sampled PubMedQA question; the table and the figures."""
    if not args.json.exists():
        print(f"skipped: {args.json} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    records = json.loads(args.json.read_text())
    pmids = sorted(records)
    random.Random(args.seed).shuffle(pmids)
    kinds: Counter[str] = Counter()  # summaries by kind
    sums: Counter[str] = Counter()  # jobs completed, own article cited, claims kept and dropped
    minutes_total = 0.0
    print(f"{'pmid':<9} {'status':<10} {'summary':<13} {'cited':<5} {'kept':>4} {'quote-':>6} "
          f"{'claim-':>6} {'swap':>6} {'revers':>6} {'denied':>6} {'unsaid':>6} {'min':>5}  "
          "question")  # fmt: skip
    for pmid in pmids[: args.pubmedqa]:
        question = records[pmid]["QUESTION"]
        with settings_for() as settings:
            job, logs, _, minutes = await _run_job(settings, question, args.depth, verbose=False)
        report = job.report
        kind = _summary_kind(report.executive_summary) if report is not None else "failed"
        cited = report is not None and any(r.pmid == pmid for r in report.references)
        dropped = _dropped(logs)
        kinds[kind] += 1
        sums.update(dropped)
        sums.update(completed=job.status.value == "COMPLETED", cited=cited, kept=len(job.findings))
        minutes_total += minutes
        print(
            f"{pmid:<9} {job.status.value:<10} {kind:<13} {'yes' if cited else 'no':<5} "
            f"{len(job.findings):>4} {dropped['quote_not_in_article']:>6} "
            f"{dropped['claim_not_in_quote']:>6} {dropped['claim_swaps_term']:>6} "
            f"{dropped['claim_reverses_quote']:>6} {dropped['claim_denied_by_article']:>6} "
            f"{dropped['claim_subject_not_in_article']:>6} {minutes:>5.1f}  {question[:70]}",
            flush=True,
        )
        if job.error:
            print(f"    error: {job.error}")
        for event in logs if args.show_dropped else []:
            if event["event"] == "fabricated_claim_dropped":
                print(f"    {event['reason']}: {event['claim']!r} over {event['quote']!r}")
            elif event["event"] == "summary_sentences_removed":
                for sentence in event["sentences"]:
                    print(f"    summary sentence removed: {sentence!r}")
    print(
        f"jobs={kinds.total()} completed={sums['completed']} "
        f"answered={kinds['answered']} facts_as_found={kinds['facts']} "
        f"not_answered={kinds['not answered']} no_evidence={kinds['none']} "
        f"source_cited={sums['cited']} claims_kept={sums['kept']} "
        f"quote_dropped={sums['quote_not_in_article']} "
        f"claim_dropped={sums['claim_not_in_quote']} "
        f"claim_swapped={sums['claim_swaps_term']} "
        f"claim_reversed={sums['claim_reverses_quote']} "
        f"claim_denied={sums['claim_denied_by_article']} "
        f"claim_unsaid={sums['claim_subject_not_in_article']} minutes={minutes_total:.1f}"
    )
    return 0


async def main(argv: list[str] | None = None) -> int:
    """Run one job (or ``--pubmedqa N``), print the per-stage table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question", nargs="?", default=QUESTION)
    parser.add_argument("--depth", default="quick")
    parser.add_argument("--xml", type=Path, default=DEFAULT_XML)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="PubMedQA questions.")
    parser.add_argument(
        "--pubmedqa", type=int, default=0, help="Run this many PubMedQA questions instead."
    )
    parser.add_argument("--seed", type=int, default=7, help="The PubMedQA sample's seed.")
    parser.add_argument(
        "--show-dropped",
        action="store_true",
        help="With --pubmedqa: list the claims dropped and the summary sentences removed.",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="The depth's time budget (a slow local model needs more than the default).",
    )
    args = parser.parse_args(argv)
    if not args.xml.exists():
        print(f"skipped: {args.xml} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    with FakeEutils.from_xml(args.xml, rate_limit=None, rate_limit_with_key=None) as eutils:

        @contextmanager
        def settings_for() -> Iterator[Settings]:
            """Settings over a fresh home: every job starts with empty caches."""
            with tempfile.TemporaryDirectory() as tmp:
                settings = Settings(home=Path(tmp))
                settings.pubmed.base_url = eutils.base_url
                settings.pubmed.requests_per_second = 50.0
                settings.europepmc.enabled = False
                settings.local.enabled = False
                if args.max_seconds:
                    settings.research.depth_config(args.depth).max_seconds = args.max_seconds
                yield settings

        with settings_for() as probe:
            if not probe.llm.model:
                print("skipped: no LLM configured (MEDLIT_LLM_MODEL, _BASE_URL)", file=sys.stderr)
                return 0
            print(
                f"model {probe.llm.model}; structured output "
                f"{'on' if probe.llm.structured_output else 'off'}; {args.depth}",
                flush=True,
            )
        if args.pubmedqa:
            return await _pubmedqa(args, settings_for)
        print(f"question: {args.question}", flush=True)
        with settings_for() as settings:
            job, logs, counting, minutes = await _run_job(
                settings, args.question, args.depth, verbose=True
            )

    invalid_first = Counter(str(e.get("task")) for e in logs if e["event"] == "llm_json_invalid")
    print(f"\nstatus {job.status.value} in {minutes:.1f} min; error: {job.error or '-'}")
    if job.plan is not None:
        for q in job.plan.sub_questions:
            print(f"  {q.id} {q.status.value:<9} articles={q.articles_found} {q.text[:90]}")
    print(f"\n{'stage':<16} {'calls':>5} {'valid 1st try':>14} {'valid in the end':>17}")
    figures: dict[str, str] = {}
    for task, name in (
        ("plan_research", "plan"),
        ("extract_facts", "extract"),
        ("cross_reference", "crossref"),
        ("synthesize", "synthesize"),
    ):
        calls = counting.ok[task] + counting.failed[task]
        first = calls - invalid_first[task]
        print(
            f"{task:<16} {calls:>5} {_rate(first, calls):>14} {_rate(counting.ok[task], calls):>17}"
        )
        figures[f"{name}_json"] = _rate(counting.ok[task], calls)
    dropped = _dropped(logs)
    dropped_quotes, unsupported = dropped["quote_not_in_article"], dropped["claim_not_in_quote"]
    kept = len(job.findings)
    figures["verbatim"] = _rate(kept, kept + dropped_quotes)
    report = job.report
    refs = report.references if report is not None else []
    anchors = anchor_terms(job.question)
    bearing = sum(1 for r in refs if on_topic(r.title, anchors))
    figures["on_topic_refs"] = _rate(bearing, len(refs))
    retrieved = all(r.article_key in job.articles for r in refs)
    for finding in job.findings:
        print(f"  finding PMID {finding.pmid}: {finding.claim[:110]!r}")
        print(f"    quote: {finding.quote[:150]!r}")
    print(
        f"\nfindings kept {kept}, quotes not in the abstract {dropped_quotes}, claims their "
        f"quote does not say {unsupported}; facts "
        f"{len(job.facts)}; references {len(refs)} (bearing on the question {bearing}; all "
        f"retrieved: {retrieved})"
    )
    if report is not None:
        print(f"summary: {report.executive_summary[:600]}")
        for section in report.sections:
            words, short = section.word_count, section.short
            print(f"  section {section.heading[:60]!r}: {words} words, short={short}")
        for line in report.limitations:
            print(f"  limitation: {line[:200]}")
    print(f"LLM calls: {sum(counting.ok.values()) + sum(counting.failed.values())} JSON")
    print(
        f"status={job.status.value} "
        + " ".join(f"{k}={v}" for k, v in figures.items())
        + f" minutes={minutes:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
