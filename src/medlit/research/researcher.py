"""DeepResearcher: researches a plan's sub-questions (seed 002, execute_research).

Sub-questions go by depth, then priority, in waves: every PENDING sub-question of a wave is
checked (depth, visited topic, budget) in priority order, then researched concurrently under a
semaphore. Research of one sub-question: cached evidence first (tier-2 chunks that already
answer it spare the search), else ``search_all_providers`` with the evidence cache as ``known``
(so PubMed does not re-fetch fresh records); new articles go into the evidence cache for
``ask`` and later jobs; then one ``extract_facts`` LLM call per article. Follow-up questions a
finding raises become sub-questions one level deeper, researched in the next wave.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from medlit.cache.chunking import FULL_TEXT_EMBEDDED
from medlit.checks import CheckedClaim, check_claim, refuse_unknown, without_label
from medlit.config import ResearchDepth, ResearchSettings
from medlit.errors import LLMConfigError, LLMError, ResearchError, TimeBudgetSpent
from medlit.log import get_logger
from medlit.research.models import (
    ResearchFinding,
    ResearchPlan,
    SearchLogEntry,
    SubQuestion,
    SubQuestionStatus,
    utcnow,
)
from medlit.research.planner import QUESTION_ID, names_otherwise, on_topic
from medlit.research.pointing import (
    OUT_OF_RANGE,
    Numbered,
    numbered_sentences,
    pointed_quote,
    render_numbered,
)
from medlit.research.prompts import (
    EXTRACT_SYSTEM,
    ExtractedClaim,
    ExtractionReply,
    ResearchLLM,
    Task,
    messages,
)
from medlit.research.tracking import Budget, normalise_topic
from medlit.sources.base import FreshArticles, HeldArticles
from medlit.text import counted
from medlit.types import (
    Article,
    Citation,
    Evidence,
    FullText,
    SearchQuery,
    SearchResults,
)
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import (
    unframed_claim,
)
from medlit.words.search_plan import parts_named, plan_searches
from medlit.words.topics import anchor_terms

if TYPE_CHECKING:
    from medlit.embeddings import Embedder

__all__ = [
    "DeepResearcher",
    "EvidenceCacheLike",
    "FullTextFn",
    "QuestionSearch",
    "SearchFn",
    "search_steps",
    "search_terms",
]

log = get_logger("research.researcher")

#: The share of a job's provider-call budget that relaxed searches may reach.
RELAX_SHARE = 2 / 3

SearchFn = Callable[[SearchQuery, FreshArticles | None], Awaitable[SearchResults]]
"""``search_all_providers`` bound to the job's sources: (query, known) -> results."""

#: Told a sub-question is done (COMPLETED or SKIPPED), with every article it found.
OnDone = Callable[[SubQuestion, list[Article]], Awaitable[None]]
#: Told an article was read for a sub-question, with the findings it gave (the job keeps them
#: at once: a job killed in the middle of a sub-question does not pay to read it again).
OnRead = Callable[[SubQuestion, Article, list[ResearchFinding]], Awaitable[None]]
#: Told what a sub-question is doing ("8 articles found, 5 to read", "2 of 5 read").
OnStep = Callable[[SubQuestion, str], Awaitable[None]]
#: Reads open-access full texts: (articles, budget) -> key -> FullText
#: (:meth:`medlit.sources.fulltext.FullTextReader.read`, its ``texts``).
FullTextFn = Callable[[Sequence[Article], int], Awaitable[dict[str, FullText]]]


class EvidenceCacheLike(FreshArticles, Protocol):
    """What the researcher needs of :class:`medlit.cache.EvidenceCache`."""

    def add_articles(
        self,
        articles: Sequence[Article],
        embedder: Embedder,
        *,
        question: str | None = None,
        full_text_chunks: int = ...,
    ) -> Any:
        """Store articles, chunking and embedding what is new (of a full text, the Results
        chunks ``question`` ranks highest)."""
        ...

    def search_chunks(self, embedding: Any, k: int) -> Sequence[Evidence]:
        """The ``k`` fresh cached chunks most similar to ``embedding``, best first."""
        ...

    def fresh_by_key(self, keys: Sequence[str]) -> dict[str, Article]:
        """Articles held and still fresh, keyed by ``Article.key``."""
        ...


async def _written(write: Callable[[], object]) -> None:
    """Run an evidence-cache write in a thread; an interruption (a cancel) arriving meanwhile
    waits for it to end, then goes on: what was paid for is kept for the resume."""
    done = asyncio.ensure_future(asyncio.to_thread(write))
    try:
        await asyncio.shield(done)
    except asyncio.CancelledError:
        await asyncio.wait([done])
        raise


def search_steps(
    question: SubQuestion, frame: QuestionFrame, *, max_terms: int = 8
) -> list[tuple[str, str]]:
    """The queries to try for a sub-question, each with what it is, narrowest first: the
    planner's query, then the searches the research question's ``frame`` plans for this part
    of it (:func:`medlit.words.search_plan.plan_searches`, the planner ``ask`` uses: the
    question's subject and outcome, the sub-question's own words as qualifiers), widened,
    then without its qualifiers, populations, comparison and outcome, never its subject.
    """
    planned = (question.search_query or "").strip()
    steps = [(planned, "planned query")]
    planned_steps = plan_searches(frame, question.text, max_terms=max_terms)
    # The subject by fewer of its words is the research question's last resort, not a part's.
    steps += [(s.query, s.why) for s in planned_steps if not s.last_resort]
    unique: dict[str, str] = {}
    for query, why in steps:
        if query:
            unique.setdefault(query, why)
    return list(unique.items())


def search_terms(question: SubQuestion, frame: QuestionFrame, *, max_terms: int = 8) -> list[str]:
    """The queries of :func:`search_steps`, narrowest first."""
    return [query for query, _ in search_steps(question, frame, max_terms=max_terms)]


@dataclass(frozen=True)
class QuestionSearch:
    """How ``ask`` searches a question (``settings.agent``), which research repeats for the
    research question itself: a report never rests on less than ``ask`` would cite."""

    max_terms: int = 8
    limit: int = 20
    min_docs: int = 3
    min_relevance: float = 0.45


def is_the_question(plan: ResearchPlan, question: SubQuestion) -> bool:
    """Whether ``question`` is the research question itself (``q0``, or a sub-question the
    planner wrote as the question)."""
    return question.id == QUESTION_ID or (
        question.depth == 1 and normalise_topic(question.text) == normalise_topic(plan.question)
    )


class DeepResearcher:
    """Researches the sub-questions of a plan.

    Args:
        settings: research settings (concurrency, follow-ups, thresholds).
        llm: the LLM client (task ``extract_facts``).
        search: ``search_all_providers`` bound to the job's sources.
        cache: the evidence cache (tier 2), or None.
        embedder: the embedder of the evidence cache (needed to use it).
        visited: the topics already visited (pre-filled with completed sub-questions on resume).
        budget: the budget of this depth level.
        read: keys of the articles earlier runs of the job retrieved (on resume).
        findings: the findings earlier runs of the job made (on resume): an interrupted
            sub-question's follow-ups come from those too.
        on_step: told what a sub-question is doing ("8 articles found, 5 to read").
        question_search: how ``ask`` searches (the research question is searched so).
        search_log: where every query sent is recorded (the job's ``search_log``).
        disabled_checks: ids of checks not to run (``settings.checks.disabled``); an unknown
            one is a ValueError.
        frame: the research question's frame, read once when the job was made (kept on the
            job): every search is planned from it, and what bears on the question is
            judged by it.
        held: the articles the job holds already (on resume): never fetched again.
    """

    def __init__(
        self,
        settings: ResearchSettings,
        llm: ResearchLLM,
        search: SearchFn,
        *,
        cache: EvidenceCacheLike | None,
        embedder: Embedder | None,
        visited: Any,
        budget: Budget,
        read: Sequence[str] = (),
        findings: Sequence[ResearchFinding] = (),
        on_step: OnStep | None = None,
        full_text: FullTextFn | None = None,
        full_text_budget: int = 0,
        full_text_chunks: int = FULL_TEXT_EMBEDDED,
        question_search: QuestionSearch | None = None,
        search_log: list[SearchLogEntry] | None = None,
        disabled_checks: Collection[str] = (),
        frame: QuestionFrame | None = None,
        held: Mapping[str, Article] | None = None,
    ) -> None:
        refuse_unknown(disabled_checks)
        self.frame = frame
        # Every article the job holds, by key: no search fetches one of them again.
        self._held: dict[str, Article] = dict(held or {})
        self.disabled_checks = frozenset(disabled_checks)
        self.settings = settings
        self.question_search = question_search or QuestionSearch()
        self.search_log: list[SearchLogEntry] = search_log if search_log is not None else []
        self.on_step = on_step
        # Open-access full texts read for the articles about to be read (fulltext.mode auto).
        self.full_text = full_text
        self.full_text_left = full_text_budget
        self.full_text_chunks = full_text_chunks  # of a body, Results chunks embedded
        self.llm = llm
        self.search = search
        self.cache = cache if embedder is not None else None
        self.embedder = embedder
        self.visited = visited
        self.budget = budget
        self.extractions_ok = 0
        self.extractions_failed = 0
        # (root sub-question, article): a follow-up does not pay to re-read what its root read.
        self._extracted: set[tuple[str, str]] = set()
        # Articles earlier runs of the job retrieved: the question itself does not re-read them.
        self._read_before = set(read)
        self._earlier = list(findings)

    def _frame(self) -> QuestionFrame:
        """The research question's frame, which every search is planned from and every
        article found is screened by (:meth:`_bearing`)."""
        if self.frame is None:
            raise ResearchError("a researcher that searches needs the job's question frame")
        return self.frame

    @property
    def limits(self) -> ResearchDepth:
        """The depth level's limits."""
        return self.budget.limits

    async def execute_research(self, plan: ResearchPlan, on_read: OnRead, on_done: OnDone) -> None:
        """Research every PENDING sub-question of ``plan`` (and the follow-ups they raise).

        Statuses change in place. ``on_read(sub_question, article, findings)`` is awaited after
        each article read (its key is then in ``sub_question.read``), and ``on_done(sub_question,
        articles)`` when a sub-question is COMPLETED or SKIPPED; the orchestrator persists the
        job at both. An article a sub-question read in an earlier run is not read again.

        Raises:
            LLMConfigError: no model for ``extract_facts``.
            ResearchError: every fact extraction failed (the LLM is unusable); sub-questions
                left without findings are PENDING again, so a resume retries them.
        """
        for question in plan.sub_questions:
            if question.status is SubQuestionStatus.IN_PROGRESS:
                question.status = SubQuestionStatus.PENDING  # interrupted by a crash
            root = plan.root_of(question.id)
            root_id = root.id if root is not None else question.id
            self._extracted.update((root_id, key) for key in question.read)
        semaphore = asyncio.Semaphore(self.settings.concurrency)
        while True:
            wave = sorted(
                (q for q in plan.sub_questions if q.status is SubQuestionStatus.PENDING),
                key=lambda q: (q.depth, q.priority, q.id),
            )
            if not wave:
                break
            if len(wave) > 1 and any(q.id == QUESTION_ID for q in wave):
                # The question itself goes after the sub-questions (its own wave), so it reads
                # only what they did not.
                wave = [q for q in wave if q.id != QUESTION_ID]
            runnable: list[SubQuestion] = []
            for question in wave:
                question.status = SubQuestionStatus.IN_PROGRESS
                # In a worker thread: the visited-topic check embeds the question (the
                # service's event loop serves cached answers meanwhile).
                reason = await asyncio.to_thread(
                    self._skip_reason, question, is_the_question(plan, question)
                )
                if reason is not None:
                    question.status = SubQuestionStatus.SKIPPED
                    question.skip_reason = reason
                    log.info("sub_question_skipped", id=question.id, reason=reason)
                    await on_done(question, [])
                else:
                    await asyncio.to_thread(self.visited.add, question.text)
                    question.status = SubQuestionStatus.PENDING  # until its turn comes
                    runnable.append(question)

            async def run(question: SubQuestion) -> None:
                async with semaphore:
                    question.status = SubQuestionStatus.IN_PROGRESS
                    await self._research_one(plan, question, on_read, on_done)

            try:
                # A TaskGroup: when one sub-question fails (or the job is interrupted) the
                # others are cancelled, not left running against a job that has stopped.
                async with asyncio.TaskGroup() as group:
                    for question in runnable:
                        group.create_task(run(question))
            except BaseExceptionGroup as errors:
                raise errors.exceptions[0] from None
        if self.extractions_failed and not self.extractions_ok:
            for question in plan.sub_questions:
                if question.status is SubQuestionStatus.COMPLETED and question.failed_extractions:
                    question.status = SubQuestionStatus.PENDING
                    question.failed_extractions = 0
            raise ResearchError(
                f"every fact extraction failed ({self.extractions_failed} tried); "
                "the LLM for extract_facts is not usable"
            )

    def _skip_reason(self, question: SubQuestion, asked: bool = False) -> str | None:
        if question.depth > self.limits.max_depth:
            return f"depth exceeded ({question.depth} > max {self.limits.max_depth})"
        # The research question is always searched, however near a sub-question came to it.
        visited = None if asked else self.visited.match(question.text)
        if visited is not None:
            topic, similarity = visited
            return f"topic already visited: {topic!r} (similarity {similarity:.2f})"
        if not self.budget.allow():
            return f"budget: {self.budget.stop_reason}"
        return None

    async def _research_one(
        self, plan: ResearchPlan, question: SubQuestion, on_read: OnRead, on_done: OnDone
    ) -> None:
        root = plan.root_of(question.id)
        root_id = root.id if root is not None else question.id
        # Found before an interruption: no second search.
        articles = await self._found_before(question)
        asked = is_the_question(plan, question)
        if not articles:
            # The question itself is searched as ask searches it, never answered from cache.
            if not asked and self.budget.allow():  # queued before the budget ran out
                articles = await self._cached_articles(question, root_id)
            if articles:
                question.from_cache = True
                self._log_cache(question, articles)
            elif self.budget.allow(provider=True):
                articles = await (self._search_question if asked else self._search)(question)
            else:
                question.status = SubQuestionStatus.SKIPPED
                question.skip_reason = f"budget: {self.budget.stop_reason}"
                await on_done(question, [])
                return
        question.articles_found = len(articles)
        question.found = [a.key for a in articles]  # saved with the step below
        # What it read before the job was interrupted (already kept by the job).
        findings = [f for f in self._earlier if f.sub_question_id == question.id]
        read_by_any: set[str] = set()
        if question.id == QUESTION_ID:
            read_by_any = self._read_before | {key for _, key in self._extracted}
        extracted = await self._read(
            plan, question, root_id, articles, on_read, findings, read_by_any
        )
        self._add_follow_ups(plan, question, findings)
        if extracted == 0 and not question.read and self.budget.stop_reason and articles:
            # Found articles but could not afford to read any (nor had, before a resume): not
            # researched.
            question.status = SubQuestionStatus.SKIPPED
            question.skip_reason = f"budget: {self.budget.stop_reason}"
        else:
            question.status = SubQuestionStatus.COMPLETED
        log.info(
            "sub_question_completed",
            id=question.id,
            articles=len(articles),
            findings=len(findings),
            from_cache=question.from_cache,
        )
        await on_done(question, articles)

    async def _read(
        self,
        plan: ResearchPlan,
        question: SubQuestion,
        root_id: str,
        articles: list[Article],
        on_read: OnRead,
        findings: list[ResearchFinding],
        read_by_any: Collection[str] = (),
    ) -> int:
        """Read those of ``articles`` that bear on the question (one extraction each), their
        findings added to ``findings``; how many were read."""
        extracted = 0
        bearing = await self._bearing(plan, question, articles)
        # Nothing to quote, already read for this topic or a sub-question, or not about the
        # question: no LLM call.
        to_read = [
            a
            for a in articles
            if a.abstract
            and a.retraction is None  # a retracted article is never evidence
            and (root_id, a.key) not in self._extracted
            and a.key not in read_by_any
            and a.key in bearing
        ]
        to_read = await self._with_full_text(to_read, question.text)
        found = counted(len(articles), "article")
        await self._step(question, f"{found} found, {len(to_read)} to read")
        for article in to_read:
            if (root_id, article.key) in self._extracted:
                continue  # read for this topic meanwhile (a sibling running beside it)
            if not self.budget.allow(llm=True):
                break
            self._extracted.add((root_id, article.key))
            try:
                said = await self._extract(question, article)
            except TimeBudgetSpent:
                break  # the job's time ran out while it was read: not read, not failed
            extracted += 1
            if said is not None:  # a failed extraction is tried again on resume
                question.read.append(article.key)
                findings.extend(said)
                await on_read(question, article, said)
            await self._step(question, f"{extracted} of {len(to_read)} read")
        return extracted

    async def read_new(
        self, plan: ResearchPlan, question: SubQuestion, articles: list[Article], on_read: OnRead
    ) -> None:
        """Read articles new since ``question`` was researched (a refresh of the report):
        kept in the evidence cache (for ``ask`` and later jobs), screened and read as its own
        search's articles are, added to what it found. No follow-up question is raised (a
        refresh takes in what is new; it researches no new topic), and an article it read
        already is not read again.

        Raises:
            LLMConfigError: no model for ``extract_facts``.
        """
        root = plan.root_of(question.id)
        root_id = root.id if root is not None else question.id
        for sub in plan.sub_questions:  # what was read for the topic is not read again
            sub_root = plan.root_of(sub.id)
            if (sub_root.id if sub_root is not None else sub.id) == root_id:
                self._extracted.update((root_id, key) for key in sub.read)
        articles = await self._keep([a for a in articles if a.key not in question.read])
        off_before = list(question.off_question)
        question.found += [a.key for a in articles if a.key not in question.found]
        question.articles_found = len(question.found)
        await self._read(plan, question, root_id, articles, on_read, [])
        question.off_question = list(dict.fromkeys([*off_before, *question.off_question]))

    async def _with_full_text(self, articles: list[Article], question: str) -> list[Article]:
        """``articles``, those with an open-access full text carrying it (read within the job's
        full-text budget, stored in the evidence cache, with the Results chunks ``question``
        ranks highest embedded); the others as they were."""
        wanted = [a for a in articles if a.full_text is None and a.pmcid]
        if self.full_text is None or self.full_text_left <= 0 or not wanted:
            return articles
        budget = min(self.full_text_left, len(wanted))
        texts = await self.full_text(wanted[:budget], budget)
        self.full_text_left -= budget
        read = {
            key: article.model_copy(update={"full_text": texts[key]})
            for key, article in ((a.key, a) for a in wanted)
            if key in texts
        }
        if read and self.cache is not None and self.embedder is not None:
            await _written(  # downloaded: kept, even when the job is interrupted meanwhile
                functools.partial(
                    self.cache.add_articles,
                    list(read.values()),
                    self.embedder,
                    question=question,
                    full_text_chunks=self.full_text_chunks,
                )
            )
        return [read.get(a.key, a) for a in articles]

    async def _step(self, question: SubQuestion, message: str) -> None:
        if self.on_step is not None:
            await self.on_step(question, message)

    async def _bearing(
        self, plan: ResearchPlan, question: SubQuestion, articles: list[Article]
    ) -> set[str]:
        """Keys of the articles that bear on the question (the others are not read).

        An article bears on it when its title is close enough to the research question or
        the sub-question (``min_article_similarity``), or keeps the question's subject words
        (of the job's frame's question: :func:`~medlit.words.topics.anchor_terms`,
        :func:`on_topic`), and does not name otherwise what the question names
        (:func:`~medlit.research.planner.names_otherwise`: vitamin C for vitamin D). A search
        that broadened to find anything brings unrelated
        articles (falls in cancer patients for a vitamin D question): facts from them would
        end up in the report as if they answered it.
        """
        frame = self._frame()
        # The question's own words, not the fewer the frame asks about (asked_terms): a third
        # of those is one word more often ("health" of "does chewing pan masala damage your
        # health?"), and on reworded questions (benchmarks/evidence_table.py) that read 5
        # more off-question studies on the check half (10 on the tune), no more own articles.
        anchors = anchor_terms(frame.question)
        every = articles
        # An article about another vitamin (vitamin C for a vitamin D question) never bears.
        articles = [a for a in articles if not names_otherwise(a.title, frame.question)]
        keep = {a.key for a in articles if on_topic(f"{a.title} {' '.join(a.mesh_terms)}", anchors)}
        rest = [a for a in articles if a.key not in keep]
        if rest and self.embedder is not None:
            embedder = self.embedder
            texts = [plan.question, question.text, *(a.title for a in rest)]
            vectors = await asyncio.to_thread(lambda: np.asarray(embedder.embed(texts)))
            sims = vectors[2:] @ vectors[:2].T
            for article, row in zip(rest, sims, strict=True):
                if float(row.max()) >= self.settings.min_article_similarity:
                    keep.add(article.key)
        dropped = [a.pmid or a.key for a in articles if a.key not in keep]
        if dropped:
            log.info("articles_off_topic", id=question.id, dropped=dropped)
        question.off_question = [a.key for a in every if a.key not in keep]
        return keep

    async def _found_before(self, question: SubQuestion) -> list[Article]:
        """The articles an interrupted run found for ``question``, from the evidence cache
        (where its search put them); empty if there were none or any is no longer held."""
        if not question.found or self.cache is None:
            return []
        cache, keys = self.cache, list(question.found)
        held = await asyncio.to_thread(cache.fresh_by_key, keys)
        if any(key not in held for key in keys):
            return []
        log.info("found_articles_reused", id=question.id, articles=len(keys))
        return [held[key] for key in keys]

    async def _cached_articles(self, question: SubQuestion, root_id: str) -> list[Article]:
        """Articles whose cached chunks already answer the sub-question (no search needed).

        Articles already read for the same topic do not count: they would add nothing.
        """
        if self.cache is None or self.embedder is None:
            return []
        wanted = self.limits.results_per_question
        cache, embedder = self.cache, self.embedder
        matches = await asyncio.to_thread(
            lambda: cache.search_chunks(embedder.embed([question.text])[0], wanted * 4)
        )
        best: dict[str, tuple[float, Article]] = {}
        for match in matches or []:
            if match.similarity < self.settings.reuse_min_similarity:
                continue
            key = match.article.key
            if (root_id, key) in self._extracted:
                continue
            if key not in best or best[key][0] < match.similarity:
                best[key] = (match.similarity, match.article)
        needed = min(self.settings.reuse_min_articles, wanted)
        if len(best) < needed:
            return []
        ranked = sorted(best.values(), key=lambda item: -item[0])
        log.info("evidence_reused", id=question.id, articles=len(ranked[:wanted]))
        return [article for _, article in ranked[:wanted]]

    async def _search(self, question: SubQuestion) -> list[Article]:
        """A sub-question's articles: its queries narrowest first (:func:`search_terms`),
        broadened as ``ask`` broadens while they find fewer than it needs (``min_docs``)."""
        wanted = self.limits.results_per_question
        enough = min(wanted, self.question_search.min_docs)
        found: dict[str, Article] = {}
        narrowest: set[str] = set()
        question.failed_sources = {}
        for number, (term, step) in enumerate(search_steps(question, self._frame())):
            if number and not self._may_relax():
                break
            # Model-written text: bounded, so a rambling follow-up cannot fail validation.
            results = await self._logged_search(question, term[:300], wanted, step)
            for article in results.articles:
                found.setdefault(article.key, article)
            if not number:
                narrowest = set(found)
            if len(found) >= enough:
                if number:
                    log.info("search_broadened", id=question.id, query=term[:300])
                break
            log.warning(
                "few_search_results",
                id=question.id,
                query=term[:300],
                found=len(found),
                failed=results.failed,
            )
        # What the narrowest query found comes first; what broadening added, closest first and
        # only as close to the sub-question as ask's evidence must be (an OR query brings the
        # other sub-questions' articles).
        first = [a for a in found.values() if a.key in narrowest]
        added = await self._closest(
            question.text,
            [a for a in found.values() if a not in first],
            floor=self.question_search.min_relevance,
        )
        return await self._keep([*first, *added][:wanted])

    async def _search_question(self, question: SubQuestion) -> list[Article]:
        """The research question's articles, searched as ``ask`` searches it: its narrow
        query (:func:`medlit.words.search_terms.build_queries`) for ``ask``'s page of
        results, then relaxed as ``ask`` relaxes it
        (:func:`medlit.words.search_terms.relaxed_searches`) while it finds fewer than
        ``min_docs``; the articles closest to the question first (as ``ask`` ranks its
        evidence), as many as a sub-question reads and at least ``min_docs``."""
        config = self.question_search
        planned = plan_searches(self._frame(), max_terms=config.max_terms)
        steps = [(s.query, s.why) for s in planned]
        found: dict[str, Article] = {}
        question.failed_sources = {}
        for number, (term, step) in enumerate(dict(steps).items()):
            if number and not self._may_relax():
                break
            results = await self._logged_search(question, term, config.limit, step)
            for article in results.articles:
                found.setdefault(article.key, article)
            if len(found) >= config.min_docs:
                break
        # Every article found goes into the evidence cache, as ask's do; the closest are read.
        ranked = await self._closest(question.text, await self._keep(list(found.values())))
        return ranked[: max(self.limits.results_per_question, config.min_docs)]

    def _may_relax(self) -> bool:
        """Whether a search may be relaxed once more: while less than :data:`RELAX_SHARE` of
        the provider-call budget is spent (relaxed searches that find little must not spend
        the calls the job needs to go on, or stop it before it reads what they found)."""
        return self.budget.spare(share=RELAX_SHARE) and self.budget.allow(provider=True)

    async def _closest(
        self, text: str, articles: list[Article], *, floor: float | None = None
    ) -> list[Article]:
        """``articles`` closest to ``text`` first (title and abstract embedded), without those
        less similar than ``floor``; as found when there is no embedder."""
        if self.embedder is None or not articles or (len(articles) < 2 and floor is None):
            return articles
        embedder = self.embedder
        texts = [text, *(f"{a.title} {a.abstract_text[:1000]}" for a in articles)]
        vectors = await asyncio.to_thread(lambda: np.asarray(embedder.embed(texts)))
        sims = vectors[1:] @ vectors[0]
        order = sorted(range(len(articles)), key=lambda i: -float(sims[i]))
        return [articles[i] for i in order if floor is None or float(sims[i]) >= floor]

    async def _keep(self, articles: list[Article]) -> list[Article]:
        """Put found articles in the evidence cache (for ``ask`` and later jobs).

        An interruption arriving meanwhile waits for the write to end: the search that found
        them is logged already, and a resume takes them from the cache instead of sending it
        again (:meth:`_logged_search`).
        """
        if articles and self.cache is not None and self.embedder is not None:
            # Chunking and embedding are CPU work: off the event loop.
            await _written(functools.partial(self.cache.add_articles, articles, self.embedder))
        return articles

    async def _logged_search(
        self, question: SubQuestion, term: str, limit: int, step: str = ""
    ) -> SearchResults:
        """One search of every source, each source's query recorded in the search log.

        A search an interrupted run of the job already sent and logged is not sent again:
        what it found is taken from the evidence cache (where the run put it), and the log
        keeps its entries as they are. When the cache no longer holds any of it, or a source
        had failed, it is sent again and its new entries replace the old: the log holds each
        query once.
        """
        query = SearchQuery(term=term, limit=limit)
        earlier = [
            entry
            for entry in self.search_log
            if (entry.sub_question_id, entry.query, entry.step, entry.limit)
            == (question.id, term, step, limit)
            and entry.status != "cache"
        ]
        if earlier:
            again = await self._logged_before(query, earlier)
            if again is not None:
                log.info("logged_search_reused", id=question.id, query=term[:120])
                return again
            self.search_log[:] = [e for e in self.search_log if e not in earlier]
        at = utcnow()
        known = HeldArticles(self._held, self.cache)
        results = await self.search(query, known)
        self._held.update((a.key, a) for a in results.articles)
        # Kept on the sub-question: the report must say which sources it could not ask.
        for name in results.failed:
            question.failed_sources[name] = results.providers[name].error or "failed"
        found = [a.key for a in results.articles]
        for name, status in results.providers.items():
            if status.status == "disabled":
                continue
            self.search_log.append(
                SearchLogEntry(
                    sub_question_id=question.id,
                    source=name,
                    query=term,
                    limit=limit,
                    date=at,
                    hits=status.count,
                    non_english=status.dropped_non_english,
                    status="not_asked" if status.not_asked else status.status,
                    error=status.error,
                    found=found,
                    step=step,
                )
            )
        return results

    async def _logged_before(
        self, query: SearchQuery, entries: list[SearchLogEntry]
    ) -> SearchResults | None:
        """The results of a search logged by an earlier run of the job, from the evidence
        cache (None: a source had failed, or the cache holds none of what it found)."""
        if any(entry.status not in ("ok", "no_match", "not_asked") for entry in entries):
            return None
        keys = list(dict.fromkeys(key for entry in entries for key in entry.found))
        if not keys:
            return SearchResults(query=query)  # it found nothing: nothing to ask again
        if self.cache is None:
            return None
        cache = self.cache
        held = await asyncio.to_thread(cache.fresh_by_key, keys)
        if not held:
            return None
        # What the earlier run kept of it: all it went on to use (the rest it had set aside).
        return SearchResults(query=query, articles=[held[key] for key in keys if key in held])

    def _log_cache(self, question: SubQuestion, articles: list[Article]) -> None:
        """Articles taken from the evidence cache instead of a search, in the search log."""
        self.search_log.append(
            SearchLogEntry(
                sub_question_id=question.id,
                source="evidence cache",
                query=question.text,
                limit=self.limits.results_per_question,
                hits=len(articles),
                status="cache",
                found=[a.key for a in articles],
            )
        )

    async def _extract(
        self, question: SubQuestion, article: Article
    ) -> list[ResearchFinding] | None:
        """The findings of one article (None when its extraction failed).

        Raises:
            TimeBudgetSpent: the job's time ran out first (not a failed extraction).
        """
        sentences = numbered_sentences(article, max_chars=self.settings.max_abstract_chars)
        user = (
            f"Sub-question: {question.text}\n\nArticle PMID: {article.pmid or 'none'}\n"
            f"Sentences of the article:\n{render_numbered(sentences)}"
        )
        try:
            reply = await self.llm.complete_json(
                Task.EXTRACT, messages(EXTRACT_SYSTEM, user), ExtractionReply
            )
        except (LLMConfigError, TimeBudgetSpent):
            raise
        except LLMError as exc:
            self.extractions_failed += 1
            question.failed_extractions += 1
            question.unreadable.append(article.key)
            log.warning(
                "extraction_failed",
                id=question.id,
                pmid=article.pmid,
                error=type(exc).__name__,
                message=str(exc)[:200],
            )
            return None
        self.extractions_ok += 1
        question.proposed_findings += len(reply.claims)
        return [
            finding
            for claim in reply.claims
            if (finding := self._finding(question, article, claim, sentences)) is not None
        ]

    def _dropped(
        self,
        question: SubQuestion,
        article: Article,
        claim: ExtractedClaim,
        reason: str,
        **more: Any,
    ) -> None:
        question.dropped_findings[reason] = question.dropped_findings.get(reason, 0) + 1
        log.warning(
            "fabricated_claim_dropped",
            id=question.id,
            pmid=article.pmid,
            reason=reason,
            claim=claim.claim[:120],
            quote=claim.quote[:120],
            sentences=claim.sentences,
            **more,
        )

    def _checked(
        self,
        question: SubQuestion,
        article: Article,
        claim: ExtractedClaim,
        sentences: Sequence[Numbered],
    ) -> tuple[str, CheckedClaim, bool] | None:
        """(statement, its check, whether the statement is the quote itself); None when the
        claim points at a sentence the article does not have."""
        # labels are shown inline, like quotes; "The article states that" is no finding
        statement = unframed_claim(without_label(claim.claim, article))
        read = article.as_read()  # a quote from the full text is the article's too
        if not claim.sentences:  # a quote written out: looked up as written
            checked = check_claim(statement, claim.quote, read, question.text, self.disabled_checks)
            return statement, checked, False
        quote = pointed_quote(claim.sentences, sentences)
        if quote is None:
            return None
        checked = check_claim(statement, quote, read, question.text, self.disabled_checks)
        if checked.reason is None:
            return statement, checked, False
        # The restatement did not hold: the finding is the quoted sentence itself.
        log.info("claim_restatement_replaced", id=question.id, reason=checked.reason)
        quoted = check_claim(quote, quote, read, question.text, self.disabled_checks)
        return (quote, quoted, True) if quoted.reason is None else (statement, checked, False)

    def _finding(
        self,
        question: SubQuestion,
        article: Article,
        claim: ExtractedClaim,
        sentences: Sequence[Numbered] = (),
    ) -> ResearchFinding | None:
        pmid = (claim.pmid or "").strip().removeprefix("PMID:").strip() or None
        if pmid is not None and pmid != (article.pmid or ""):
            self._dropped(question, article, claim, "pmid_mismatch", claimed_pmid=pmid)
            return None
        held = self._checked(question, article, claim, sentences)
        if held is None:
            self._dropped(question, article, claim, OUT_OF_RANGE, shown=len(sentences))
            return None
        statement, checked, quoted = held
        if checked.reason is not None:  # unquoted (quote None) only with claim-quote off
            swap = checked.swap
            self._dropped(
                question,
                article,
                claim,
                checked.reason,
                **({"swapped": f"{swap.brought} for {swap.dropped}"} if swap else {}),
            )
            return None
        follow_up = None
        if claim.triggers_recursion and claim.follow_up_question:
            follow_up = claim.follow_up_question.strip() or None
        return ResearchFinding(
            claim=statement,
            quote=checked.quote,
            pmid=article.pmid,
            article_key=article.key,
            numbers=[n for n in claim.numbers if n.strip()],
            sub_question_id=question.id,
            source=Citation.from_article(article),
            follow_up=follow_up,
            sentences=sorted(set(claim.sentences)),
            quoted=quoted,
            direction=claim.direction,
        )

    def _add_follow_ups(
        self, plan: ResearchPlan, question: SubQuestion, findings: list[ResearchFinding]
    ) -> None:
        """Follow-ups raised by findings become sub-questions one level deeper, keeping the
        research question's subject and outcome and saying which parts of it they name."""
        texts: list[str] = []
        for finding in findings:
            if (
                finding.follow_up
                and len(texts) < self.settings.max_follow_ups
                and normalise_topic(finding.follow_up) not in {normalise_topic(t) for t in texts}
            ):
                texts.append(finding.follow_up)
        for n, text in enumerate(texts, start=1):
            child = SubQuestion(
                id=f"{question.id}.{n}",
                text=text,
                priority=question.priority,
                rationale=f"follow-up raised while researching {question.id}",
                depth=question.depth + 1,
                parent_id=question.id,
                subject=question.subject,
                outcome=question.outcome,
                asks=list(parts_named(self.frame, text)) if self.frame is not None else [],
            )
            if child.depth > self.limits.max_depth:
                # Recorded (not silently dropped) so the report can say what was left open.
                child.status = SubQuestionStatus.SKIPPED
                child.skip_reason = f"depth exceeded ({child.depth} > max {self.limits.max_depth})"
            plan.sub_questions.append(child)
