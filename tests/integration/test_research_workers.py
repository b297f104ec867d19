"""The research worker pool: durable jobs with tenants, leases, cancel and stored progress
events, against the fake E-utilities, Europe PMC and LLM servers on loopback."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import pytest

from medlit.config import Settings
from medlit.errors import NotFoundError, ValidationError
from medlit.research.models import JobStatus, ProgressEvent, ResearchJob, SubQuestionStatus
from medlit.research.worker import ResearchWorkers
from medlit.runtime import Runtime
from medlit.service.research_routes import job_view
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
    steps,
)

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


class SimulatedKill(BaseException):
    """Raised from a progress callback: the run 'dies' mid-EXECUTING."""


@pytest.fixture
async def runtime(rsettings: Settings) -> AsyncIterator[Runtime]:
    async with Runtime(rsettings) as rt:
        yield rt


async def _wait(workers: ResearchWorkers, job_id: str, tenant: str) -> None:
    deadline = time.monotonic() + 120
    while not (await workers.get(job_id, tenant)).status.terminal:
        assert time.monotonic() < deadline, "the job did not end"
        await asyncio.sleep(0.05)


async def _collect(workers: ResearchWorkers, job_id: str, tenant: str, after: int = 0
                   ) -> list[ProgressEvent]:  # fmt: skip
    return [e async for e in workers.events(job_id, tenant, after)]


async def test_a_submitted_job_runs_and_its_numbered_events_can_be_replayed(
    runtime: Runtime, llm_server: FakeLLMServer
) -> None:
    async with ResearchWorkers(runtime, workers=2, poll_s=0.1) as workers:
        job = await workers.submit(QUESTION, "quick", "lab-a")
        assert job.status is JobStatus.PENDING and job.tenant == "lab-a"
        events = await asyncio.wait_for(_collect(workers, job.id, "lab-a"), 120)
        done = await workers.get(job.id, "lab-a")
        assert done.status is JobStatus.COMPLETED, done.error
        # Followed live from the first (queued) event to the last; ids 1, 2, 3...
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert events[0].stage is JobStatus.PENDING and events[0].message == "queued"
        assert events[-1].stage is JobStatus.COMPLETED
        assert {e.stage for e in events} >= {
            JobStatus.PLANNING, JobStatus.EXECUTING, JobStatus.VERIFYING, JobStatus.SYNTHESIZING,
        }  # fmt: skip
        # A client that saw event 3 gets exactly the rest.
        rest = await _collect(workers, job.id, "lab-a", after=3)
        assert [e.seq for e in rest] == [e.seq for e in events[3:]]
        assert [e.message for e in rest] == [e.message for e in events[3:]]
        rows, total = await workers.list("lab-a")
        assert total == 1 and rows[0][0] == job.id and rows[0][1] == "COMPLETED"
    assert steps(llm_server)["plan"] == 1


async def test_tenants_never_see_each_others_jobs(runtime: Runtime) -> None:
    async with ResearchWorkers(runtime, workers=1, poll_s=0.1) as workers:
        job = await workers.submit(QUESTION, "quick", "lab-a")
        with pytest.raises(NotFoundError) as missing:
            await workers.get(job.id, "lab-b")
        with pytest.raises(NotFoundError) as also_missing:
            await workers.get("0" * 12, "lab-b")
        assert str(missing.value).replace(job.id, "X") == str(also_missing.value).replace(
            "0" * 12, "X"
        )  # the same answer as for an id that exists nowhere
        with pytest.raises(NotFoundError):
            await workers.get(job.id[:6], "lab-a")  # no prefix lookups over the API
        with pytest.raises(NotFoundError):
            await workers.cancel(job.id, "lab-b")
        with pytest.raises(NotFoundError):
            await _collect(workers, job.id, "lab-b")
        assert await workers.list("lab-b") == ([], 0)
        await _wait(workers, job.id, "lab-a")
        assert (await workers.get(job.id, "lab-a")).status is JobStatus.COMPLETED
        with pytest.raises(ValidationError):
            await workers.list("lab-a", limit=0)


async def test_cancel_stops_a_running_job_and_a_queued_one(
    runtime: Runtime, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    runtime.settings.research.concurrency = 1
    responder.hold("40000004")  # q2's first extraction waits until the cancels are in
    async with ResearchWorkers(runtime, workers=1, poll_s=0.1) as workers:
        running = await workers.submit(QUESTION, "quick", "lab-a")
        queued = await workers.submit(QUESTION + " Again.", "quick", "lab-a")
        deadline = time.monotonic() + 120
        while not any("PMID: 40000004" in str(r.json) for r in llm_server.completions):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        # The queued job (one worker, busy) ends at once, without a single LLM call.
        cancelled = await workers.cancel(queued.id, "lab-a")
        assert cancelled.status is JobStatus.CANCELLED
        # The running one stops after the sub-question in flight.
        await workers.cancel(running.id, "lab-a")
        responder.release()
        events = await asyncio.wait_for(_collect(workers, running.id, "lab-a"), 120)
        job = await workers.get(running.id, "lab-a")
        assert job.status is JobStatus.CANCELLED and events[-1].stage is JobStatus.CANCELLED
        assert job.failed_stage is JobStatus.EXECUTING
        assert job.plan is not None and job.plan.get("q3").status is SubQuestionStatus.PENDING  # type: ignore[union-attr]
        assert job.report is None
        queued_events = await _collect(workers, queued.id, "lab-a")
        assert [e.stage for e in queued_events] == [JobStatus.PENDING, JobStatus.CANCELLED]
        # Cancelling an ended job changes nothing.
        assert (await workers.cancel(running.id, "lab-a")).status is JobStatus.CANCELLED
    assert steps(llm_server) == {"plan": 1, "extract": 5}  # q1 (3) and q2 (2), not q3
    # A person may still resume a cancelled job: it continues where it stopped.
    llm_server.clear()
    async with runtime.orchestrator() as orchestrator:
        resumed = await orchestrator.resume(running.id[:8])
    assert resumed.status is JobStatus.COMPLETED, resumed.error
    assert steps(llm_server)["plan"] == 0 and steps(llm_server)["extract"] == 1  # q3 only


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "pass"], check=True)
    del proc
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_jobs_left_by_dead_or_expired_holders_are_resumed_without_repeating_paid_steps(
    runtime: Runtime, llm_server: FakeLLMServer
) -> None:
    runtime.settings.research.concurrency = 1

    def kill_after_q1(event: ProgressEvent) -> None:
        if event.message == "q1 completed":
            raise SimulatedKill

    async with runtime.orchestrator() as orchestrator:
        first = orchestrator.create_job(QUESTION, "quick", tenant="lab-a")
        with pytest.raises(SimulatedKill):
            await orchestrator.run(first, kill_after_q1)
        second = orchestrator.create_job(QUESTION + " Later.", "quick", tenant="lab-a")
    jobs = runtime.jobs
    assert steps(llm_server) == {"plan": 1, "extract": 3}
    # `first` is held by a process of this host that is gone (kill -9): taken over at once;
    # `second` by a worker on another host whose lease runs out in 0.5 s.
    dead = f"{socket.gethostname()}/{_dead_pid()}/worker0-dead"
    assert jobs.claim(first.id, dead, time.time(), 600, steal_from=jobs.lease_of(first.id))
    assert jobs.claim(second.id, "elsewhere/1/worker0-x", time.time(), 0.5,
                      steal_from=jobs.lease_of(second.id))  # fmt: skip
    llm_server.clear()
    async with ResearchWorkers(runtime, workers=2, poll_s=0.1) as workers:
        await _wait(workers, first.id, "lab-a")
        done = await workers.get(first.id, "lab-a")
        assert done.status is JobStatus.COMPLETED and done.resumed == 1
        await _wait(workers, second.id, "lab-a")
        assert (await workers.get(second.id, "lab-a")).status is JobStatus.COMPLETED
    again = steps(llm_server)
    assert again["plan"] == 1  # the second job's only: the first's plan is not redone
    # q1's three extractions are not redone; q2 and q3 of the first job (3), and the
    # second job's (q1 answered from the evidence cache: re-extracted for its own findings).
    assert again["extract"] == 3 + 6
    assert len(done.findings) == 6


async def test_leases_are_claimed_by_one_worker_and_saves_need_the_lease(
    runtime: Runtime,
) -> None:
    from medlit.errors import LeaseLost

    async with runtime.orchestrator() as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick", claim=False)
    jobs = runtime.jobs
    now = time.time()
    results = await asyncio.gather(
        *(asyncio.to_thread(jobs.claim, job.id, f"w{i}", now, 30) for i in range(8))
    )
    assert sum(results) == 1
    winner = f"w{results.index(True)}"
    other = "w9"
    with pytest.raises(LeaseLost):
        jobs.save(job, owner=other)
    jobs.save(job, owner=winner)
    assert jobs.renew(job.id, winner, now, 30) and not jobs.renew(job.id, other, now, 30)
    jobs.release(job.id, winner)
    assert jobs.claim(job.id, other, now, 30)


def test_cli_cancels_a_queued_job(rsettings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from medlit.cli import app
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(rsettings)
    try:
        job = ResearchJob(question=QUESTION, depth="quick")
        jobs.insert(job)
    finally:
        db.close()
    monkeypatch.setenv("MEDLIT_HOME", str(rsettings.home))
    runner = CliRunner()
    result = runner.invoke(app, ["research", "cancel", job.id[:6]])
    assert result.exit_code == 0, result.output
    assert "CANCELLED" in result.stdout
    status = runner.invoke(app, ["research", "status", job.id])
    assert "cancelled in PENDING" in status.stdout
    again = runner.invoke(app, ["research", "cancel", job.id])
    assert "already ended: CANCELLED" in again.stdout


async def test_events_of_a_failed_job_resumed_later_go_on_to_the_end(
    runtime: Runtime, responder: ResearchResponder
) -> None:
    responder.fail = {"plan"}
    async with ResearchWorkers(runtime, workers=1, poll_s=0.1) as workers:
        job = await workers.submit(QUESTION, "quick", "default")
        failed = await asyncio.wait_for(_collect(workers, job.id, "default"), 120)
        assert [e.stage for e in failed][-1] is JobStatus.FAILED
        responder.fail = set()
        async with runtime.orchestrator() as orchestrator:  # `medlit research resume JOB`
            done = await orchestrator.resume(job.id)
        assert done.status is JobStatus.COMPLETED, done.error
        events = await asyncio.wait_for(_collect(workers, job.id, "default"), 120)
    stages = [e.stage for e in events]
    assert stages[: len(failed)] == [e.stage for e in failed]  # the first run, as it was
    assert stages[-1] is JobStatus.COMPLETED and JobStatus.SYNTHESIZING in stages
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_stop_mid_job_gives_the_job_back_and_a_new_pool_finishes_it(
    runtime: Runtime, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    runtime.settings.research.concurrency = 1
    responder.hold("40000004", "40000005")  # the pool stops while q2 waits on its reply
    workers = ResearchWorkers(runtime, workers=1, poll_s=0.1)
    await workers.start()
    job = await workers.submit(QUESTION, "quick", "default")
    deadline = time.monotonic() + 120
    while not any("PMID: 4000000" + n in str(r.json) for r in llm_server.completions
                  for n in "45"):  # fmt: skip
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    await asyncio.wait_for(workers.stop(), 30)  # never hangs on a job in flight
    stopped = runtime.jobs.get(job.id)
    # Interrupted, and says so: in the store, in the API's view (where: EXECUTING), in its
    # last event; given back, so any worker resumes it without waiting for the lease.
    assert stopped.status is JobStatus.INTERRUPTED
    view = job_view(stopped)
    assert (view.status, view.stage) == (JobStatus.INTERRUPTED, "EXECUTING")
    last = ProgressEvent.model_validate_json(runtime.jobs.events(job.id)[-1][1])
    assert (last.stage, last.message) == (JobStatus.INTERRUPTED, "interrupted")
    assert runtime.jobs.lease_of(job.id) is None  # given back: no waiting for it to expire
    before = steps(llm_server)
    llm_server.clear()
    responder.release()
    async with ResearchWorkers(runtime, workers=1, poll_s=0.1) as again:
        await _wait(again, job.id, "default")
        # Stopped right after a job ended, too: stop() must still return.
        second = await again.submit(QUESTION + " Twice.", "quick", "default")
        await _wait(again, second.id, "default")
    assert runtime.jobs.get(job.id).status is JobStatus.COMPLETED
    assert before["plan"] == 1 and steps(llm_server)["plan"] == 1  # the second job's only
