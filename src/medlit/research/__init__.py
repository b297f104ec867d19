"""Deep research (seed 002): plan -> research sub-questions -> verify -> synthesize a report.

Public API::

    async with open_orchestrator(settings) as orchestrator:     # real store, sources, LLM
        job = orchestrator.create_job(question, "standard")    # ValidationError, LLMConfigError
        job = await orchestrator.run(job, on_progress)         # -> COMPLETED or FAILED
        async for event in orchestrator.stream(job): ...       # progress as an async iterator
        job = await orchestrator.resume(job_id)                # from the last completed stage
    render_markdown(job.report); job_to_dict(job)              # the CLI's --json

The stages are usable alone: :func:`create_plan`, :class:`DeepResearcher`,
:func:`verify_findings`, :func:`generate_report`. Heavy modules (sources, LLM client,
embeddings) are imported only by :mod:`medlit.research.runtime`.
"""

from __future__ import annotations

from medlit.research.models import (
    Discrepancy,
    JobStatus,
    NarrativeReport,
    ProgressEvent,
    Reference,
    ReportSection,
    ResearchFinding,
    ResearchJob,
    ResearchPlan,
    SubQuestion,
    SubQuestionStatus,
    VerifiedFact,
)
from medlit.research.orchestrator import ProgressCallback, ResearchOrchestrator, require_llm
from medlit.research.planner import create_plan, validate_request
from medlit.research.report import job_to_dict, render_json, render_markdown
from medlit.research.researcher import DeepResearcher
from medlit.research.runtime import open_orchestrator
from medlit.research.synthesizer import generate_report
from medlit.research.verifier import verify_findings

__all__ = [
    "DeepResearcher",
    "Discrepancy",
    "JobStatus",
    "NarrativeReport",
    "ProgressCallback",
    "ProgressEvent",
    "Reference",
    "ReportSection",
    "ResearchFinding",
    "ResearchJob",
    "ResearchOrchestrator",
    "ResearchPlan",
    "SubQuestion",
    "SubQuestionStatus",
    "VerifiedFact",
    "create_plan",
    "generate_report",
    "job_to_dict",
    "open_orchestrator",
    "render_json",
    "render_markdown",
    "require_llm",
    "validate_request",
    "verify_findings",
]
