"""The data of a research job (seed 002): plan, findings, facts, discrepancies, report, job.

Everything here is a pydantic model so that a job round-trips through JSON: the orchestrator
persists it after every stage (and after every sub-question while executing) and resumes from it.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, get_args

from pydantic import BaseModel, Field

from medlit.types import Article, Citation
from medlit.words.frame import QuestionFrame, read_frame

__all__ = [
    "ALL_CELLS",
    "CELLS",
    "COLUMNS",
    "DEFAULT_TENANT",
    "DEPTHS",
    "DESIGNS",
    "LEVELS",
    "STAGES",
    "Cell",
    "Certainty",
    "CertaintyMove",
    "ConflictingClaim",
    "Depth",
    "Discrepancy",
    "EvidenceRow",
    "ExcludedArticle",
    "JobStatus",
    "NarrativeReport",
    "ProgressEvent",
    "Reference",
    "ReportChange",
    "ReportRefresh",
    "ReportSection",
    "ResearchFinding",
    "ResearchJob",
    "ResearchPlan",
    "SearchLogEntry",
    "StageTimes",
    "SubQuestion",
    "SubQuestionStatus",
    "VerifiedFact",
    "job_frame",
    "utcnow",
]

Depth = Literal["quick", "standard", "deep"]
DEPTHS: tuple[Depth, ...] = ("quick", "standard", "deep")
Confidence = Literal["high", "medium", "low"]
DEFAULT_TENANT = "default"


def utcnow() -> datetime:
    """Timezone-aware now, the timestamp of every job event."""
    return datetime.now(UTC)


class SubQuestionStatus(StrEnum):
    """Where a sub-question is in its life: PENDING -> IN_PROGRESS -> COMPLETED | SKIPPED."""

    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    SKIPPED = "SKIPPED"


class SubQuestion(BaseModel):
    """One part of the research question (from the plan, or a follow-up raised by a finding)."""

    id: str = Field(description="'q1', 'q2'...; follow-ups 'q1.1', 'q1.2'...")
    text: str
    search_query: str | None = Field(None, description="Literature search terms for it.")
    priority: int = Field(1, ge=1, description="1 is researched first.")
    rationale: str = ""
    depth: int = Field(1, ge=1, description="Plan questions are 1; a follow-up is its parent + 1.")
    subject: str = Field("", description="The research question's subject, as its frame reads it.")
    outcome: str = Field("", description="The research question's outcome, as its frame reads it.")
    asks: list[str] = Field(
        default_factory=list,
        description="Which parts of the research question it names: 'subject', 'outcome', "
        "'comparison', 'population' (its frame's, said in one of their forms).",
    )
    parent_id: str | None = None
    status: SubQuestionStatus = SubQuestionStatus.PENDING
    skip_reason: str | None = Field(None, description="Why it was SKIPPED.")
    articles_found: int = Field(0, description="Articles researched for it.")
    from_cache: bool = Field(False, description="Answered from cached chunks without a search.")
    failed_extractions: int = Field(0, description="Articles whose fact extraction failed.")
    found: list[str] = Field(
        default_factory=list,
        description="Keys of the articles found for it, best first (a resume takes them from "
        "the evidence cache instead of searching again).",
    )
    read: list[str] = Field(
        default_factory=list,
        description="Keys of the articles read for it so far (a resume does not read them again).",
    )
    failed_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Providers whose search for it failed (error or timeout), with the error.",
    )
    off_question: list[str] = Field(
        default_factory=list,
        description="Keys of the articles found for it that were not read: not about the "
        "question (their titles keep none of its subject and are not close to it).",
    )
    unreadable: list[str] = Field(
        default_factory=list, description="Keys of the articles whose fact extraction failed."
    )
    proposed_findings: int = Field(0, description="Findings the model proposed for it.")
    dropped_findings: dict[str, int] = Field(
        default_factory=dict, description="Proposed findings dropped, counted by reason."
    )


class SearchLogEntry(BaseModel):
    """One query sent to one source, as a reviewer reruns it."""

    sub_question_id: str
    source: str = Field(description="Provider name ('pubmed', 'europepmc', 'local').")
    query: str
    limit: int = Field(description="Results asked for.")
    date: datetime = Field(default_factory=lambda: utcnow())
    hits: int = Field(0, description="Articles it returned (after the English filter).")
    non_english: int = Field(0, description="Articles it returned in another language (dropped).")
    status: str = Field("ok", description="ok, no_match, error, timeout, disabled or not_asked.")
    error: str | None = None
    found: list[str] = Field(
        default_factory=list,
        description="Keys of the articles the query found (every source, duplicates removed).",
    )
    step: str = Field(
        "",
        description="Which step of the search it was: the planned query, the sub-question's "
        "words, or a relaxation (which word it dropped).",
    )
    entered_since: datetime | None = Field(
        None,
        description="A refresh's search: only articles entered in the source since then "
        "(None: whenever entered).",
    )


class ExcludedArticle(BaseModel):
    """An article found but not used as evidence, and why."""

    pmid: str | None = None
    article_key: str
    title: str = ""
    reason: str = Field(
        description="retracted, retraction notice, not English, no abstract, off the question, "
        "budget, extraction failed or no verified finding."
    )


class ResearchPlan(BaseModel):
    """The planner's output: the question broken into prioritised sub-questions."""

    question: str
    depth: Depth
    sub_questions: list[SubQuestion] = Field(default_factory=list)
    note: str | None = Field(
        None, description="What the report should say about the plan (fewer sub-questions)."
    )
    created_at: datetime = Field(default_factory=utcnow)

    def get(self, question_id: str) -> SubQuestion | None:
        """The sub-question with this id, if any."""
        return next((q for q in self.sub_questions if q.id == question_id), None)

    def root_of(self, question_id: str) -> SubQuestion | None:
        """The plan-level ancestor of a (follow-up) sub-question."""
        current = self.get(question_id)
        while current is not None and current.parent_id is not None:
            parent = self.get(current.parent_id)
            if parent is None:
                break
            current = parent
        return current


class ResearchFinding(BaseModel):
    """A claim extracted from one retrieved article, with the quote that supports it."""

    claim: str
    quote: str | None = Field(
        description="Verbatim text of the article's title, abstract or (when read) full text; "
        "null when the article holds no quote for the claim (kept so only with the check "
        "'claim-quote' turned off)."
    )
    pmid: str | None = None
    article_key: str = Field(description="Article.key of the source (PMID, DOI or title hash).")
    numbers: list[str] = Field(default_factory=list, description="Effect sizes, counts, CIs...")
    sub_question_id: str
    source: Citation
    follow_up: str | None = Field(None, description="A follow-up question this finding raises.")
    sentences: list[int] = Field(
        default_factory=list,
        description="Numbers of the article's sentences the finding points at (as the "
        "extraction prompt numbered them); empty when the model wrote a quote instead.",
    )
    quoted: bool = Field(
        False,
        description="The claim is the quoted sentence itself: the model's restatement did not "
        "pass the claim checks, so the finding stands as a quotation.",
    )
    direction: str = Field("unclear", description="Which way it points on the sub-question.")


class VerifiedFact(BaseModel):
    """A statement checked across sources (or resting on one source: low confidence)."""

    statement: str
    confidence: Confidence
    sources: list[Citation] = Field(default_factory=list)
    sub_question_id: str
    numbers: list[str] = Field(default_factory=list)


class ConflictingClaim(BaseModel):
    """One side of a discrepancy."""

    claim: str
    sources: list[Citation] = Field(default_factory=list)


class Discrepancy(BaseModel):
    """Sources that disagree about one topic."""

    topic: str
    claims: list[ConflictingClaim] = Field(min_length=2)
    sub_question_id: str
    note: str = ""


class Reference(BaseModel):
    """A numbered reference of the report: always an article the job actually retrieved."""

    number: int
    article_key: str
    pmid: str | None = None
    doi: str | None = None
    title: str
    journal: str | None = None
    year: int | None = None
    study_type: str = "other"
    url: str | None = None


class ReportSection(BaseModel):
    """One topic of the report."""

    heading: str
    content: str
    sub_question_ids: list[str] = Field(default_factory=list)
    word_count: int = 0
    short: bool = Field(False, description="Still under min_section_words after expansion.")
    evidence_quality: str = Field("", description="Study types and confidence behind it.")
    references: list[int] = Field(default_factory=list, description="Reference numbers cited.")
    unwritten: str | None = Field(
        None,
        description="Why the model's text is missing (its reply was malformed after a repair, "
        "or late): the section lists its verified facts instead.",
    )


class NarrativeReport(BaseModel):
    """The final report: renders to Markdown and JSON (medlit.research.report)."""

    title: str
    question: str
    executive_summary: str
    answered: bool = Field(
        True,
        description="Whether its verified facts answer the question (the summary says "
        "when they do not, and then gives no answer first).",
    )
    sections: list[ReportSection] = Field(default_factory=list)
    discrepancies: list[Discrepancy] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    limitations: list[str] = Field(default_factory=list)
    generated_at: datetime = Field(default_factory=utcnow)


class JobStatus(StrEnum):
    """The state machine of seed 002, plus CANCELLED (a person stopped it) and INTERRUPTED
    (its run was stopped, by SIGINT or SIGTERM or a worker pool shutting down, with what it had
    done saved; ``failed_stage`` says where)."""

    PENDING = "PENDING"
    PLANNING = "PLANNING"
    EXECUTING = "EXECUTING"
    VERIFYING = "VERIFYING"
    SYNTHESIZING = "SYNTHESIZING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    INTERRUPTED = "INTERRUPTED"

    @property
    def terminal(self) -> bool:
        """COMPLETED, FAILED or CANCELLED: no worker runs it (``resume`` still may). An
        INTERRUPTED job is not: ``resume`` continues it, and so does a worker that finds it."""
        return self in {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED}


STAGES: tuple[JobStatus, ...] = (
    JobStatus.PLANNING,
    JobStatus.EXECUTING,
    JobStatus.VERIFYING,
    JobStatus.SYNTHESIZING,
)


class StageTimes(BaseModel):
    """When a stage started and finished (the last run of it, after a resume)."""

    started_at: datetime | None = None
    finished_at: datetime | None = None


Design = Literal[
    "systematic review/meta-analysis",
    "RCT",
    "cohort",
    "case-control",
    "cross-sectional",
    "case series/report",
    "guideline",
    "other",
]
DESIGNS: tuple[str, ...] = get_args(Design)
Direction = Literal["supports", "opposes", "no difference", "unclear", "not applicable"]
#: The quoted cells of a row on an effect question, in table order (the first CSV columns).
CELLS = ("population", "intervention", "comparator", "outcomes", "effect")
#: The cells other question types use (after :data:`CELLS` in the CSV).
MORE_CELLS = (
    "exposure",
    "measure",
    "index_test",
    "reference_standard",
    "sensitivity",
    "specificity",
    "estimate",
    "answer",
)
ALL_CELLS = CELLS + MORE_CELLS
#: The table's columns by question type (:mod:`medlit.words.question_kind`).
COLUMNS: dict[str, tuple[str, ...]] = {
    "effect": CELLS,
    "risk": ("population", "exposure", "outcomes", "measure"),
    "diagnosis": ("population", "index_test", "reference_standard", "sensitivity", "specificity"),
    "frequency": ("population", "estimate"),
    "definition": ("answer",),
    "list": ("answer",),
}
#: Question types whose rows say which way a study points on the question.
DIRECTED = frozenset({"effect", "risk", "diagnosis"})


class Cell(BaseModel):
    """A filled cell: what it says, and the article's sentence that says it (verbatim), with
    where in the article that sentence is."""

    text: str
    quote: str | None = Field(
        description="The article's sentence that says it, verbatim; null when the article "
        "holds none (a cell kept so only with the check 'claim-quote' turned off)."
    )
    section: str | None = Field(
        None,
        description="The section the quote is from: the abstract's label ('RESULTS') or the "
        "full text's ('Results'); None for the title or an unlabelled abstract.",
    )
    from_full_text: bool = Field(
        False, description="The quote is from the article's full text (PMC), not its abstract."
    )


class EvidenceRow(BaseModel):
    """One included study."""

    pmid: str | None = None
    article_key: str
    title: str = ""
    year: int | None = None
    design: Design = "other"
    design_from: Literal["publication types", "MeSH terms", "abstract", "none"] = "none"
    design_quote: str | None = Field(None, description="The abstract's words, when from it.")
    n: int | None = Field(None, description="Participants as the article counts them.")
    population: Cell | None = None
    intervention: Cell | None = None
    comparator: Cell | None = None
    outcomes: Cell | None = None
    effect: Cell | None = None
    exposure: Cell | None = None
    measure: Cell | None = Field(None, description="OR, HR or RR as the article writes it.")
    index_test: Cell | None = None
    reference_standard: Cell | None = None
    sensitivity: Cell | None = None
    specificity: Cell | None = None
    estimate: Cell | None = Field(None, description="A prevalence or incidence as written.")
    answer: Cell | None = Field(None, description="What the study says the answer is.")
    sentences: dict[str, list[int]] = Field(
        default_factory=dict,
        description="Each model-filled cell's sentence numbers (as the row prompt numbered "
        "the article's sentences).",
    )
    direction: Direction = "unclear"
    direction_quote: str | None = Field(None, description="The sentence the direction reads.")
    filled_by: Literal["article structure", "llm"] = "article structure"
    dropped: dict[str, str] = Field(
        default_factory=dict, description="Cells proposed but left empty, with the reason."
    )

    def cells(self) -> dict[str, Cell | None]:
        """The quoted cells by name (every question type's)."""
        return {name: getattr(self, name) for name in ALL_CELLS}


Level = Literal["high", "moderate", "low", "very low"]
LEVELS: tuple[Level, ...] = ("high", "moderate", "low", "very low")


class CertaintyMove(BaseModel):
    """One step down, with why and the rows behind it."""

    domain: Literal["risk of bias", "inconsistency", "imprecision", "indirectness"]
    reason: str
    rows: list[str] = Field(default_factory=list, description="PMIDs (else keys) behind it.")


class Certainty(BaseModel):
    """The draft judgement."""

    draft: bool = Field(True, description="Always true: a person must confirm it.")
    label: str = "Draft for a person to confirm (GRADE-style, computed from the table)"
    start: Level | Literal["not applicable"]
    start_reason: str
    level: Level | Literal["not applicable"]
    moves: list[CertaintyMove] = Field(default_factory=list)


class ReportRefresh(BaseModel):
    """A refresh of the job's report under way: the new articles it has still to read, and
    what the report said before (to tell what changed)."""

    since: datetime = Field(description="The searches looked for articles entered since then.")
    started_at: datetime = Field(default_factory=utcnow)
    new: list[str] = Field(default_factory=list, description="Keys of every new article.")
    to_read: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Sub-question id -> keys of the new articles it has still to read (emptied "
        "as they are read: an interrupted refresh resumes where it stopped).",
    )
    previous_version: int
    verdict_before: str | None = None
    certainty_before: str | None = None
    cited_before: list[str] = Field(
        default_factory=list, description="Keys of the articles the old report cited."
    )


class ReportChange(BaseModel):
    """What the last refresh changed in the report."""

    version: int = Field(description="The report version the refresh made.")
    previous_version: int
    since: datetime
    refreshed_at: datetime = Field(default_factory=utcnow)
    new_articles: list[str] = Field(
        default_factory=list, description="PMIDs (else keys) of the articles new since."
    )
    verdict_before: str | None = None
    verdict_now: str | None = None
    certainty_before: str | None = None
    certainty_now: str | None = None
    new_citations: list[int] = Field(
        default_factory=list, description="Reference numbers of the articles cited first now."
    )

    @property
    def verdict_turned(self) -> bool:
        """Whether the verdict is another than before."""
        return self.verdict_before != self.verdict_now


class ResearchJob(BaseModel):
    """A research job with everything it produced so far; persisted after every step."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    tenant: str = Field(DEFAULT_TENANT, description="Who owns it; no other tenant may see it.")
    question: str
    frame: QuestionFrame | None = Field(
        None,
        description="What the question asks (subject, outcome, direction, populations, type), "
        "read once when the job is made: its searches, table and verdict all read it.",
    )
    depth: Depth = "standard"
    status: JobStatus = JobStatus.PENDING
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    stages: dict[str, StageTimes] = Field(default_factory=dict)
    completed_stages: list[JobStatus] = Field(default_factory=list)
    error: str | None = None
    error_type: str | None = None
    failed_stage: JobStatus | None = None
    plan: ResearchPlan | None = None
    articles: dict[str, Article] = Field(
        default_factory=dict, description="Every article retrieved, keyed by Article.key."
    )
    findings: list[ResearchFinding] = Field(default_factory=list)
    facts: list[VerifiedFact] = Field(default_factory=list)
    discrepancies: list[Discrepancy] = Field(default_factory=list)
    report: NarrativeReport | None = None
    usage: dict[str, object] = Field(
        default_factory=dict, description="medlit.usage.Usage.to_dict() of every run so far."
    )
    research_elapsed_s: float = Field(
        0.0, description="Seconds the job has run, every stage, all runs (max_seconds bounds it)."
    )
    research_provider_calls: int = Field(0, description="Source requests while executing.")
    research_llm_calls: int = Field(0, description="LLM requests while executing.")
    budget_stop_reason: str | None = None
    resumed: int = Field(0, description="Times the job was resumed.")
    search_log: list[SearchLogEntry] = Field(
        default_factory=list, description="Every query sent to each source, in order."
    )
    evidence_table: list[EvidenceRow] = Field(
        default_factory=list, description="One row per included study."
    )
    certainty: Certainty | None = Field(None, description="The draft certainty of the evidence.")
    question_kind: str | None = Field(
        None,
        description="The question's type (effect, risk, diagnosis, frequency, definition, "
        "list), read once from the question.",
    )
    columns: list[str] = Field(
        default_factory=list, description="The evidence table's cells in use, in order."
    )
    checked_at: datetime | None = Field(
        None, description="When its searches were last rerun for what is new."
    )
    report_version: int = Field(
        1, description="The report's version: 1, then one more per refresh that found new."
    )
    refresh: ReportRefresh | None = Field(None, description="A refresh under way.")
    changes: ReportChange | None = Field(None, description="What the last refresh changed.")

    def searched_at(self) -> datetime | None:
        """When the job last searched (its newest logged search; None: it never did)."""
        dates = [e.date for e in self.search_log if e.status != "cache"]
        return max(dates) if dates else None

    def touch(self) -> None:
        """Mark the job as changed now."""
        self.updated_at = utcnow()


def job_frame(job: ResearchJob) -> QuestionFrame:
    """The frame of ``job``'s question: read when the job was made and kept on it; a job
    saved before jobs kept it has it read now, once, and kept (its resume reads it so). What
    reads a job's question (its plan, searches, screening, table, certainty and report)
    reads this."""
    if job.frame is None:
        job.frame = read_frame(job.question)
    return job.frame


class ProgressEvent(BaseModel):
    """What a running job reports: rendered by the CLI, streamed by the HTTP API."""

    job_id: str
    seq: int = Field(0, description="Increasing per job once stored (the SSE event id).")
    stage: JobStatus
    message: str = ""
    sub_questions_done: int = 0
    sub_questions_total: int = 0
    findings: int = 0
    facts: int = 0
    provider_calls: int = 0
    llm_calls: int = 0
    at: datetime = Field(default_factory=utcnow)
