"""What a cached answer's check for new articles costs: requests and wall time, in one run.

One question, asked through :class:`medlit.assistant.Assistant` (real SQLite store, real
embedder, real HTTP) against the fake E-utilities server and the fake OpenAI-compatible
server on loopback, in five ways, ``--runs`` times each, interleaved:

- ``hit``: a cached answer not yet due (``cache.recheck_after_s`` not passed);
- ``due_nothing_new``: a cached answer past ``recheck_after_s``, nothing entered since;
- ``due_new``: the same with one new article on the question entered today (it is answered
  again; a new article each run);
- ``miss_evidence``: the question not in tier 1, its articles in tier 2 (a reworded question);
- ``miss_cold``: nothing cached (both tiers emptied first).

A cached answer is made due by moving its stored time back eight days, as time would (the
articles added by earlier runs are then in the window, and the answer rests on them: it was
answered again, or asked cold, with them). The
fakes answer in about a millisecond, so the wall times are medlit's own work (store, embedder,
graph, checks); against the real services add their round trips: about 0.3-0.5 s per
E-utilities request, seconds per model call. The request counts are what the real services
would see.

Usage::

    python benchmarks/cache_recheck.py --runs 7

Last line: ``<case>_ms=`` (median wall), ``<case>_pubmed=``, ``<case>_llm=`` (requests per
ask, median), ``due_over_hit=`` and ``miss_cold_over_due=`` (ratios of the medians).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402
from tests.fakes.evidence_llm import EvidenceResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402
from tests.integration.test_ask_flow import Q1, corpus  # noqa: E402

from medlit.assistant import Assistant  # noqa: E402
from medlit.config import Settings  # noqa: E402
from medlit.types import AbstractSection, Article  # noqa: E402

CASES = ("hit", "due_nothing_new", "due_new", "miss_evidence", "miss_cold")
DAY = 86400.0


def _new_trial(n: int) -> Article:
    return Article(
        pmid=str(39200000 + n),
        title=f"Aspirin and stroke prevention in adults: randomised trial {n}",
        abstract=[
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="Aspirin did not prevent stroke in adults compared with placebo.",
            )
        ],
        year=2026,
        publication_types=["Journal Article", "Randomized Controlled Trial"],
        language="eng",
    )


def _settings(home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings = Settings(home=home)
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.agent.min_docs = 2
    settings.agent.score_threshold = 0.5
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    return settings


def _age(assistant: Assistant) -> None:
    with assistant.deps.store.transaction() as conn:
        conn.execute("UPDATE answers SET created_at = created_at - ?, checked_at = 0", (8 * DAY,))


async def _measure(runs: int) -> dict[str, list[dict[str, float]]]:
    found: dict[str, list[dict[str, float]]] = {case: [] for case in CASES}
    with (
        FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeLLMServer() as llm,
        tempfile.TemporaryDirectory() as home,
    ):
        llm.responder = EvidenceResponder(lambda pmids: "Yes")
        async with Assistant(_settings(Path(home), eutils, llm)) as assistant:
            await assistant.ask(Q1)  # warm: the embedder, the graph, the store

            async def timed(case: str) -> None:
                sent, asked = len(eutils.history), len(llm.history)
                start = time.perf_counter()
                result = await assistant.ask(Q1)
                wall = (time.perf_counter() - start) * 1000.0
                found[case].append(
                    {
                        "ms": wall,
                        "pubmed": len(eutils.history) - sent,
                        "llm": len(llm.history) - asked,
                        "tier1": 1.0 if result.cache.tier1 == "hit" else 0.0,
                    }
                )

            for n in range(runs):
                await timed("hit")
                _age(assistant)
                await timed("due_nothing_new")
                _age(assistant)
                eutils.add_article(_new_trial(n), entered=datetime.now(UTC).date())
                await timed("due_new")
                assistant.deps.answers.clear()
                await timed("miss_evidence")
                assistant.deps.answers.clear()
                assistant.deps.store.clear_evidence()
                await timed("miss_cold")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="asks per case")
    args = parser.parse_args(argv)
    found = asyncio.run(_measure(args.runs))
    med: dict[str, dict[str, float]] = {
        case: {k: statistics.median(r[k] for r in rows) for k in ("ms", "pubmed", "llm")}
        for case, rows in found.items()
    }
    print(f"{'case':<18}{'p50 ms':>10}{'min ms':>10}{'PubMed':>8}{'LLM':>6}  served from tier 1")
    for case, rows in found.items():
        served = sum(int(r["tier1"]) for r in rows)
        print(
            f"{case:<18}{med[case]['ms']:>10.1f}{min(r['ms'] for r in rows):>10.1f}"
            f"{med[case]['pubmed']:>8.0f}{med[case]['llm']:>6.0f}  {served}/{len(rows)}"
        )
    figures: dict[str, Any] = {}
    for case in CASES:
        figures[f"{case}_ms"] = f"{med[case]['ms']:.1f}"
        figures[f"{case}_pubmed"] = f"{med[case]['pubmed']:.0f}"
        figures[f"{case}_llm"] = f"{med[case]['llm']:.0f}"
    figures["due_over_hit"] = f"{med['due_nothing_new']['ms'] / med['hit']['ms']:.2f}"
    figures["miss_cold_over_due"] = f"{med['miss_cold']['ms'] / med['due_nothing_new']['ms']:.2f}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
