"""Research jobs are scheduled fairly across tenants: one tenant's queue never holds up
another's job, and no tenant queues without bound (429 with Retry-After)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from medlit.config import Settings
from medlit.research.models import JobStatus, ProgressEvent
from medlit.research.worker import ResearchWorkers
from medlit.runtime import Runtime
from medlit.service.keys import KeyStore
from medlit.storage import open_store
from tests.fakes.research_responder import CLAIMS, ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
)
from tests.integration.service.server import ServiceServer

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


@pytest.fixture
async def runtime(rsettings: Settings) -> AsyncIterator[Runtime]:
    async with Runtime(rsettings) as rt:
        yield rt


async def _until(check: Callable[[], bool], what: str, limit_s: float = 60) -> float:
    """Seconds until ``check()`` (a blocking callable) is true."""
    started = time.monotonic()
    while not await asyncio.to_thread(check):
        assert time.monotonic() - started < limit_s, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)
    return time.monotonic() - started


async def test_a_tenants_job_starts_before_another_tenants_ten_queued_jobs_finish(
    runtime: Runtime, responder: ResearchResponder
) -> None:
    responder.hold(*CLAIMS)  # every job stalls at its first extraction until released
    jobs = runtime.jobs
    async with ResearchWorkers(runtime, workers=2, poll_s=0.1) as workers:
        assert workers.tenant_limit == 1  # the default: one worker is always left to others
        busy = [await workers.submit(f"{QUESTION} ({i})", "quick", "lab-b") for i in range(10)]
        await _until(lambda: jobs.lease_of(busy[0].id) is not None, "B's first job")
        submitted = time.monotonic()
        quick = await workers.submit(QUESTION, "quick", "lab-a")
        waited = await _until(lambda: jobs.lease_of(quick.id) is not None, "A's job to start")
        # A started while B's first job was still held and the other nine waited.
        b_status = [jobs.status(j.id) for j in busy]
        assert JobStatus.COMPLETED not in b_status
        assert sum(jobs.lease_of(j.id) is not None for j in busy) == 1
        responder.release()
        await _until(lambda: (jobs.status(quick.id) or JobStatus.PENDING).terminal, "A's job")
        done_s = time.monotonic() - submitted
        assert jobs.status(quick.id) is JobStatus.COMPLETED
        finished_b = sum(jobs.status(j.id) is JobStatus.COMPLETED for j in busy)
        assert finished_b <= 2, finished_b  # not behind B's ten
        for job in busy:
            await workers.cancel(job.id, "lab-b")
        await _until(lambda: all(jobs.status(j.id).terminal for j in busy), "B's jobs to end")  # type: ignore[union-attr]
    print(f"fairness: A started {waited:.2f}s after submitting, completed in {done_s:.2f}s, "
          f"with {finished_b} of B's 10 jobs completed")  # fmt: skip


async def test_one_worker_serves_tenants_in_turn(
    runtime: Runtime, responder: ResearchResponder
) -> None:
    responder.hold(*CLAIMS)
    jobs = runtime.jobs
    async with ResearchWorkers(runtime, workers=1, poll_s=0.1) as workers:
        busy = [await workers.submit(f"{QUESTION} ({i})", "quick", "lab-b") for i in range(3)]
        await _until(lambda: jobs.lease_of(busy[0].id) is not None, "B's first job")
        quick = await workers.submit(QUESTION, "quick", "lab-a")
        responder.release()
        # B's second job is older, but A has not had a turn: A's runs next, B's after it.
        await _until(lambda: (jobs.status(busy[1].id) or JobStatus.PENDING).terminal, "B's 2nd")
        a_done = _started_and_ended(jobs.events(quick.id))[1]
        b_started = _started_and_ended(jobs.events(busy[1].id))[0]
        assert a_done <= b_started, (a_done, b_started)
        for job in busy:
            await workers.cancel(job.id, "lab-b")


def _started_and_ended(events: list[tuple[int, str]]) -> tuple[str, str]:
    """When a job left PENDING, and its last event (ISO times from its stored events)."""
    seen = [ProgressEvent.model_validate_json(data) for _seq, data in events]
    started = min(e.at for e in seen if e.stage is not JobStatus.PENDING)
    return started.isoformat(), seen[-1].at.isoformat()


def test_a_full_tenant_queue_is_a_429_with_retry_after(
    rsettings: Settings, responder: ResearchResponder
) -> None:
    responder.hold(*CLAIMS)
    rsettings.service.research_tenant_queue = 2
    rsettings.service.research_process = False
    with open_store(rsettings) as store:
        _a, token_a = KeyStore(store).create("lab-a")
        _b, token_b = KeyStore(store).create("lab-b")
    body = {"question": QUESTION, "depth": "quick"}
    with (
        ServiceServer(rsettings) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        b = {"Authorization": f"Bearer {token_b}"}
        accepted = [client.post("/v1/research", json=body, headers=b) for _ in range(2)]
        assert [r.status_code for r in accepted] == [202, 202]
        refused = client.post("/v1/research", json=body, headers=b)
        assert refused.status_code == 429, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["retry-after"]) >= 1
        assert "2 research jobs queued or running" in refused.json()["detail"]
        # Another tenant is not held to B's queue.
        other = client.post(
            "/v1/research", json=body, headers={"Authorization": f"Bearer {token_a}"}
        )
        assert other.status_code == 202
        # A job of B's that ends makes room again.
        job = accepted[1].json()["id"]
        assert client.post(f"/v1/research/{job}/cancel", headers=b).status_code == 202
        deadline = time.monotonic() + 30
        while client.get(f"/v1/research/{job}", headers=b).json()["status"] != "CANCELLED":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert client.post("/v1/research", json=body, headers=b).status_code == 202
        responder.release()
