"""A ``medlit serve`` process killed (SIGKILL) during a research job: started again, it
resumes the job, which completes without paying again for any step that had been answered."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter

import httpx
import pytest

from medlit.config import Settings
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder, step_of
from tests.integration.research_fixtures import (
    QUESTION,
    env_for,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
    steps,
)

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(settings: Settings, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(env_for(settings))
    env["MEDLIT_RESEARCH_CONCURRENCY"] = "1"
    code = "from medlit.cli import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--port", str(port), "--workers-research", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except httpx.TransportError:
            assert proc.poll() is None, "medlit serve exited"
            assert time.monotonic() < deadline, "medlit serve did not start"
            time.sleep(0.1)


def _answered(server: FakeLLMServer) -> Counter[tuple[str, str]]:
    """(step, PMID named in the prompt) of the requests the fake has answered."""
    out: Counter[tuple[str, str]] = Counter()
    for record in server.completions:
        text = str(record.json)
        pmid = next((p for p in ("40000001", "40000002", "40000003", "40000004", "40000005",
                                 "40000006", "40000007") if f"PMID: {p}" in text), "")  # fmt: skip
        out[(step_of(record.json), pmid)] += 1
    return out


@pytest.mark.slow
def test_kill_9_of_the_server_mid_job_then_restart_completes_it(
    rsettings: Settings, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    # q2's first article is slow: the server is killed while waiting for its extraction.
    responder.delay_pmids = {"40000004": 30.0, "40000005": 30.0}
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(rsettings, port)
    try:
        reply = httpx.post(f"{url}/v1/research", json={"question": QUESTION, "depth": "quick"})
        assert reply.status_code == 202, reply.text
        job_id = reply.json()["id"]
        deadline = time.monotonic() + 180
        while not any(f"PMID: 4000000{n}" in str(r.json) for r in llm_server.completions
                      for n in "45"):  # fmt: skip
            assert time.monotonic() < deadline, "the job never reached q2"
            time.sleep(0.05)
        status = httpx.get(f"{url}/v1/research/{job_id}").json()
        assert status["status"] == "EXECUTING"
    finally:
        proc.send_signal(signal.SIGKILL)
        # A killed process is reaped only when all its threads are gone and its memory (torch,
        # the embedder) is torn down: 1-2 s idle, tens of seconds on a loaded machine.
        proc.wait(120)
    before_kill = steps(llm_server)
    assert before_kill == {"plan": 1, "extract": 4}  # q1's three, q2's first (never answered)
    unanswered = Counter({("extract", "40000004"): 1, ("extract", "40000005"): 1})
    answered_before = _answered(llm_server) - unanswered

    responder.delay_pmids = {}
    llm_server.clear()
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
        proc.wait(30)
    after = _answered(llm_server)
    # Nothing answered before the kill was asked for again: no plan, no q1 extraction.
    assert not set(answered_before) & set(after), set(answered_before) & set(after)
    assert steps(llm_server)["plan"] == 0
    assert steps(llm_server)["extract"] == 3  # q2's two (the unanswered one again) and q3's
    assert job["findings"] == 6
