"""A ``medlit serve`` process killed (SIGKILL) during a research job: started again, it
resumes the job, which completes without paying again for any step that had been answered."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter

import httpx
import pytest

from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    answered,
    env_for,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
    steps,
)
from tests.integration.service.processes import free_port, serve_process

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


def _serve(settings: Settings, port: int) -> subprocess.Popen[bytes]:
    env = {**env_for(settings), "MEDLIT_RESEARCH_CONCURRENCY": "1"}
    return serve_process(env, port, "--workers-research", "1")


@pytest.mark.slow
def test_kill_9_of_the_server_mid_job_then_restart_completes_it(
    rsettings: Settings,
    responder: ResearchResponder,
    llm_server: FakeLLMServer,
    eutils: FakeEutils,
) -> None:
    # q2's second reply is held: the server is killed after q2 read one of its two articles,
    # while waiting for the other.
    responder.hold("40000004")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(rsettings, port)
    try:
        reply = httpx.post(f"{url}/v1/research", json={"question": QUESTION, "depth": "quick"})
        assert reply.status_code == 202, reply.text
        job_id = reply.json()["id"]
        deadline = time.monotonic() + 180
        while not any("PMID: 40000004" in str(r.json) for r in llm_server.completions):
            assert time.monotonic() < deadline, "the job never reached q2's second article"
            time.sleep(0.05)
        status = httpx.get(f"{url}/v1/research/{job_id}").json()
        assert status["status"] == "EXECUTING"
    finally:
        proc.send_signal(signal.SIGKILL)
        # A killed process is reaped only when all its threads are gone and its memory (torch,
        # the embedder) is torn down: 1-2 s idle, tens of seconds on a loaded machine.
        proc.wait(120)
    before_kill = steps(llm_server)
    assert before_kill == {"plan": 1, "extract": 5}  # q1's three, q2's two (one unanswered)
    unanswered = Counter({("extract", "40000004"): 1})
    answered_before = answered(llm_server) - unanswered

    llm_server.clear()
    responder.release()
    searched_before = {r.params.get("term") for r in eutils.requests("esearch")}
    eutils.reset()
    proc = _serve(rsettings, port)  # the job's lease belongs to a dead process: taken at once
    try:
        deadline = time.monotonic() + 180
        while (job := httpx.get(f"{url}/v1/research/{job_id}").json())["status"] not in (
            "COMPLETED", "FAILED", "CANCELLED",
        ):  # fmt: skip
            assert time.monotonic() < deadline, f"the job did not finish: {job['status']}"
            time.sleep(0.1)
        assert job["status"] == "COMPLETED", job["error"]
        events = httpx.get(f"{url}/v1/research/{job_id}/events", timeout=30).text
        assert "COMPLETED" in events
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)  # a graceful stop tears torch down: tens of seconds under load
    after = answered(llm_server)
    # Nothing answered before the kill was asked for again: no plan, no q1 extraction, not
    # the article q2 had read.
    assert not set(answered_before) & set(after), set(answered_before) & set(after)
    assert steps(llm_server)["plan"] == 0
    assert steps(llm_server)["extract"] == 2  # q2's unanswered one again, and q3's
    assert job["findings"] == 6
    # q1 and q2 had searched: the restart takes q2's articles from the evidence cache.
    searched_after = {r.params.get("term") for r in eutils.requests("esearch")}
    assert searched_after and not searched_before & searched_after, searched_after
