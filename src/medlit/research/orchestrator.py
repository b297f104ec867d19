"""The research job state machine (seed 002), persisted and resumable.

::

    PENDING -> PLANNING -> EXECUTING -> VERIFYING -> SYNTHESIZING -> COMPLETED
                  |            |            |              |
                  +------------+------------+--------------+--> FAILED (error kept)
                  +------------+------------+--------------+--> CANCELLED (at the next step)
                  +------------+------------+--------------+--> INTERRUPTED (SIGINT, SIGTERM,
                                                                a worker pool stopping; at once)

Each stage's output is saved when the stage completes (and, while EXECUTING, after every
sub-question), with the stage added to ``completed_stages``. ``resume`` (also of a FAILED or
INTERRUPTED job, or of one whose process died mid-stage) starts at the first stage not
completed and, within EXECUTING, researches only the sub-questions not COMPLETED: paid work is
never repeated. An interrupted run saves everything answered so far, its search log included,
and a resumed sub-question takes again from the evidence cache what a logged search found
rather than sending it again (:meth:`DeepResearcher._logged_search`).
Progress goes to a callback (the CLI's Rich display) or an async iterator (:meth:`stream`, for
a streaming HTTP endpoint).

A run holds the job twice: a lock file (no second run on this host) and a lease in the store
(no second run on any host sharing it; see :mod:`medlit.research.jobs`), renewed while it
runs. Between steps (each stage, each sub-question) the run checks whether someone asked to
cancel the job (:meth:`JobStore.request_cancel`) and ends it CANCELLED if so.

The depth's budget (:class:`~medlit.research.tracking.Budget`, one per run) stops the research
at its call limits, and its seconds bound the whole job, every stage of every run: each LLM
call goes through :class:`~medlit.research.tracking.TimedLLM`, cut off when the time runs
out, and the stages after it go on without the model (the report from the verified facts).
A budget stop ends the job COMPLETED, with ``budget_stop_reason`` and the report saying why.

:meth:`ResearchOrchestrator.refresh` takes into a COMPLETED job's report the articles entered
in its sources since it last searched (:mod:`medlit.research.rerun`): nothing new, and only the
check time is saved; else the job as it was is kept as the report's old version
(:meth:`JobStore.keep_version`), the new articles are read for the sub-questions whose searches
found them, the groups of findings they add to are verified again, and the report is written
again, saying what changed (:class:`~medlit.research.models.ReportChange`). It runs as a run of
the job does (stages, lease, progress, interrupt and resume), under the depth's budget afresh.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from medlit.config import Settings
from medlit.errors import (
    JobBusy,
    JobCancelled,
    LeaseLost,
    LLMConfigError,
    MedlitError,
    ResearchError,
)
from medlit.log import get_logger
from medlit.research.answer import answer_first, verdict_of
from medlit.research.jobs import JobStore, new_owner, owner_is_dead
from medlit.research.models import (
    COLUMNS,
    DEFAULT_TENANT,
    STAGES,
    JobStatus,
    ProgressEvent,
    ReportChange,
    ReportRefresh,
    ResearchFinding,
    ResearchJob,
    SearchLogEntry,
    StageTimes,
    SubQuestion,
    SubQuestionStatus,
    job_frame,
    utcnow,
)
from medlit.research.planner import create_plan, validate_request
from medlit.research.prompts import ResearchLLM, Task
from medlit.research.report import failed_source_limitations
from medlit.research.researcher import (
    DeepResearcher,
    EvidenceCacheLike,
    FullTextFn,
    QuestionSearch,
    SearchFn,
)
from medlit.research.synthesizer import generate_report, stopped_early
from medlit.research.tracking import Budget, Spend, TimedLLM, VisitedTopics, remote_calls
from medlit.research.verifier import verify_findings
from medlit.types import Article
from medlit.usage import Usage, usage_scope

if TYPE_CHECKING:
    from medlit.research.rerun import RerunReport, SourceSearch

__all__ = ["ProgressCallback", "ResearchOrchestrator", "require_llm"]

log = get_logger("research.orchestrator")

ProgressCallback = Callable[[ProgressEvent], Awaitable[None] | None]


def require_llm(llm: ResearchLLM) -> None:
    """Fail fast, before any paid work, when a research task has no model.

    Raises:
        LLMConfigError: with the LLM client's how-to message.
    """
    for task in Task.ALL:
        if llm.is_configured(task):
            continue
        route = getattr(llm, "route", None)
        if route is not None:
            from medlit.llm.tasks import how_to_configure

            raise LLMConfigError(how_to_configure(route(task)))
        raise LLMConfigError(f"no language model is configured for task {task!r}")


class ResearchOrchestrator:
    """Runs research jobs through their stages, persisting each step.

    Args:
        settings: all settings (``settings.research`` above all).
        llm: the LLM client.
        search: ``search_all_providers`` bound to the sources: (query, known) -> results.
        jobs: where jobs are kept.
        cache: the evidence cache (tier 2), shared with ``ask``.
        embedder: for visited-topic similarity (None: normalised text only).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        llm: ResearchLLM,
        search: SearchFn,
        jobs: JobStore,
        cache: EvidenceCacheLike | None = None,
        embedder: Any = None,
        full_text: FullTextFn | None = None,
    ) -> None:
        self.settings = settings
        #: Reads open-access full texts for the articles a job reads (fulltext.mode auto).
        self.full_text = full_text
        self.llm = llm
        self.search = search
        self.jobs = jobs
        self.cache = cache
        self.embedder = embedder
        #: The lease owner of runs started here without one of their own (the CLI's).
        self.owner = new_owner("run")
        #: How long a run's claim on its job lasts unless renewed (renewed every third).
        self.lease_s = settings.research.lease_s

    # -- creating and inspecting jobs ------------------------------------------------------

    def check_llm(self) -> None:
        """Fail fast, before any paid work, when a research task has no model."""
        require_llm(self.llm)

    def create_job(
        self,
        question: str,
        depth: str = "standard",
        *,
        tenant: str = DEFAULT_TENANT,
        claim: bool = True,
    ) -> ResearchJob:
        """Validate the request, check the LLM, and save a PENDING job.

        Args:
            question: the research question.
            depth: quick, standard or deep.
            tenant: who owns the job.
            claim: save it already leased to this orchestrator, which is about to run it (a
                worker pool must not pick it up in between); False: leave it to the workers.

        Raises:
            ValidationError: bad question or depth.
            LLMConfigError: no model for a research task.
        """
        cleaned, level = validate_request(question, depth, self.settings.research)
        self.check_llm()
        job = ResearchJob(question=cleaned, depth=level, tenant=tenant)
        job_frame(job)  # what it asks, read once: kept on the job
        self.jobs.insert(job, owner=self.owner if claim else None, lease_s=self.lease_s)
        log.info("job_created", job=job.id, depth=level, tenant=tenant)
        return job

    def get(self, job_id: str) -> ResearchJob:
        """A saved job (raises NotFoundError)."""
        return self.jobs.get(job_id)

    # -- running -----------------------------------------------------------------------------

    async def resume(
        self,
        job_id: str,
        on_progress: ProgressCallback | None = None,
        *,
        owner: str | None = None,
    ) -> ResearchJob:
        """Continue a job from its last completed stage (a COMPLETED job is returned as is).

        Args:
            job_id: the job (a unique prefix is enough).
            on_progress: called with every progress event.
            owner: the lease owner to run as (a worker's); default: this orchestrator's.

        Raises:
            JobBusy: another process or worker is running the job.
        """
        # The full id names the lock: a prefix would let two runs of one job both start.
        job_id = self.jobs.get(job_id).id
        async with self._exclusive(job_id, owner or self.owner) as held:
            job = self.jobs.get(job_id)  # read under the lock: no other run can be ahead of it
            if job.status is JobStatus.COMPLETED:
                return job
            self.check_llm()
            if job.status is JobStatus.CANCELLED:
                self.jobs.clear_cancel(job.id)  # resumed on purpose: run it this time
            if job.status is not JobStatus.PENDING:
                job.resumed += 1
            log.info(
                "job_resumed",
                job=job.id,
                status=job.status.value,
                completed=[s.value for s in job.completed_stages],
            )
            return await self._run_locked(job, on_progress, held)

    async def refresh(
        self,
        job_id: str,
        search: SourceSearch,
        on_progress: ProgressCallback | None = None,
        *,
        since: datetime | None = None,
        owner: str | None = None,
    ) -> tuple[RerunReport | None, ResearchJob]:
        """Take into a completed job's report what its sources hold new (module docstring).

        A refresh that was interrupted is continued (no search is sent again: the rerun is
        ``None`` then).

        Args:
            job_id: the job (a unique prefix is enough).
            search: sends a query to the named sources (:data:`SourceSearch`).
            on_progress: called with every progress event.
            since: look for articles entered since then (default: when the job last
                searched).
            owner: the lease owner to run as; default: this orchestrator's.

        Raises:
            JobBusy: another process or worker is running the job.
            ResearchError: the job has no report to refresh (it has not completed).
        """
        from medlit.research.rerun import rerun_search
        from medlit.sources.base import HeldArticles

        job_id = self.jobs.get(job_id).id
        async with self._exclusive(job_id, owner or self.owner) as held:
            job = self.jobs.get(job_id)
            if job.refresh is not None:  # interrupted, failed or cancelled on the way
                self.check_llm()
                if job.status is JobStatus.CANCELLED:
                    self.jobs.clear_cancel(job.id)
                job.resumed += 1
                return None, await self._run_locked(job, on_progress, held)
            if job.status is not JobStatus.COMPLETED or job.report is None:
                raise ResearchError(
                    f"research job {job.id} is {job.status.value}: only a completed job's "
                    f"report is refreshed (continue it with: medlit research resume {job.id})"
                )
            entries: list[SearchLogEntry] = []
            with usage_scope() as spent:
                rerun = await rerun_search(
                    job,
                    search,
                    since=since,
                    known=HeldArticles(job.articles, self.cache),
                    log=entries,
                )
            usage = Usage.from_dict(job.usage) if job.usage else Usage()
            usage.merge(spent)
            job.usage = usage.to_dict()
            job.checked_at = rerun.rerun_at
            if not rerun.found:  # nothing new: no model call, the report as it is
                await asyncio.to_thread(self.jobs.save, job, owner=held.owner)
                log.info("job_checked", job=job.id, new=0)
                return rerun, job
            self.check_llm()
            await asyncio.to_thread(self.jobs.keep_version, job)
            start_refresh(job, rerun, entries)
            await asyncio.to_thread(self.jobs.save, job, owner=held.owner)
            log.info("job_refresh_started", job=job.id, new=len(rerun.found))
            return rerun, await self._run_locked(job, on_progress, held)

    async def stream(self, job: ResearchJob) -> AsyncIterator[ProgressEvent]:
        """Run (or continue) ``job``, yielding its progress events as they happen."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        task = asyncio.create_task(self.run(job, queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        while (event := await queue.get()) is not None:
            yield event
        await task

    async def run(
        self,
        job: ResearchJob,
        on_progress: ProgressCallback | None = None,
        *,
        owner: str | None = None,
    ) -> ResearchJob:
        """Run ``job`` from its first stage not completed to COMPLETED or FAILED.

        Errors inside a stage end the job FAILED with the error kept (and are not raised);
        an interruption (KeyboardInterrupt, cancellation) saves what is done, leaves the job
        INTERRUPTED (resumable) and propagates.

        Raises:
            JobBusy: another process (or task) is running the same job.
        """
        async with self._exclusive(job.id, owner or self.owner) as held:
            return await self._run_locked(job, on_progress, held)

    async def _run_locked(
        self, job: ResearchJob, on_progress: ProgressCallback | None, held: _Lease
    ) -> ResearchJob:
        run = _Run(self, job, on_progress, held)
        with usage_scope() as usage:
            run.usage = usage
            await run.execute()
        return job

    @asynccontextmanager
    async def _exclusive(self, job_id: str, owner: str) -> AsyncIterator[_Lease]:
        """Hold the job (its lock file, then its lease, renewed) while it runs: two runs of
        one job would pay twice for every stage and overwrite each other's saved state.

        Raises:
            JobBusy: another process, task or worker holds it (it is not waited for).
        """
        with self._lock_file(job_id):
            lease = _Lease(self.jobs, job_id, owner, self.lease_s)
            lease.acquire()
            renewer = asyncio.create_task(lease.keep())
            try:
                yield lease
            finally:
                renewer.cancel()
                # Not `suppress(CancelledError)`: a cancel of this task arriving here (a worker
                # pool stopping) must go on, not be taken for the renewer's own.
                await asyncio.wait([renewer])
                if not lease.lost:
                    lease.release()

    @contextmanager
    def _lock_file(self, job_id: str) -> Iterator[None]:
        """The job's lock file (this host), not waited for.

        Raises:
            JobBusy: another process or task holds it.
        """
        from filelock import FileLock, Timeout

        path = self.settings.home / "locks" / f"research-{job_id}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path), timeout=0, is_singleton=False)
        try:
            lock.acquire()
        except Timeout:
            raise JobBusy(
                f"research job {job_id} is already running in another process; wait for it, "
                f"or follow it with `medlit research status {job_id}`"
            ) from None
        try:
            yield
        finally:
            lock.release()


def start_refresh(job: ResearchJob, rerun: RerunReport, entries: list[SearchLogEntry]) -> None:
    """Set ``job`` to take in what ``rerun`` found new: the articles held, the refresh's
    searches logged, each new article to be read by the first sub-question whose search
    found it, the stages from EXECUTING on to run again, the depth's budget afresh."""
    plan = job.plan
    subs = [q.id for q in plan.sub_questions] if plan is not None else []
    to_read: dict[str, list[str]] = {}
    for article in rerun.articles:
        owner = next((q for q in article.sub_questions if q in subs), subs[0] if subs else None)
        if owner is not None:
            to_read.setdefault(owner, []).append(article.key)
    report, certainty = job.report, job.certainty
    job.refresh = ReportRefresh(
        since=rerun.since or rerun.rerun_at,
        new=list(rerun.found),
        to_read=to_read,
        previous_version=job.report_version,
        verdict_before=verdict_of(report.executive_summary) if report is not None else None,
        certainty_before=certainty.level if certainty is not None else None,
        cited_before=[r.article_key for r in report.references] if report is not None else [],
    )
    job.articles.update(rerun.found)
    job.search_log.extend(entries)
    job.report_version += 1
    job.completed_stages = [s for s in job.completed_stages if s is JobStatus.PLANNING]
    job.status = JobStatus.EXECUTING  # resumable from here should the process die
    job.research_provider_calls = job.research_llm_calls = 0
    job.research_elapsed_s = 0.0
    job.budget_stop_reason = None


def finish_refresh(job: ResearchJob) -> None:
    """What the refresh under way changed, kept on the job (``changes``); the refresh done."""
    refresh, report = job.refresh, job.report
    if refresh is None or report is None:
        return
    before = set(refresh.cited_before)
    job.changes = ReportChange(
        version=job.report_version,
        previous_version=refresh.previous_version,
        since=refresh.since,
        new_articles=[k.removeprefix("pmid:") for k in refresh.new],
        verdict_before=refresh.verdict_before,
        verdict_now=verdict_of(report.executive_summary),
        certainty_before=refresh.certainty_before,
        certainty_now=job.certainty.level if job.certainty is not None else None,
        new_citations=[r.number for r in report.references if r.article_key not in before],
    )
    job.refresh = None


class _Run:
    """One run of one job: the stages, persistence and progress events."""

    def __init__(
        self,
        owner: ResearchOrchestrator,
        job: ResearchJob,
        on_progress: ProgressCallback | None,
        lease: _Lease,
    ) -> None:
        self.o = owner
        self.job = job
        self.on_progress = on_progress
        self.lease = lease
        self.event_lock = asyncio.Lock()
        self.base_usage = Usage.from_dict(job.usage) if job.usage else Usage()
        self.usage = Usage()
        # One budget for the run: its seconds are the job's (every stage, earlier runs too),
        # its call counts the EXECUTING stage's.
        self.budget = Budget(
            limits=owner.settings.research.depth_config(job.depth),
            usage=Usage(),
            before=Spend(
                job.research_provider_calls, job.research_llm_calls, job.research_elapsed_s
            ),
        )
        #: Every LLM call of the run goes through it: none outlasts the time budget.
        self.llm = TimedLLM(owner.llm, self.budget)

    def total_usage(self) -> Usage:
        total = Usage()
        total.merge(self.base_usage)
        total.merge(self.usage)
        return total

    def record_spend(self) -> None:
        """What the job has spent (kept across resumes) and why its budget stopped it."""
        spent, job = self.budget.spent(), self.job
        job.research_provider_calls = spent.provider_calls
        job.research_llm_calls = spent.llm_calls
        job.research_elapsed_s = spent.elapsed_s
        if self.budget.stop_reason:
            job.budget_stop_reason = self.budget.stop_reason

    def save(self) -> None:
        """Save now, on the event loop (the interrupted path: no awaiting there)."""
        self.job.usage = self.total_usage().to_dict()
        self.record_spend()
        self.o.jobs.save(self.job, owner=self.lease.owner)

    async def asave(self) -> None:
        """Save: serialised here (other sub-questions change the job between awaits),
        written off the event loop."""
        self.job.usage = self.total_usage().to_dict()
        self.record_spend()
        columns = self.o.jobs.columns(self.job)
        await asyncio.to_thread(self.o.jobs.write, columns, owner=self.lease.owner)

    async def checkpoint(self) -> None:
        """Between steps: stop if the lease was lost or someone cancelled the job."""
        if self.lease.lost:
            raise LeaseLost(f"research job {self.job.id}: the lease was taken over")
        if await asyncio.to_thread(self.o.jobs.cancel_requested, self.job.id):
            raise JobCancelled(f"research job {self.job.id} was cancelled")

    async def emit(self, message: str = "") -> None:
        """Store the next progress event (numbered) and hand it to the callback."""
        plan = self.job.plan
        usage = self.total_usage()
        subs = plan.sub_questions if plan is not None else []
        event = ProgressEvent(
            job_id=self.job.id,
            stage=self.job.status,
            message=message,
            sub_questions_done=sum(
                q.status is not SubQuestionStatus.PENDING
                and q.status is not SubQuestionStatus.IN_PROGRESS
                for q in subs
            ),
            sub_questions_total=len(subs),
            findings=len(self.job.findings),
            facts=len(self.job.facts),
            provider_calls=remote_calls(usage),
            llm_calls=usage.llm_calls,
        )
        async with self.event_lock:  # numbered one at a time (sub-questions run at once)
            event.seq = await asyncio.to_thread(
                self.o.jobs.add_event,
                self.job.id,
                lambda seq: event.model_copy(update={"seq": seq}).model_dump_json(),
            )
        if self.on_progress is None:
            return
        result = self.on_progress(event)
        if inspect.isawaitable(result):
            await result

    async def execute(self) -> None:
        job = self.job
        job.error = job.error_type = job.failed_stage = None
        stage: JobStatus = job.status
        try:
            for stage in STAGES:
                if stage in job.completed_stages:
                    continue
                await self.checkpoint()
                job.status = stage
                job.stages[stage.value] = StageTimes(started_at=utcnow())
                await self.asave()
                await self.emit(f"{stage.value.lower()} started")
                await self.stage(stage)
                job.stages[stage.value].finished_at = utcnow()
                job.completed_stages.append(stage)
                await self.asave()
            job.status = JobStatus.COMPLETED
            await self.asave()
            log.info("job_completed", job=job.id, usage=self.total_usage().to_dict())
            await self.emit("completed")
        except LeaseLost:
            log.warning("job_lease_lost", job=job.id, stage=stage.value)
            raise  # another worker runs it now: save nothing over its work
        except JobCancelled:
            for question in job.plan.sub_questions if job.plan is not None else []:
                if question.status is SubQuestionStatus.IN_PROGRESS:
                    question.status = SubQuestionStatus.PENDING  # stopped before it ran
            job.status = JobStatus.CANCELLED
            job.error = "cancelled"
            job.failed_stage = stage
            await self.asave()
            log.info("job_cancelled", job=job.id, stage=stage.value)
            await self.emit("cancelled")
        except Exception as exc:  # every stage failure ends the job FAILED, with the reason
            job.status = JobStatus.FAILED
            job.failed_stage = stage
            job.error_type = type(exc).__name__
            job.error = str(exc) or type(exc).__name__
            if not isinstance(exc, MedlitError):
                # The error line says what failed; the traceback is for MEDLIT_LOG_LEVEL=debug.
                log.warning("job_crashed", job=job.id, stage=stage.value, error=job.error)
                log.debug("job_crashed_traceback", job=job.id, exc_info=True)
            else:
                log.warning("job_failed", job=job.id, stage=stage.value, error=job.error)
            await self.asave()
            await self.emit(f"failed: {job.error}")
        except BaseException:
            # Interrupted (SIGINT, SIGTERM, a worker pool stopping): keep what is done, say so
            # in the status; `resume` (or the next worker) continues.
            if not self.lease.lost:
                self.interrupted(stage)
            raise

    def interrupted(self, stage: JobStatus) -> None:
        """Save the job INTERRUPTED in ``stage``, with its event (on the event loop: the run
        is being torn down, nothing may be awaited)."""
        job = self.job  # a sub-question IN_PROGRESS stays so: the resume takes it up again
        job.status = JobStatus.INTERRUPTED
        job.failed_stage = stage
        job.error = None
        self.save()
        log.info("job_interrupted", job=job.id, stage=stage.value)
        event = ProgressEvent(job_id=job.id, stage=job.status, message="interrupted")
        self.o.jobs.add_event(
            job.id, lambda seq: event.model_copy(update={"seq": seq}).model_dump_json()
        )

    async def stage(self, stage: JobStatus) -> None:
        job, o, llm = self.job, self.o, self.llm
        llm.during = _DURING.get(stage)
        if stage is JobStatus.PLANNING:
            job.plan = await create_plan(
                job.question, job.depth, llm, o.settings.research, frame=job_frame(job)
            )
        elif stage is JobStatus.EXECUTING:
            await (self.read_new() if job.refresh is not None else self.research())
        elif stage is JobStatus.VERIFYING:
            await self.verify()
        elif stage is JobStatus.SYNTHESIZING:
            stopped = self.budget.stop_reason
            job.report = await generate_report(
                job_frame(job),
                job.facts,
                job.discrepancies,
                job.articles,
                llm,
                o.settings.research,
                plan=job.plan,
                budget_stop_reason=job.budget_stop_reason,
                disabled_checks=o.settings.checks.disabled,
            )
            job.report.limitations.extend(failed_source_limitations(job.plan))
            await self.review_outputs()
            if self.budget.stop_reason != stopped and self.budget.stop_reason:
                # The time ran out while the report was written: what was not written by then
                # is the verified facts, and the report says why first.
                job.report.limitations.insert(0, stopped_early(self.budget.stop_reason))
            finish_refresh(job)

    async def review_outputs(self) -> None:
        """The evidence table (one row per included study) and the draft certainty."""
        from medlit.research.certainty import draft_certainty
        from medlit.research.evidence_table import build_evidence_table
        from medlit.research.screening import included_keys

        job = self.job
        included = [job.articles[k] for k in included_keys(job) if k in job.articles]
        disabled = self.o.settings.checks.disabled
        frame = job_frame(job)
        job.question_kind = frame.kind
        job.columns = list(COLUMNS[frame.kind])
        # A refresh keeps the rows of the studies the table held: it pays for the new ones.
        kept = {r.article_key: r for r in job.evidence_table} if job.refresh is not None else {}
        built = await build_evidence_table(
            [a for a in included if a.key not in kept], frame, self.llm, disabled
        )
        made = {r.article_key: r for r in built}
        rows = [kept[a.key] if a.key in kept else made[a.key] for a in included]
        job.evidence_table = rows
        job.certainty = draft_certainty(rows, job.discrepancies, frame)
        if job.report is not None:  # the answer its quotes give, first
            job.report.executive_summary = answer_first(
                job.report, rows, frame, job.facts, job.articles
            )

    async def on_step(self, question: SubQuestion, message: str) -> None:
        """A sub-question's step: saved (its status shows) and told as "q2: 3 of 5 read"."""
        await self.asave()
        await self.emit(f"{question.id}: {message}")

    async def verify(self) -> None:
        """The findings checked across sources; in a refresh, only the groups the new
        articles added findings to (the others' facts and discrepancies stand)."""
        from medlit.research.verifier import group_findings

        job, refresh = self.job, self.job.refresh
        if refresh is None:
            job.facts, job.discrepancies = await verify_findings(job.findings, self.llm, job.plan)
            return
        groups = group_findings(job.findings, job.plan)
        new = set(refresh.new)
        changed = {g for g, found in groups.items() if any(f.article_key in new for f in found)}
        if not changed:
            return
        facts, discrepancies = await verify_findings(
            [f for g in groups if g in changed for f in groups[g]], self.llm, job.plan
        )
        job.facts = [
            f
            for g in groups
            for f in (facts if g in changed else job.facts)
            if f.sub_question_id == g
        ]
        job.discrepancies = [
            d
            for g in groups
            for d in (discrepancies if g in changed else job.discrepancies)
            if d.sub_question_id == g
        ]

    async def read_new(self) -> None:
        """A refresh's research: each sub-question reads the new articles its searches found
        (saved after each, so an interrupted refresh reads only what it had not)."""
        job, refresh = self.job, self.job.refresh
        if job.plan is None or refresh is None:
            raise ResearchError("no plan to refresh")
        plan = job.plan
        with usage_scope(self.budget.usage):
            researcher = await self.researcher()

            async def on_read(
                question: SubQuestion, article: Article, findings: list[ResearchFinding]
            ) -> None:
                if article.full_text is not None:  # read with it: the record to keep
                    job.articles[article.key] = article
                job.findings.extend(findings)
                self.record_spend()

            try:
                for question_id, keys in list(refresh.to_read.items()):
                    question = plan.get(question_id)
                    if question is not None:
                        articles = [job.articles[k] for k in keys if k in job.articles]
                        await researcher.read_new(plan, question, articles, on_read)
                    del refresh.to_read[question_id]
                    await self.asave()
                    await self.emit(f"{question_id}: new articles read")
                    await self.checkpoint()
            finally:
                self.record_spend()

    async def researcher(self) -> DeepResearcher:
        """The job's researcher, over what the job has done so far."""
        job, o, budget = self.job, self.o, self.budget
        if job.plan is None:
            raise ResearchError("no plan to execute")
        visited = VisitedTopics(o.embedder, o.settings.research.visited_similarity)
        await asyncio.to_thread(  # embeds: off the event loop
            visited.add_all,
            [q.text for q in job.plan.sub_questions if q.status is SubQuestionStatus.COMPLETED],
        )
        return DeepResearcher(
            o.settings.research,
            self.llm,
            o.search,
            cache=o.cache,
            embedder=o.embedder,
            visited=visited,
            budget=budget,
            read=list(job.articles),
            findings=list(job.findings),
            on_step=self.on_step,
            full_text=o.full_text,
            full_text_budget=o.settings.fulltext.max_per_job if o.full_text else 0,
            full_text_chunks=o.settings.fulltext.embed_per_article,
            question_search=QuestionSearch(
                max_terms=o.settings.agent.max_query_terms,
                limit=o.settings.agent.fetch_per_round,
                min_docs=o.settings.agent.min_docs,
                min_relevance=o.settings.agent.min_relevance,
            ),
            search_log=job.search_log,
            disabled_checks=o.settings.checks.disabled,
            frame=job_frame(job),
            held=job.articles,
        )

    async def research(self) -> None:
        job = self.job
        if job.plan is None:
            raise ResearchError("no plan to execute")
        budget = self.budget
        job.budget_stop_reason = budget.stop_reason  # a re-run says what this run's budget says
        with usage_scope(budget.usage):  # the budget's call counts: this stage's
            researcher = await self.researcher()

            async def on_read(
                question: SubQuestion, article: Article, findings: list[ResearchFinding]
            ) -> None:
                # Kept at once; saved by the step event that follows ("q2: 1 of 3 read"). Read
                # with its full text, it replaces the abstract-only record another found.
                if article.full_text is not None or article.key not in job.articles:
                    job.articles[article.key] = article
                job.findings.extend(findings)
                self.record_spend()

            async def on_done(question: SubQuestion, articles: list[Article]) -> None:
                for article in articles:
                    job.articles.setdefault(article.key, article)
                await self.asave()
                await self.emit(f"{question.id} {question.status.value.lower()}")
                await self.checkpoint()  # cancelled: the other sub-questions in flight stop too

            try:
                await researcher.execute_research(job.plan, on_read, on_done)
            finally:
                self.record_spend()
        if budget.stop_reason:
            log.warning("research_budget_stop", job=job.id, reason=budget.stop_reason)


#: The stage named in a time-budget stop reason ("time budget of 180 s used during
#: synthesis"); a stop while researching says what the research budget stops say.
_DURING = {
    JobStatus.PLANNING: "planning",
    JobStatus.VERIFYING: "verification",
    JobStatus.SYNTHESIZING: "synthesis",
}


class _Lease:
    """One run's lease on its job: claimed, renewed every third of ``lease_s``, released."""

    def __init__(self, jobs: JobStore, job_id: str, owner: str, lease_s: float) -> None:
        self.jobs = jobs
        self.job_id = job_id
        self.owner = owner
        self.lease_s = lease_s
        self.lost = False

    def acquire(self) -> None:
        """Claim the job (a FAILED or CANCELLED one too: a person resumes it).

        Raises:
            JobBusy: a live process holds it.
        """
        if self.jobs.claim(self.job_id, self.owner, time.time(), self.lease_s, any_status=True):
            return
        holder = self.jobs.lease_of(self.job_id)
        if owner_is_dead(holder) and self.jobs.claim(
            self.job_id, self.owner, time.time(), self.lease_s, any_status=True, steal_from=holder
        ):
            log.info("job_lease_taken_over", job=self.job_id, dead_owner=holder)
            return
        raise JobBusy(
            f"research job {self.job_id} is already running elsewhere ({holder}); wait for it, "
            f"or follow it with `medlit research status {self.job_id}`"
        )

    async def keep(self) -> None:
        """Renew the lease until cancelled; mark it lost when another worker took it."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            renewed = await asyncio.to_thread(
                self.jobs.renew, self.job_id, self.owner, time.time(), self.lease_s
            )
            if not renewed:
                self.lost = True
                log.warning("job_lease_lost", job=self.job_id, owner=self.owner)
                return

    def release(self) -> None:
        """Give the lease up."""
        self.jobs.release(self.job_id, self.owner)
