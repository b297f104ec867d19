"""A bounded pool of research workers: the service's way to run jobs durably.

::

    workers = ResearchWorkers(runtime, workers=2)
    await workers.start()                       # also resumes jobs a dead process left behind
    job = await workers.submit(question, "quick", tenant="lab-a")      # PENDING, queued
    async for event in workers.events(job.id, "lab-a", after=0): ...  # stored, then live
    await workers.cancel(job.id, "lab-a")       # CANCELLED at the job's next step
    await workers.stop()                        # running jobs: INTERRUPTED, progress kept

Jobs live in the store, not in this object: a worker claims one with a lease
(:meth:`JobStore.claim`), runs it through the orchestrator (which renews the lease, saves after
every step, checks for a cancel between steps and stores numbered progress events), and takes
the next. Any worker of any process sharing the store may pick up a job whose lease has expired;
a job held by a process of this host that has died (kill -9) is taken over at once. The
orchestrator's ``resume`` skips completed stages and sub-questions, so no paid step runs twice.

Every tenant sees only its own jobs: another tenant's job id is "not found". Tenants share the
workers fairly, through the store (so across processes): waiting jobs are taken one tenant at a
time, the tenant with the fewest jobs running first, and no tenant runs more than
``tenant_limit`` at once (by default one fewer than the workers, so another tenant's job always
finds one free). How many jobs a tenant may queue is the service's to bound
(``service.research_tenant_queue``).
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, suppress
from typing import TYPE_CHECKING

from medlit.errors import JobBusy, LeaseLost, MedlitError, ValidationError
from medlit.log import get_logger
from medlit.research.jobs import JobStore, new_owner, owner_is_dead
from medlit.research.models import JobStatus, ProgressEvent, ResearchJob

if TYPE_CHECKING:
    from medlit.research.orchestrator import ResearchOrchestrator
    from medlit.runtime import Runtime

__all__ = ["ResearchWorkers"]

log = get_logger("research.worker")

MAX_PAGE = 100


class ResearchWorkers:
    """Run research jobs from the store, ``workers`` at a time.

    Args:
        runtime: the composition root (store, sources, LLM client...).
        workers: jobs run at once in this process (each job also researches
            ``settings.research.concurrency`` sub-questions at once); 0: this process only
            accepts, lists, cancels and streams jobs, and another runs them (the service's
            research process, :mod:`medlit.research.worker_process`).
        lease_s: a job claim's lifetime unless renewed (default ``settings.research.lease_s``).
        poll_s: how often an idle worker looks for jobs submitted by other processes or left
            by dead ones (jobs submitted here wake a worker at once), and how often an event
            stream looks for events stored by another process.
        on_submit: called after a job is accepted here (e.g. to wake the process that runs it).
        tenant_limit: jobs one tenant may run at once across every process over the store
            (default ``settings.service.research_tenant_concurrency``; 0 there: one fewer
            than ``workers``, at least 1).
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        workers: int = 2,
        lease_s: float | None = None,
        poll_s: float = 1.0,
        on_submit: Callable[[], None] | None = None,
        tenant_limit: int | None = None,
    ) -> None:
        if workers < 0:
            raise ValidationError("--workers-research must not be negative")
        if tenant_limit is None:
            tenant_limit = runtime.settings.service.research_tenant_concurrency
        self.tenant_limit = tenant_limit or max(1, workers - 1)
        self.runtime = runtime
        self.workers = workers
        self.lease_s = lease_s or runtime.settings.research.lease_s
        self.poll_s = poll_s
        self.on_submit = on_submit
        self._orchestrator: ResearchOrchestrator | None = None
        self._stack = AsyncExitStack()
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()  # a job was submitted here
        self._changed = asyncio.Event()  # an event was stored here (replaced after each set)
        self._running: dict[str, str] = {}  # job id -> owner, jobs running in this process
        self._warm: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # after start()

    @property
    def jobs(self) -> JobStore:
        """The job store."""
        return self.runtime.jobs

    @property
    def orchestrator(self) -> ResearchOrchestrator:
        """The orchestrator (after :meth:`start`)."""
        if self._orchestrator is None:
            raise RuntimeError("ResearchWorkers.start() was not called")
        return self._orchestrator

    # -- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Open the orchestrator and start the workers; they first pick up the jobs that
        were accepted but not finished (by a process that stopped or died)."""
        if self._orchestrator is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._orchestrator = await self._stack.enter_async_context(self.runtime.orchestrator())
        self._orchestrator.lease_s = self.lease_s
        await asyncio.to_thread(lambda: self.jobs)  # migrations, off the event loop
        if self.workers:
            self._warm = asyncio.create_task(asyncio.to_thread(self._warm_up))
        self._tasks = [
            asyncio.create_task(self._work(new_owner(f"worker{i}")), name=f"research-worker-{i}")
            for i in range(self.workers)
        ]
        log.info("research_workers_started", workers=self.workers, lease_s=self.lease_s)

    async def stop(self) -> None:
        """Stop the workers. A running job saves what it has done and gives its lease back,
        so the next start (here or in another process) resumes it at once."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        if self._warm is not None:
            with suppress(Exception):
                await self._warm
            self._warm = None
        await self._stack.aclose()
        self._orchestrator = self._loop = None

    async def __aenter__(self) -> ResearchWorkers:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the API -------------------------------------------------------------------------

    async def submit(self, question: str, depth: str, tenant: str) -> ResearchJob:
        """Accept a job: validated, the LLM checked, saved PENDING; a worker picks it up.

        Raises:
            ValidationError: bad question or depth.
            LLMConfigError: no model for a research task.
        """
        orchestrator = self.orchestrator
        job = await asyncio.to_thread(
            orchestrator.create_job, question, depth, tenant=tenant, claim=False
        )
        event = ProgressEvent(job_id=job.id, stage=JobStatus.PENDING, message="queued")
        await asyncio.to_thread(self._store_event, event)
        self.wake()
        if self.on_submit is not None:
            await asyncio.to_thread(self.on_submit)
        return job

    def wake(self) -> None:
        """Look for a job now (one was submitted), not at the next poll."""
        self._wake.set()

    def runnable(self) -> bool:
        """Whether a job waits for a worker (free, expired, or held by a dead process of this
        host). Blocking: call it from a thread."""
        return bool(self._candidates())

    async def get(self, job_id: str, tenant: str) -> ResearchJob:
        """The tenant's job.

        Raises:
            NotFoundError: no such job for this tenant (whether or not another has it).
        """
        return await asyncio.to_thread(self.jobs.get, job_id, tenant)

    async def list(
        self, tenant: str, limit: int = 20, offset: int = 0
    ) -> tuple[list[tuple[str, str, str, str, str]], int]:
        """A page of the tenant's jobs, newest first, and how many it has in all.

        Raises:
            ValidationError: limit outside 1..100 or a negative offset.
        """
        if not 1 <= limit <= MAX_PAGE or offset < 0:
            raise ValidationError(f"limit must be 1..{MAX_PAGE} and offset 0 or more")

        def page() -> tuple[list[tuple[str, str, str, str, str]], int]:
            return self.jobs.list(limit, offset=offset, tenant=tenant), self.jobs.count(tenant)

        return await asyncio.to_thread(page)

    async def cancel(self, job_id: str, tenant: str) -> ResearchJob:
        """Ask the job to stop; it ends CANCELLED at its next step (at once if no worker has
        it). A job that has already ended is returned unchanged.

        Raises:
            NotFoundError: no such job for this tenant.
        """
        job = await asyncio.to_thread(self.jobs.cancel, job_id, tenant)
        self._notify()
        log.info("job_cancel_requested", job=job.id, tenant=tenant, status=job.status.value)
        return job

    async def events(
        self, job_id: str, tenant: str, after: int = 0
    ) -> AsyncIterator[ProgressEvent]:
        """The job's progress events after ``after``: the stored ones, then live ones until
        the job ends (its last event is COMPLETED, FAILED or CANCELLED). A job resumed after
        it failed goes on past its FAILED event, so only the last event ends the stream.

        Raises:
            NotFoundError: no such job for this tenant (raised before the first event).
        """
        await self.get(job_id, tenant)
        last: JobStatus | None = None
        quiet = 0
        while True:
            changed = self._changed
            rows = await asyncio.to_thread(self.jobs.events, job_id, after)
            for seq, data in rows:
                event = ProgressEvent.model_validate_json(data)
                after, last = seq, event.stage
                yield event
            if rows:
                continue
            # Read after the events: a job saves its final status, then stores the event.
            status = await asyncio.to_thread(self.jobs.status, job_id)
            if status is None or status.terminal:
                if last is not None and last.terminal:
                    return  # its final event is out (a later `resume` is a new run)
                quiet += 1
                if quiet > 2:  # ended without a final event (a job from before events)
                    return
            with suppress(TimeoutError):
                async with asyncio.timeout(self.poll_s):
                    await changed.wait()

    # -- the workers ---------------------------------------------------------------------

    def _store_event(self, event: ProgressEvent) -> None:
        self.jobs.add_event(
            event.job_id, lambda seq: event.model_copy(update={"seq": seq}).model_dump_json()
        )
        self._notify_threadsafe()

    def _notify_threadsafe(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._notify)

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _claim(self, job_id: str, owner: str) -> bool:
        now = time.time()
        limit = self.tenant_limit
        if self.jobs.claim(job_id, owner, now, self.lease_s, tenant_limit=limit):
            return True
        holder = self.jobs.lease_of(job_id)
        return owner_is_dead(holder) and self.jobs.claim(
            job_id, owner, now, self.lease_s, steal_from=holder, tenant_limit=limit
        )

    def _next_job(self, owner: str) -> str | None:
        """Claim a runnable job, fairly across tenants: free or expired leases first, then
        those of dead processes."""
        for job_id in self._candidates():
            if job_id not in self._running and self._claim(job_id, owner):
                return job_id
        return None

    def _candidates(self) -> builtins.list[str]:
        candidates = self.jobs.claimable(time.time(), tenant_limit=self.tenant_limit)
        candidates += [
            job_id for job_id, holder in self.jobs.held_on_this_host() if owner_is_dead(holder)
        ]
        return candidates

    def _warm_up(self) -> None:
        """Load in a thread what a job's first steps would otherwise load on the event loop
        (:meth:`Runtime.warm_up`: seconds during which no request of the server would be
        answered)."""
        try:
            self.runtime.warm_up()
        except Exception as exc:  # warming is an optimisation: the job reports real failures
            log.warning("research_warm_up_failed", error=str(exc))

    async def _work(self, owner: str) -> None:
        if self._warm is not None:
            await asyncio.shield(self._warm)
        while True:
            try:
                job_id = await asyncio.to_thread(self._next_job, owner)
            except MedlitError as exc:
                log.warning("research_worker_poll_failed", error=str(exc))
                job_id = None
            if job_id is None:
                self._wake.clear()
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel that
                # arrives as it times out, and stop() would wait for this worker forever.
                with suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_s):
                        await self._wake.wait()
                continue
            await self._run(job_id, owner)

    async def _run(self, job_id: str, owner: str) -> None:
        self._running[job_id] = owner
        release = True
        try:
            log.info("research_job_claimed", job=job_id, owner=owner)

            def progress(_: ProgressEvent) -> None:
                self._notify()

            await self.orchestrator.resume(job_id, progress, owner=owner)
        except JobBusy as exc:
            # Run elsewhere on this host (a CLI `resume`): leave the lease to expire, so the
            # job is looked at again later rather than at every poll.
            release = False
            log.info("research_job_busy", job=job_id, reason=str(exc))
        except LeaseLost:
            release = False
        except MedlitError as exc:
            # Failed before its first stage (e.g. no model configured any more): FAILED, with
            # the reason, rather than claimed again and again.
            await asyncio.to_thread(self._fail, job_id, owner, exc)
        except Exception:
            log.exception("research_job_crashed", job=job_id)
        finally:
            self._running.pop(job_id, None)
            if release:
                with suppress(MedlitError):
                    await asyncio.to_thread(self.jobs.release, job_id, owner)
            self._notify()

    def _fail(self, job_id: str, owner: str, exc: MedlitError) -> None:
        job = self.jobs.get(job_id)
        if job.status.terminal:
            return
        job.error_type = type(exc).__name__
        job.error = str(exc) or job.error_type
        if job.status is not JobStatus.INTERRUPTED:  # else it says where it was interrupted
            job.failed_stage = job.status
        job.status = JobStatus.FAILED
        try:
            self.jobs.save(job, owner=owner)
        except LeaseLost:
            return
        self._store_event(ProgressEvent(job_id=job_id, stage=job.status, message=job.error))
