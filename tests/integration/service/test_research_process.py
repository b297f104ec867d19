"""Research jobs run in the service's research process, not on its event loop: the process
starts with the first job, a killed one is started again and resumes the job without paying
twice, and ``medlit research worker`` runs queued jobs the same way from a terminal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import httpx
import pytest

from medlit.config import Settings
from medlit.research.worker_process import ResearchProcess
from medlit.runtime import Runtime
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
from tests.integration.service.server import ServiceServer

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]

TERMINAL = ("COMPLETED", "FAILED", "CANCELLED")


def _wait_for(check: object, what: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_research_process_is_started_again_and_the_job_completes(
    rsettings: Settings, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    rsettings.research.concurrency = 1
    responder.hold("40000004", "40000005")  # the job waits in q2 when its process is killed
    with ServiceServer(rsettings) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        process: ResearchProcess = server.app.state.medlit.extras["research_process"]
        assert process.pid is None  # started by the first job, not with the service
        reply = c.post("/v1/research", json={"question": QUESTION, "depth": "quick"})
        assert reply.status_code == 202, reply.text
        job_url = reply.json()["links"]["self"]
        held = ("PMID: 40000004", "PMID: 40000005")
        _wait_for(
            lambda: any(p in str(r.json) for r in llm_server.completions for p in held),
            "the job never reached q2",
        )
        first = process.pid
        assert first is not None and first != os.getpid() and process.running
        if sys.platform.startswith("linux"):  # it runs below the server's CPU priority
            nice = os.getpriority(os.PRIO_PROCESS, first) - os.getpriority(os.PRIO_PROCESS, 0)
            assert nice == min(rsettings.service.background_nice, 19 - os.nice(0))
        assert steps(llm_server) == {"plan": 1, "extract": 4}
        unanswered = Counter({("extract", "40000004"): 1, ("extract", "40000005"): 1})
        answered_before = answered(llm_server) - unanswered

        os.kill(first, signal.SIGKILL)  # no release, no last save
        llm_server.clear()
        responder.release()
        _wait_for(lambda: c.get(job_url).json()["status"] in TERMINAL, "the job did not end")
        job = c.get(job_url).json()
        assert job["status"] == "COMPLETED", job["error"]
        assert process.pid not in (None, first) and process.running  # a new process ran it
    after = answered(llm_server)
    assert not set(answered_before) & set(after)  # nothing answered before was paid again
    assert steps(llm_server)["plan"] == 0
    assert steps(llm_server)["extract"] == 3  # q2's two (the unanswered one again) and q3's
    assert not process.running  # the service's stop stopped it


@pytest.mark.slow
def test_research_worker_command_runs_queued_jobs_until_interrupted(
    rsettings: Settings, llm_server: FakeLLMServer
) -> None:
    import asyncio

    async def queue() -> str:
        async with Runtime(rsettings) as runtime, runtime.orchestrator() as orchestrator:
            return orchestrator.create_job(QUESTION, "quick", claim=False).id

    job_id = asyncio.run(queue())
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(env_for(rsettings))
    proc = subprocess.Popen(
        [sys.executable, "-m", "medlit", "research", "worker", "--workers", "1"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal sends it: a suite started in the background (`cmd &` in a
        # script) ignores SIGINT, and a child would inherit that and never see it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    runtime = Runtime(rsettings)
    try:
        _wait_for(
            lambda: runtime.jobs.get(job_id).status.value in TERMINAL,
            "the worker never finished the job",
        )
        assert runtime.jobs.get(job_id).status.value == "COMPLETED"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        runtime.store.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert "running research jobs from" in err and "Traceback" not in err
    assert proc.returncode == 130, err
    assert steps(llm_server)["plan"] == 1
