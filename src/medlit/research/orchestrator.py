"""The research job state machine (seed 002), persisted and resumable.

::

    PENDING -> PLANNING -> EXECUTING -> VERIFYING -> SYNTHESIZING -> COMPLETED
                  |            |            |              |
                  +------------+------------+--------------+--> FAILED (error kept)

Each stage's output is saved when the stage completes (and, while EXECUTING, after every
sub-question), with the stage added to ``completed_stages``. ``resume`` (also of a FAILED job,
or of one whose process died mid-stage) starts at the first stage not completed and, within
EXECUTING, researches only the sub-questions not COMPLETED: paid work is never repeated.
Progress goes to a callback (the CLI's Rich display) or an async iterator (:meth:`stream`, for
a streaming HTTP endpoint).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from medlit.config import Settings
from medlit.errors import JobBusy, LLMConfigError, MedlitError, ResearchError
from medlit.log import get_logger
from medlit.research.jobs import JobStore
from medlit.research.models import (
    STAGES,
    JobStatus,
    ProgressEvent,
    ResearchFinding,
    ResearchJob,
    StageTimes,
    SubQuestion,
    SubQuestionStatus,
    utcnow,
)
from medlit.research.planner import create_plan, validate_request
from medlit.research.prompts import ResearchLLM, Task
from medlit.research.report import failed_source_limitations
from medlit.research.researcher import DeepResearcher, EvidenceCacheLike, SearchFn
from medlit.research.synthesizer import generate_report
from medlit.research.tracking import Budget, Spend, VisitedTopics, remote_calls
from medlit.research.verifier import verify_findings
from medlit.types import Article
from medlit.usage import Usage, usage_scope

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
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.search = search
        self.jobs = jobs
        self.cache = cache
        self.embedder = embedder

    # -- creating and inspecting jobs ------------------------------------------------------

    def check_llm(self) -> None:
        """Fail fast, before any paid work, when a research task has no model."""
        require_llm(self.llm)

    def create_job(self, question: str, depth: str = "standard") -> ResearchJob:
        """Validate the request, check the LLM, and save a PENDING job.

        Raises:
            ValidationError: bad question or depth.
            LLMConfigError: no model for a research task.
        """
        cleaned, level = validate_request(question, depth, self.settings.research)
        self.check_llm()
        job = ResearchJob(question=cleaned, depth=level)
        self.jobs.save(job)
        log.info("job_created", job=job.id, depth=level)
        return job

    def get(self, job_id: str) -> ResearchJob:
        """A saved job (raises NotFoundError)."""
        return self.jobs.get(job_id)

    # -- running -----------------------------------------------------------------------------

    async def resume(self, job_id: str, on_progress: ProgressCallback | None = None) -> ResearchJob:
        """Continue a job from its last completed stage (a COMPLETED job is returned as is).

        Raises:
            JobBusy: another process is running the job.
        """
        # The full id names the lock: a prefix would let two runs of one job both start, and a
        # path-like id must never become a file name.
        job_id = self.jobs.get(job_id).id
        with self._exclusive(job_id):
            job = self.jobs.get(job_id)  # read under the lock: no other run can be ahead of it
            if job.status is JobStatus.COMPLETED:
                return job
            self.check_llm()
            job.resumed += 1
            log.info(
                "job_resumed",
                job=job.id,
                status=job.status.value,
                completed=[s.value for s in job.completed_stages],
            )
            return await self._run_locked(job, on_progress)

    async def stream(self, job: ResearchJob) -> AsyncIterator[ProgressEvent]:
        """Run (or continue) ``job``, yielding its progress events as they happen."""
        queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
        task = asyncio.create_task(self.run(job, queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        while (event := await queue.get()) is not None:
            yield event
        await task

    async def run(
        self, job: ResearchJob, on_progress: ProgressCallback | None = None
    ) -> ResearchJob:
        """Run ``job`` from its first stage not completed to COMPLETED or FAILED.

        Errors inside a stage end the job FAILED with the error kept (and are not raised);
        an interruption (KeyboardInterrupt, cancellation) saves what is done and propagates,
        leaving the job resumable.

        Raises:
            JobBusy: another process (or task) is running the same job.
        """
        with self._exclusive(job.id):
            return await self._run_locked(job, on_progress)

    async def _run_locked(
        self, job: ResearchJob, on_progress: ProgressCallback | None
    ) -> ResearchJob:
        run = _Run(self, job, on_progress)
        with usage_scope() as usage:
            run.usage = usage
            await run.execute()
        return job

    @contextmanager
    def _exclusive(self, job_id: str) -> Iterator[None]:
        """Hold the job's lock file while it runs: two runs of one job would pay twice for
        every stage and overwrite each other's saved state.

        Raises:
            JobBusy: another process or task holds it (it is not waited for).
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


class _Run:
    """One run of one job: the stages, persistence and progress events."""

    def __init__(
        self, owner: ResearchOrchestrator, job: ResearchJob, on_progress: ProgressCallback | None
    ) -> None:
        self.o = owner
        self.job = job
        self.on_progress = on_progress
        self.base_usage = Usage.from_dict(job.usage) if job.usage else Usage()
        self.usage = Usage()

    def total_usage(self) -> Usage:
        total = Usage()
        total.merge(self.base_usage)
        total.merge(self.usage)
        return total

    def save(self) -> None:
        self.job.usage = self.total_usage().to_dict()
        self.o.jobs.save(self.job)

    async def emit(self, message: str = "") -> None:
        if self.on_progress is None:
            return
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
                job.status = stage
                job.stages[stage.value] = StageTimes(started_at=utcnow())
                self.save()
                await self.emit(f"{stage.value.lower()} started")
                await self.stage(stage)
                job.stages[stage.value].finished_at = utcnow()
                job.completed_stages.append(stage)
                self.save()
            job.status = JobStatus.COMPLETED
            self.save()
            log.info("job_completed", job=job.id, usage=self.total_usage().to_dict())
            await self.emit("completed")
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
            self.save()
            await self.emit(f"failed: {job.error}")
        except BaseException:
            # Interrupted (Ctrl-C, cancellation): keep what is done; `resume` continues.
            self.save()
            raise

    async def stage(self, stage: JobStatus) -> None:
        job, o = self.job, self.o
        if stage is JobStatus.PLANNING:
            job.plan = await create_plan(job.question, job.depth, o.llm, o.settings.research)
        elif stage is JobStatus.EXECUTING:
            await self.research()
        elif stage is JobStatus.VERIFYING:
            job.facts, job.discrepancies = await verify_findings(job.findings, o.llm, job.plan)
        elif stage is JobStatus.SYNTHESIZING:
            job.report = await generate_report(
                job.question,
                job.facts,
                job.discrepancies,
                job.articles,
                o.llm,
                o.settings.research,
                plan=job.plan,
                budget_stop_reason=job.budget_stop_reason,
            )
            job.report.limitations.extend(failed_source_limitations(job.plan))

    async def research(self) -> None:
        job, o = self.job, self.o
        if job.plan is None:
            raise ResearchError("no plan to execute")
        limits = o.settings.research.depth_config(job.depth)
        before = Spend(job.research_provider_calls, job.research_llm_calls, job.research_elapsed_s)
        with usage_scope() as stage_usage:
            budget = Budget(limits=limits, usage=stage_usage, before=before)
            visited = VisitedTopics(o.embedder, o.settings.research.visited_similarity)
            visited.add_all(
                [q.text for q in job.plan.sub_questions if q.status is SubQuestionStatus.COMPLETED]
            )
            researcher = DeepResearcher(
                o.settings.research,
                o.llm,
                o.search,
                cache=o.cache,
                embedder=o.embedder,
                visited=visited,
                budget=budget,
            )

            async def on_done(
                question: SubQuestion, findings: list[ResearchFinding], articles: list[Article]
            ) -> None:
                for article in articles:
                    job.articles.setdefault(article.key, article)
                job.findings.extend(findings)
                spent = budget.spent()
                job.research_provider_calls = spent.provider_calls
                job.research_llm_calls = spent.llm_calls
                job.research_elapsed_s = spent.elapsed_s
                job.budget_stop_reason = budget.stop_reason
                self.save()
                await self.emit(f"{question.id} {question.status.value.lower()}")

            try:
                await researcher.execute_research(job.plan, on_done)
            finally:
                spent = budget.spent()
                job.research_provider_calls = spent.provider_calls
                job.research_llm_calls = spent.llm_calls
                job.research_elapsed_s = spent.elapsed_s
                job.budget_stop_reason = budget.stop_reason
        if budget.stop_reason:
            log.warning("research_budget_stop", job=job.id, reason=budget.stop_reason)
