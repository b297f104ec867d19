"""How long research jobs hold the event loop: the lag a server's other requests would see.

::

    python benchmarks/research_loop_lag.py [--jobs 2] [--workers 2]

Runs ``--jobs`` quick research jobs through :class:`medlit.research.worker.ResearchWorkers`
(the service's worker pool) in-process, against the fake E-utilities, Europe PMC and
OpenAI-compatible servers on loopback (the real store, embedder, caches, sources and LLM client
do the work), while a probe task sleeps 5 ms in a loop and records how late it wakes. A late
wake-up is time the loop spent in synchronous work: every HTTP request of the server waits that
long. Output: a table, then ``loop_lag_p50_ms=... loop_lag_p99_ms=... loop_lag_max_ms=...
jobs_s=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ARTICLES, ResearchResponder

from medlit.config import Settings
from medlit.research.worker import ResearchWorkers
from medlit.runtime import Runtime

QUESTION = "Does aspirin prevent recurrent ischaemic stroke, and at what bleeding cost?"
PROBE_S = 0.005


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


async def run(jobs: int, workers: int) -> tuple[list[float], float, list[str]]:
    """Lags (ms) seen by the probe, seconds for all jobs, and their final statuses."""
    with (
        FakeEutils(articles=ARTICLES) as eutils,
        FakeEuropePMC(articles=ARTICLES) as europepmc,
        FakeLLMServer(responder=ResearchResponder()) as llm,
        tempfile.TemporaryDirectory() as home,
    ):
        settings = Settings(home=Path(home))
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.api_key = "benchmark"  # type: ignore[assignment]
        settings.europepmc.base_url = europepmc.base_url
        settings.local.enabled = False
        settings.llm.base_url = llm.base_url
        settings.llm.model = "fake-model"
        async with Runtime(settings) as runtime, ResearchWorkers(runtime, workers=workers) as pool:
            lags: list[float] = []
            done = asyncio.Event()

            async def probe() -> None:
                while not done.is_set():
                    start = time.perf_counter()
                    await asyncio.sleep(PROBE_S)
                    lags.append((time.perf_counter() - start - PROBE_S) * 1000)

            prober = asyncio.create_task(probe())
            started = time.perf_counter()
            submitted = [
                await pool.submit(f"{QUESTION} ({i})", "quick", "benchmark") for i in range(jobs)
            ]
            for job in submitted:
                async for _ in pool.events(job.id, "benchmark"):
                    pass
            took = time.perf_counter() - started
            done.set()
            await prober
            statuses = [(await pool.get(j.id, "benchmark")).status.value for j in submitted]
    return lags, took, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="Quick research jobs to run.")
    parser.add_argument("--workers", type=int, default=2, help="Jobs run at once.")
    args = parser.parse_args()
    lags, took, statuses = asyncio.run(run(args.jobs, args.workers))
    p50, p99, worst = _pct(lags, 0.5), _pct(lags, 0.99), max(lags, default=0.0)
    print(f"{'jobs':>6} {'workers':>8} {'seconds':>8} {'probes':>7} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'max ms':>8}  statuses")  # fmt: skip
    print(f"{args.jobs:>6} {args.workers:>8} {took:>8.1f} {len(lags):>7} {p50:>8.1f} "
          f"{p99:>8.1f} {worst:>8.1f}  {','.join(statuses)}")  # fmt: skip
    print(f"loop_lag_p50_ms={p50:.1f} loop_lag_p99_ms={p99:.1f} loop_lag_max_ms={worst:.1f} "
          f"jobs_s={took:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
