"""Two ``medlit serve`` processes on one PostgreSQL database, as a deployment runs them.

Each replica has its own ``MEDLIT_HOME`` (as on two hosts); what they share goes through the
database only: the answer cache, the NCBI rate-limit state and the research jobs. The fakes
(E-utilities at NCBI's 3 requests/s without a key, Europe PMC, an OpenAI-compatible LLM) run in
this process and record every request, so the tests count what the replicas paid for.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.research_responder import ARTICLES, ResearchResponder, step_of
from tests.integration.research_fixtures import QUESTION
from tests.integration.service.processes import free_port, serve_process, stop_process
from tests.integration.test_ask_flow import Q1, corpus

pytestmark = pytest.mark.slow  # service processes: seconds each to start


def _is_research(request: dict[str, Any]) -> bool:
    messages = request.get("messages") or [{}]
    return str(messages[0].get("content", "")).startswith("medlit research:")


@dataclass
class Responder:
    """Research prompts to the research responder, ask prompts to the evidence one."""

    research: ResearchResponder = field(default_factory=ResearchResponder)
    ask: EvidenceResponder = field(default_factory=lambda: EvidenceResponder(lambda p: "Yes"))

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        if _is_research(request):
            return self.research(request)
        return self.ask(request)


@dataclass
class Fakes:
    eutils: FakeEutils
    europepmc: FakeEuropePMC
    llm: FakeLLMServer
    responder: Responder


@pytest.fixture(scope="module")
def fakes() -> Iterator[Fakes]:
    responder = Responder()
    with (
        FakeEutils(articles=[*corpus(), *ARTICLES]) as eutils,  # 3/s without a key, 429 beyond
        FakeEuropePMC(articles=ARTICLES) as europepmc,
        FakeLLMServer(responder=responder) as llm,
    ):
        yield Fakes(eutils, europepmc, llm, responder)


def replica_env(fakes: Fakes, url: str, home: Path, **more: str) -> dict[str, str]:
    """The environment of one replica: its own home, the shared database, the fakes."""
    return {
        "MEDLIT_HOME": str(home),
        "MEDLIT_DATABASE_URL": url,
        "MEDLIT_PUBMED_BASE_URL": fakes.eutils.base_url,
        "MEDLIT_PUBMED_TIMEOUT_S": "10",
        "MEDLIT_EUROPEPMC_BASE_URL": fakes.europepmc.base_url,
        "MEDLIT_LOCAL_ENABLED": "false",
        "MEDLIT_LLM_BASE_URL": fakes.llm.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
        "MEDLIT_LLM_MAX_RETRIES": "0",
        "MEDLIT_AGENT_MIN_DOCS": "2",
        "MEDLIT_AGENT_SCORE_THRESHOLD": "0.5",
        "MEDLIT_AGENT_FETCH_PER_ROUND": "5",
        "MEDLIT_LOG_LEVEL": "warning",
        **more,
    }


@pytest.fixture(scope="module")
def replicas(
    fakes: Fakes, pg_module_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """Two replicas (two research workers each) on one database: their base URLs."""
    root = tmp_path_factory.mktemp("replicas")
    procs: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for name in ("a", "b"):
            port = free_port()
            env = replica_env(fakes, pg_module_url, root / name)
            procs.append(serve_process(env, port, log=root / f"{name}.log"))
            urls.append(f"http://127.0.0.1:{port}")
        yield urls
    finally:
        for proc in procs:
            stop_process(proc)


def max_in_any_window(times: list[float], window_s: float = 1.0) -> int:
    """The most timestamps in any half-open window ``[t, t + window_s)``."""
    times = sorted(times)
    return max(
        (sum(1 for u in times[i:] if u < t + window_s) for i, t in enumerate(times)), default=0
    )


def test_an_answer_cached_through_one_replica_is_a_hit_through_the_other(
    replicas: list[str], fakes: Fakes
) -> None:
    first = httpx.post(f"{replicas[0]}/v1/ask", json={"question": Q1}, timeout=120)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["cache"]["tier1"] == "miss" and body["citations"]
    llm_calls, pubmed_calls = len(fakes.llm.completions), len(fakes.eutils.history)
    assert llm_calls >= 1
    again = httpx.post(f"{replicas[1]}/v1/ask", json={"question": Q1}, timeout=120)
    assert again.status_code == 200, again.text
    assert again.json()["cache"]["tier1"] == "hit"
    assert again.json()["answer"] == body["answer"]
    assert again.json()["api_calls"]["llm"] == 0 and again.json()["api_calls"]["pubmed"] == 0
    # Nothing was paid for the second ask, by either replica.
    assert len(fakes.llm.completions) == llm_calls
    assert len(fakes.eutils.history) == pubmed_calls


async def test_twelve_concurrent_searches_across_both_stay_within_three_per_second(
    replicas: list[str], fakes: Fakes
) -> None:
    terms = ["aspirin", "stroke", "adults", "bleeding", "placebo", "cohort",
             "statins", "metformin", "vitamin", "mammography", "trial", "dose"]  # fmt: skip
    before = len(fakes.eutils.history)
    async with httpx.AsyncClient(timeout=120) as client:
        replies = await asyncio.gather(
            *(
                client.get(f"{replicas[i % 2]}/v1/search", params={"q": term, "limit": 3})
                for i, term in enumerate(terms)
            )
        )
    assert [r.status_code for r in replies] == [200] * 12, [r.text for r in replies]
    seen = fakes.eutils.history[before:]
    assert len(seen) >= 12  # every search reached PubMed (an esearch each, efetch for hits)
    assert [r.status for r in seen].count(429) == 0
    # Every sliding 1-s window, over everything the fake has seen in this module.
    assert max_in_any_window([r.t for r in fakes.eutils.history]) <= 3
    assert all(r.json()["providers"]["pubmed"]["status"] == "ok" for r in replies)
    peak = max_in_any_window([r.t for r in seen])
    print(f"\n{len(seen)} requests, {peak} in the busiest second, {seen[-1].t - seen[0].t:.1f} s")


def test_a_research_job_submitted_to_one_replica_runs_exactly_once(
    replicas: list[str], fakes: Fakes
) -> None:
    before = len(fakes.llm.completions)
    reply = httpx.post(
        f"{replicas[0]}/v1/research", json={"question": QUESTION, "depth": "quick"}, timeout=60
    )
    assert reply.status_code == 202, reply.text
    job_id = reply.json()["id"]
    deadline = time.monotonic() + 180
    while (job := httpx.get(f"{replicas[1]}/v1/research/{job_id}", timeout=30).json())[
        "status"
    ] not in ("COMPLETED", "FAILED", "CANCELLED"):
        assert time.monotonic() < deadline, f"the job did not finish: {job['status']}"
        time.sleep(0.2)
    assert job["status"] == "COMPLETED", job.get("error")
    time.sleep(1.5)  # a second run, had one started, would have asked for its plan by now
    research = [r.json for r in fakes.llm.completions[before:] if _is_research(r.json)]
    steps = Counter(step_of(r) for r in research)
    assert steps["plan"] == 1
    assert steps["extract"] == job["findings"] == 6
    # No prompt of the job was sent twice (a second run would repeat every one of them).
    prompts = Counter(json.dumps(r["messages"], sort_keys=True) for r in research)
    assert prompts.most_common(1)[0][1] == 1
