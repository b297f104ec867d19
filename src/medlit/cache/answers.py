"""Tier 1: the answer cache (seed 001 "TIER 1", seed 000 "CHECKER").

A cached answer is served for a new question only when *all* of these hold, checked on each
candidate in order of similarity (the first that passes is the hit):

1. cosine similarity of the question embeddings >= ``CacheSettings.tau``;
2. same namespace (tenant) and same settings fingerprint (embedder, prompt version, LLM model,
   sources: a change to any must not serve old answers);
3. not expired (``answer_ttl_s`` since it was stored);
3a. the same origin: the answer was asked of the same source addresses as this question
   (:mod:`medlit.provenance`; an answer stored before origins were recorded has none and is
   never served); a refusal names both (``AnswerLookup.guard_reason``: "cached answer came
   from http://127.0.0.1:8765/entrez/eutils/ not https://eutils.ncbi.nlm.nih.gov/...");
4. the cached answer's retrieval score >= ``min_score`` (``subject_min_score`` for an answer
   admitted on one cited article about the question's subject and outcome: its
   ``extra.admission`` is "subject");
5. the guard (:mod:`medlit.cache.guard`) finds every word that differs between the two
   questions to be a spelling, an inflection, a vetted synonym, a function word or a phrase
   form, or, where the only difference is a pair of words, that pair is remembered as saying
   the same (:mod:`medlit.cache.word_pairs`: judged once by a calibrated model in the
   background, or approved by a person; ``AnswerLookup.word_pair``, revocable); a refusal
   names the words (``AnswerLookup.guard_reason``: "differs: improve / compromise"), and a
   pair never judged is kept for the judge or a person (``AnswerLookup.pending_pair``).

Below ``tau``, the *verified band* (:mod:`medlit.cache.verify`) may serve a candidate whose
similarity is in ``[verify_band.lower, tau)`` and that passed checks 2-4 and the guard's
related-question checks (:meth:`~medlit.cache.guard.QuestionGuard.check_related`: no known
difference in negation, number, population, drug ...), when an LLM judges that one answer
fully answers both questions (:meth:`AnswerCache.search_query_verified`; at most
``verify_band.max_calls`` calls per lookup, verdicts remembered per pair). Above ``tau`` nothing
changes.

The same question asked again (the same text) is read by its key before any vector search
(:meth:`~medlit.storage.base.Store.answer_for_question`), with the same checks: a new process
serves it without opening the vector index.

A miss says why (``MissReason``). Entries are refused without citations
(:class:`~medlit.errors.CacheAdmissionError`); the agent decides admission otherwise
(``should_cache``). LRU eviction at ``answer_capacity`` and TTL expiry are enforced when storing
and when looking up (an expired candidate is deleted when met). Hits, misses by reason,
evictions and expirations are counted in the store (``medlit cache stats``).

Returned entries are fresh objects parsed from the store: a caller mutating one never changes
the cache.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from medlit.cache._pending import PendingWrites
from medlit.config import CacheSettings
from medlit.errors import CacheAdmissionError
from medlit.log import get_logger
from medlit.provenance import refusal
from medlit.storage.base import AnswerRecord, Store, Vector
from medlit.types import Citation, retraction_of

if TYPE_CHECKING:
    from medlit.cache.guard import Asked
    from medlit.cache.verify import HitVerifier, Judgement, VerdictStore
    from medlit.cache.word_pairs import WordJudge, WordPair, WordPairStore
    from medlit.words.frame import QuestionFrame

__all__ = ["AnswerCache", "AnswerLookup", "CachedAnswer", "MissReason"]

log = get_logger("cache.answers")

MissReason = Literal[
    "disabled",
    "nothing_similar",
    "fingerprint_mismatch",
    "expired",
    "other_source",
    "low_score",
    "guard_rejected",
    "not_verified",
    "cites_retracted",
]


class CachedAnswer(BaseModel):
    """The payload of a tier-1 entry: what the agent stores and gets back on a hit."""

    answer: str = Field(description="The answer text, with its citation markers.")
    citations: list[Citation] = Field(description="What the answer cites (at least one).")
    retrieval_score: float = Field(description="Retrieval score of the evidence behind it.")
    verdict: str | None = Field(None, description="Short verdict (yes/no/uncertain...).")
    doc_scores: dict[str, float] = Field(default_factory=dict, description="Score per article.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Anything else to keep.")
    question: str = Field("", description="On lookup: the question it was cached under.")
    created_at: float = Field(0.0, description="On lookup: when it was stored (epoch s).")
    checked_at: float = Field(
        0.0,
        description="On lookup: when it was last checked for new articles (epoch s; 0: not "
        "since it was stored).",
    )


@dataclass
class AnswerLookup:
    """The result of :meth:`AnswerCache.search_query`.

    Attributes:
        hit: whether a cached answer may be served.
        entry: the cached answer (a private copy) on a hit, else None.
        similarity: cosine similarity of the served entry, or of the best candidate on a miss
            (0.0 when nothing was similar enough).
        miss_reason: why not, on a miss (the best candidate's reason).
        guard_reason: the guard's explanation when it rejected the best candidate, or the
            line saying where an answer of another origin came from (``other_source``).
        candidates: entries above ``tau`` in scope that were considered.
        entry_id: the store's id of the served entry.
        verified_by: on a hit from the verified band, the verifier model; else None.
        verify_calls: verification calls this lookup made.
        word_pair: on a hit served through a remembered word pair, the pair.
        pending_pair: on a miss whose only obstacle at tau was a pair of words with no
            verdict yet, (the pair, the cached question): for the judge or a person.
    """

    hit: bool
    entry: CachedAnswer | None = None
    similarity: float = 0.0
    miss_reason: MissReason | None = None
    guard_reason: str | None = None
    candidates: int = 0
    entry_id: int | None = None
    verified_by: str | None = None
    verify_calls: int = 0
    word_pair: WordPair | None = None
    pending_pair: tuple[WordPair, str] | None = None


class _Verdict(Protocol):
    @property
    def ok(self) -> bool: ...

    @property
    def reason(self) -> str | None: ...


class Guard(Protocol):
    """What the cache needs of :class:`medlit.cache.guard.QuestionGuard`."""

    def check(self, new_question: str, cached_question: str) -> _Verdict:
        """May ``cached_question``'s answer be served for ``new_question``?"""
        ...


class AnswerCache:
    """Tier-1 policy over a :class:`~medlit.storage.base.Store`.

    Args:
        store: where entries live.
        settings: thresholds, TTL, capacity, guard switch.
        guard: the medical-difference guard (default: :class:`medlit.cache.guard.QuestionGuard`
            when ``settings.guard`` is on).
        clock: epoch seconds now (inject a fake one in tests).
        max_candidates: candidates above ``tau`` examined per lookup.
    """

    def __init__(
        self,
        store: Store,
        settings: CacheSettings | None = None,
        *,
        guard: Guard | None = None,
        clock: Callable[[], float] = time.time,
        max_candidates: int = 8,
    ) -> None:
        self.store = store
        self.settings = settings or CacheSettings()
        self.clock = clock
        self.max_candidates = max_candidates
        self._guard = guard  # the default one is made on first use (see ``guard``)
        self._maintained = False
        self._searched = False  # by vector: until then an exact repeat is read by key
        self._verdicts: VerdictStore | None = None
        self._word_pairs: WordPairStore | None = None
        self._pending = PendingWrites(self._write_pending, self.settings.flush_interval_s)
        add_hook = getattr(store, "add_close_hook", None)
        if add_hook is not None:
            add_hook(self._pending.close)

    def _write_pending(self, counts: dict[str, int], touched: list[Hashable]) -> None:
        self.store.touch_answers([int(k) for k in touched], self.clock())  # type: ignore[call-overload]
        self.store.bump_counters(counts)

    def flush(self) -> None:
        """Write buffered hit counters and LRU refreshes (also done on store close)."""
        self._pending.flush()

    @property
    def guard(self) -> Guard | None:
        """The guard in use, or None when ``settings.guard`` is off."""
        if not self.settings.guard:
            return None
        if self._guard is None:  # first use: a fresh process's repeat loads no vocabulary
            from medlit.cache.guard import QuestionGuard

            self._guard = QuestionGuard()
        return self._guard

    def search_query(
        self,
        question: str,
        embedding: Vector,
        *,
        namespace: str,
        fingerprint: str,
        count_miss: bool = True,
        origin: str | None = None,
        frame: QuestionFrame | None = None,
    ) -> AnswerLookup:
        """Look up a cached answer for ``question`` (see the module docstring for the rules).

        Args:
            question: the standalone question as asked.
            embedding: its embedding (unit norm).
            namespace: tenant scope.
            fingerprint: ``Settings.answer_fingerprint(...)`` of the current settings.
            count_miss: False leaves a miss uncounted: the caller may look again (after
                waiting for another process's identical ask) and counts one result only,
                that lookup's or this one's (:meth:`count_miss`). A hit is always counted.
            origin: the addresses the question is asked of (:func:`medlit.provenance.
                answer_origin`): an answer of another origin is refused. None: not checked
                (tools that read the cache without asking a source).
            frame: the question's frame, where the caller has read it: what the guard's
                related-question checks compare with the frame stored with a candidate (None:
                read when a check needs it).

        Returns:
            An :class:`AnswerLookup`: a hit with a private copy of the entry, or a miss with
            its reason.
        """
        asked = _asked(question, frame)
        lookup, _band = self._search(asked, embedding, namespace, fingerprint, None, origin)
        self._remember_pair(lookup, namespace, question)
        return lookup if lookup.hit or not count_miss else self._miss(lookup)

    async def search_key(
        self, question: str, *, namespace: str, fingerprint: str, origin: str | None = None
    ) -> AnswerLookup | None:
        """The answer stored under exactly ``question``, read by its key with every check of
        :meth:`search_query` (a hit is counted); None when there is none: then look up by
        vector. Needs no embedding, so a new process serving the same question again loads
        no embedding model and no vector library."""
        from medlit.lookups import run_lookup

        if not self.settings.enabled or self._searched:  # no trip to the lane for a None
            return None
        return await run_lookup(
            self.store.read_concurrency, self._keyed, question, namespace, fingerprint, origin
        )

    def _keyed(
        self, question: str, namespace: str, fingerprint: str, origin: str | None
    ) -> AnswerLookup | None:
        if not self._maintained:
            self.maintain()
        cutoff = self.clock() - self.settings.answer_ttl_s
        return self._keyed_hit(question, namespace, fingerprint, cutoff, origin)

    async def search_query_verified(
        self,
        question: str,
        embedding: Vector,
        *,
        namespace: str,
        fingerprint: str,
        verifier: HitVerifier | None,
        count_miss: bool = True,
        judge: Callable[[], WordJudge | None] | None = None,
        origin: str | None = None,
        frame: QuestionFrame | None = None,
    ) -> AnswerLookup:
        """:meth:`search_query`, then, on a miss, the verified band (``verifier``: None, off).

        ``frame``: the question's frame, as for :meth:`search_query`. ``judge``: returns the
        word-pair judge (None: closed); on a miss whose only obstacle
        at tau is a word pair with no verdict, the pair is judged in the background
        (:mod:`medlit.cache.word_pairs`); this lookup never waits for it.

        Band candidates are judged best first until one is accepted or the call budget
        (``verify_band.max_calls``) is spent; a remembered verdict costs no call. A verifier
        failure or timeout is a miss (``not_verified``), never an error.
        """
        import anyio.to_thread  # here: a cached CLI ask never imports it

        from medlit.lookups import run_lookup

        # The store and the guard run in the lookup lane: this coroutine is on the service's
        # event loop, where a hit must never wait behind a database read. Writes (a verdict,
        # the verdicts' table) go to anyio's threads: none may hold the lane up.
        lane = self.store.read_concurrency
        lower = None if verifier is None else verifier.settings.lower
        asked = _asked(question, frame)
        lookup, band = await run_lookup(
            lane, self._search, asked, embedding, namespace, fingerprint, lower, origin
        )
        if lookup.word_pair is not None or lookup.pending_pair is not None:
            await anyio.to_thread.run_sync(self._remember_pair, lookup, namespace, question)
            opened = None if judge is None or lookup.pending_pair is None else judge()
            if opened is not None and lookup.pending_pair is not None:
                pair, cached = lookup.pending_pair
                opened.schedule(namespace, pair, question, cached)
        if verifier is None or lookup.hit or not band:
            return lookup if lookup.hit or not count_miss else self._miss(lookup)
        verdicts = await anyio.to_thread.run_sync(lambda: self.verdicts)
        calls = 0
        judged = False
        for record, similarity in band:
            judgement: Judgement | None = await run_lookup(
                lane, verdicts.get, record.id, question, verifier.model
            )
            if judgement is not None and (
                verifier.accepts(judgement, similarity) or verifier.refuses(judgement, similarity)
            ):
                self._pending.count("answers.verify.remembered")
            else:
                budget = verifier.settings.max_calls - calls
                if budget <= 0:
                    break
                judgement, spent = await verifier.judge_in_time(
                    record.question, question, similarity, budget=budget
                )
                calls += spent
                self._pending.count("answers.verify.calls", spent)
                if judgement is None:
                    self._pending.count("answers.verify.errors")
                    judged = True
                    break
                if judgement.complete or verifier.refuses(judgement, similarity):
                    await anyio.to_thread.run_sync(
                        verdicts.put, record.id, question, verifier.model, judgement
                    )
            judged = True
            if verifier.accepts(judgement, similarity):
                self._pending.count("answers.verify.accepted")
                self._pending.count("answers.hits.verified")
                hit = self._hit(record, similarity, len(band))
                hit.verified_by, hit.verify_calls = verifier.model, calls
                return hit
            if not verifier.refuses(judgement, similarity):
                break  # a first order that passed, with no call left for the second
            self._pending.count("answers.verify.refused")
        lookup.verify_calls = calls
        if judged and lookup.miss_reason in ("nothing_similar", "fingerprint_mismatch"):
            # Nothing in scope at tau: the verifier's refusal is why this missed.
            lookup.miss_reason, lookup.similarity = "not_verified", band[0][1]
            lookup.candidates = len(band)
        return self._miss(lookup) if count_miss else lookup

    @property
    def verdicts(self) -> VerdictStore:
        """Remembered verification verdicts (the table is created on first use)."""
        if self._verdicts is None:
            from medlit.cache.verify import VerdictStore

            self._verdicts = VerdictStore(self.store)
        return self._verdicts

    @property
    def word_pairs(self) -> WordPairStore:
        """Remembered word pairs (the tables are created on first use)."""
        if self._word_pairs is None:
            from medlit.cache.word_pairs import WordPairStore

            self._word_pairs = WordPairStore(self.store)
        return self._word_pairs

    def _through_pair(
        self, lookup: AnswerLookup | None, record: AnswerRecord, asked: Asked, namespace: str
    ) -> tuple[WordPair | None, str | None]:
        """After the guard refused ``record`` at tau: (the remembered pair that serves it,
        None) or (None, the refusal with what the pairs say); an unsettled pair is kept on
        ``lookup`` (the first one) for the judge."""
        from medlit.cache.guard import QuestionGuard
        from medlit.cache.word_pairs import settle

        guard = self.guard
        if not isinstance(guard, QuestionGuard):
            return None, None
        settled = settle(self.word_pairs, guard, namespace, asked, _cached_frame(record))
        if settled.ok:
            return settled.pair, None
        if settled.pair is None:
            return None, None
        if settled.unsettled and lookup is not None and lookup.pending_pair is None:
            lookup.pending_pair = (settled.pair, record.question)
        # The guard's own words stand; a pair judged different says so.
        return None, "judged different" if settled.verdict == "different" else None

    def _remember_pair(self, lookup: AnswerLookup, namespace: str, question: str) -> None:
        """Keep a hit's pair use (revocation drops the answer) or a miss's pending pair."""
        if lookup.hit and lookup.word_pair is not None and lookup.entry_id is not None:
            self.word_pairs.record_use(namespace, lookup.word_pair, lookup.entry_id)
            self._pending.count("answers.hits.word_pair")
        elif not lookup.hit and lookup.pending_pair is not None:
            pair, cached = lookup.pending_pair
            if self.word_pairs.propose(namespace, pair, question, cached):
                self._pending.count("answers.word_pairs.proposed")

    def _check(
        self,
        record: AnswerRecord,
        asked: Asked,
        cutoff: float,
        *,
        band: bool = False,
        origin: str | None = None,
    ) -> tuple[MissReason | None, str | None]:
        """Checks 3-5 on one candidate: (why not, the guard's reason), or (None, None).

        ``asked``: the question looked up, or its frame. ``band``: a candidate for the LLM
        verifier, which judges the words that differ: the guard's related-question checks
        only, where the guard has them; they compare ``asked``'s frame with the one stored
        with ``record``.
        """
        question = _text(asked)
        if record.created_at < cutoff:
            return "expired", None
        if origin is not None and record.origin != origin:
            return "other_source", refusal("cached answer", record.origin, origin)
        if record.retrieval_score < self._floor(record):
            return "low_score", None
        # The same words need no guard: the default one (made on first use) serves them, so
        # a new process serving a question asked again does not load it.
        same = question == record.question and self._guard is None
        guard = None if same else self.guard
        if guard is not None:
            related = getattr(guard, "check_related", None) if band else None
            verdict = (
                guard.check(question, record.question)
                if related is None
                else related(asked, _cached_frame(record))
            )
            if not verdict.ok:
                return "guard_rejected", verdict.reason
        return None, None

    def _floor(self, record: AnswerRecord) -> float:
        """The retrieval score a hit on ``record`` needs: ``subject_min_score`` for an answer
        admitted on one cited article about the question's subject and outcome
        (``extra.admission`` "subject", :func:`medlit.agent.decisions.should_cache`), else
        ``min_score``; with ``subject_min_score`` null such an answer is never served."""
        extra = record.payload.get("extra") or {}
        if extra.get("admission") != "subject":
            return self.settings.min_score
        floor = self.settings.subject_min_score
        return math.inf if floor is None else floor

    def _cites_retracted(self, record: AnswerRecord) -> str | None:
        """The PMID of an article the answer cites that the store now holds as retracted (an
        answer resting on it is not served again), else None."""
        citations = record.payload.get("citations") or []
        pmids = [str(c["pmid"]) for c in citations if isinstance(c, dict) and c.get("pmid")]
        if not pmids:
            return None
        held = self.store.publication_types_by_pmid(pmids)  # not the whole articles
        return next((p for p, types in held.items() if retraction_of(types) is not None), None)

    def _hit(self, record: AnswerRecord, similarity: float, candidates: int) -> AnswerLookup:
        self._pending.touch([record.id])
        self._pending.count("answers.hits")
        entry = CachedAnswer.model_validate(record.payload)
        entry.question, entry.created_at = record.question, record.created_at
        entry.checked_at = record.checked_at
        log.debug("answer_cache_hit", similarity=round(similarity, 4), id=record.id)
        return AnswerLookup(
            hit=True,
            entry=entry,
            similarity=similarity,
            candidates=candidates,
            entry_id=record.id,
        )

    def _search(
        self,
        asked: Asked,
        embedding: Vector,
        namespace: str,
        fingerprint: str,
        band_lower: float | None,
        origin: str | None = None,
    ) -> tuple[AnswerLookup, list[tuple[AnswerRecord, float]]]:
        """The lookup at ``tau`` (a hit is counted, a miss not yet), and the band candidates
        in ``[band_lower, tau)`` that passed every check, best first (``asked``: the question
        looked up, or its frame)."""
        question = _text(asked)
        cfg = self.settings
        if not cfg.enabled:
            return AnswerLookup(hit=False, miss_reason="disabled"), []
        if not self._maintained:
            self.maintain()
        cutoff = self.clock() - cfg.answer_ttl_s  # the same comparison as maintain()'s purge
        keyed = self._keyed_hit(question, namespace, fingerprint, cutoff, origin)
        if keyed is not None:
            return keyed, []
        floor = cfg.tau if band_lower is None else min(band_lower, cfg.tau)
        # One search of the namespace, any settings: its candidates of these settings are the
        # lookup's, and on a miss the rest tell whether the question is cached under other
        # settings (a second search, a second database round trip, only if the list is full).
        scoped, found = self._candidates(embedding, namespace, fingerprint, floor)
        above = [(r, s) for r, s in found if s >= cfg.tau]
        expired: list[int] = []
        first: AnswerLookup | None = None
        pending = AnswerLookup(hit=False)  # carries the first unsettled word pair
        for record, similarity in above:
            reason, guard_reason = self._check(record, asked, cutoff, origin=origin)
            pair = None
            if reason == "guard_rejected":
                pair, said = self._through_pair(pending, record, asked, namespace)
                if pair is not None:
                    reason, guard_reason = None, None
                elif said is not None:
                    guard_reason = f"{guard_reason} ({said})"
            if reason is None and (retracted := self._cites_retracted(record)):
                reason, guard_reason = "cites_retracted", f"cites retracted PMID {retracted}"
            if reason is None:
                self._expire(expired)
                hit = self._hit(record, similarity, len(above))
                hit.word_pair = pair
                return hit, []
            if reason == "expired":
                expired.append(record.id)
            first = first or AnswerLookup(
                hit=False,
                similarity=similarity,
                miss_reason=reason,
                guard_reason=guard_reason,
                candidates=len(above),
            )
        if first is None:
            # Nothing of these settings reached tau, so an answer at tau in the namespace (best
            # first: it would lead the list) is one of other settings.
            other = bool(scoped) and scoped[0][1] >= cfg.tau
            miss: MissReason = "fingerprint_mismatch" if other else "nothing_similar"
            first = AnswerLookup(hit=False, miss_reason=miss)
        first.pending_pair = pending.pending_pair
        band = self._band(found, asked, cutoff, expired, origin)
        self._expire(expired)
        return first, band

    def _keyed_hit(
        self,
        question: str,
        namespace: str,
        fingerprint: str,
        cutoff: float,
        origin: str | None = None,
    ) -> AnswerLookup | None:
        """The answer stored under exactly ``question`` when it passes every check, else None.

        The same words embed to the same vector (the fingerprint names the embedder), so the
        vector search would find it first, at similarity 1: a keyed read finds it without
        opening the vector index (which in a new process costs more than the rest of the
        lookup). Tried until the cache first searches by vector, so a long-lived process
        pays no extra read per lookup.
        """
        if self._searched:
            return None
        record = self.store.answer_for_question(
            question, namespace=namespace, fingerprint=fingerprint
        )
        # A refusal (another origin's answer, say) is left to the vector search, which meets
        # the same entry first and says why.
        if record is None or self._check(record, question, cutoff, origin=origin)[0] is not None:
            return None
        if self._cites_retracted(record):
            return None
        return self._hit(record, 1.0, 1)

    def _candidates(
        self, embedding: Vector, namespace: str, fingerprint: str, floor: float
    ) -> tuple[list[tuple[AnswerRecord, float]], list[tuple[AnswerRecord, float]]]:
        """The namespace's answers from ``floor`` up (any settings, best first) and, of them,
        those of ``fingerprint`` (searched again by fingerprint when the first list was full)."""
        self._searched = True
        wide = self.max_candidates * 2  # room for a few other settings' answers
        scoped = self.store.search_answers(
            embedding, min_similarity=floor, namespace=namespace, limit=wide
        )
        found = [(r, s) for r, s in scoped if r.fingerprint == fingerprint][: self.max_candidates]
        if len(scoped) == wide and len(found) < self.max_candidates:
            found = self.store.search_answers(
                embedding,
                min_similarity=floor,
                namespace=namespace,
                fingerprint=fingerprint,
                limit=self.max_candidates,
            )
        return scoped, found

    def _band(
        self,
        found: list[tuple[AnswerRecord, float]],
        asked: Asked,
        cutoff: float,
        expired: list[int],
        origin: str | None = None,
    ) -> list[tuple[AnswerRecord, float]]:
        """The candidates below ``tau`` that pass every band check, in order; the ids of the
        expired ones are appended to ``expired``."""
        band: list[tuple[AnswerRecord, float]] = []
        for record, similarity in found:
            if similarity >= self.settings.tau:
                continue
            reason, _ = self._check(record, asked, cutoff, band=True, origin=origin)
            if reason is None:
                band.append((record, similarity))
            elif reason == "expired":
                expired.append(record.id)
        return band

    def add_query(
        self,
        question: str,
        embedding: Vector,
        payload: CachedAnswer | Mapping[str, Any],
        *,
        namespace: str,
        fingerprint: str,
        origin: str = "",
        frame: QuestionFrame | None = None,
        basis: Mapping[str, Any] | None = None,
    ) -> int:
        """Store an answer under ``question`` (replacing one cached for the same question),
        with the addresses it was asked of (``origin``: :mod:`medlit.provenance`), the
        question's frame (``frame``, the one the ask read: kept for the guard; one of another
        question is not kept, and the question is then read when a check compares it) and what
        it rests on (``basis``: its searches, one per source and query, with when each ran; the
        keys of the articles they found or the store gave it; its sources), which a check for
        new articles reads (:mod:`medlit.agent.recheck`) and a hit never does.

        Raises:
            CacheAdmissionError: the answer has no citation with a PMID or DOI, no text, or a
                retrieval score that is not a number in [0, 1].

        Returns:
            The entry's id.
        """
        entry = (
            payload.model_copy(deep=True)
            if isinstance(payload, CachedAnswer)
            else CachedAnswer.model_validate(dict(payload))
        )
        if not any(c.pmid or c.doi for c in entry.citations):
            raise CacheAdmissionError("refusing to cache an answer without citations")
        if not entry.answer.strip():
            raise CacheAdmissionError("refusing to cache an empty answer")
        if not (math.isfinite(entry.retrieval_score) and 0.0 <= entry.retrieval_score <= 1.0):
            raise CacheAdmissionError(f"invalid retrieval score {entry.retrieval_score}")
        data = entry.model_dump(mode="json", exclude={"question", "created_at", "checked_at"})
        self.flush()  # eviction below must see every hit so far
        answer_id = self.store.insert_answer(
            namespace=namespace,
            fingerprint=fingerprint,
            question=question,
            embedding=embedding,
            payload=data,
            retrieval_score=entry.retrieval_score,
            now=self.clock(),
            origin=origin,
            frame=frame.stored()
            if frame is not None and frame.question == question.strip()
            else "",
            basis=basis,
        )
        self._pending.count("answers.inserts")
        self.maintain()
        return answer_id

    def maintain(self) -> tuple[int, int]:
        """Delete expired entries, then evict LRU entries over capacity; returns the counts."""
        self._maintained = True
        self.flush()
        expired = self.store.purge_answers(created_before=self.clock() - self.settings.answer_ttl_s)
        evicted = self.store.evict_answers(self.settings.answer_capacity)
        self._pending.count("answers.expired", expired)
        self._pending.count("answers.evictions", evicted)
        if self._verdicts is not None:
            self._verdicts.purge(self.clock() - self.settings.answer_ttl_s)
        return expired, evicted

    def clear(self, namespace: str | None = None) -> int:
        """Delete every entry (of one namespace, or all); returns how many."""
        self.flush()
        return self.store.clear_answers(namespace)

    def drop(self, ids: list[int]) -> int:
        """Delete entries by id (an answer a recheck found outdated); returns how many."""
        self.flush()
        dropped = self.store.delete_answers(ids)
        self._pending.count("answers.rechecks.dropped", dropped)
        return dropped

    def _expire(self, ids: list[int]) -> None:
        if not ids:
            return
        self.flush()
        self._pending.count("answers.expired", self.store.delete_answers(ids))

    def count_recheck(self, status: str) -> None:
        """Count one check of an answer for new articles by its outcome (``medlit cache
        stats``: unchanged, changed, unrecorded, failed, busy)."""
        self._pending.count(f"answers.rechecks.{status}")

    def count_miss(self, reason: str | None) -> None:
        """Count one lookup's miss that was looked up with ``count_miss=False``."""
        self._pending.count(f"answers.miss.{reason}")

    def _miss(self, lookup: AnswerLookup) -> AnswerLookup:
        self.count_miss(lookup.miss_reason)
        return lookup


def _asked(question: str, frame: QuestionFrame | None) -> Asked:
    """The question looked up as the guard takes it: its frame when the caller carries the
    frame of these words (one of another question, a rewrite's, is not used), else its text."""
    return frame if frame is not None and frame.question == question else question


def _text(asked: Asked) -> str:
    return asked if isinstance(asked, str) else asked.question


def _cached_frame(record: AnswerRecord) -> QuestionFrame:
    """The frame of the question ``record`` was cached under: the one stored with it, or,
    for an answer stored without one (or with one this code does not load), read now."""
    from medlit.words.frame import frame_of

    return frame_of(record.question, record.frame)
