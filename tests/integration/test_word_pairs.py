"""Word pairs judged once and remembered, through the answer cache, a real SQLite store and the
fake OpenAI-compatible server on loopback (real HTTP, real LLM client)."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import AnswerCache, AnswerLookup
from medlit.cache.guard import QuestionGuard
from medlit.cache.verify import HitVerifier
from medlit.cache.word_pairs import (
    PROMPT_VERSION,
    Calibration,
    WordJudge,
    WordPair,
    WordPairStore,
    open_word_judge,
    pairs_between,
)
from medlit.config import CacheSettings, Settings, VerifyBandSettings
from medlit.llm.client import LLMClient
from medlit.storage.sqlite import SqliteStore
from tests.fakes.llm_server import FakeLLMServer, Reply

CACHED = "Does obesity affect clinical outcomes after knee replacement?"
NEW = "Does obesity affect clinical results after knee replacement?"
SCOPE = {"namespace": "default", "fingerprint": "fp"}
SAME = {"Yes": 0.97, "No": 0.02}
DIFFERENT = {"No": 0.9, "Yes": 0.08}


def unit(cosine: float, axis: int = 1) -> np.ndarray:
    """A unit vector whose cosine with e0 is ``cosine`` (above tau: 0.95)."""
    v = np.zeros(384, dtype=np.float32)
    v[0], v[axis] = cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))
    return v


def payload(pmid: str = "1") -> dict[str, object]:
    return {
        "answer": f"Common [PMID:{pmid}].",
        "citations": [{"pmid": pmid, "title": "A survey"}],
        "retrieval_score": 0.8,
    }


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "p.sqlite3") as s:
        yield s


@pytest.fixture
async def llm(settings: Settings, server: FakeLLMServer) -> AsyncIterator[LLMClient]:
    settings.llm.base_url = server.base_url
    settings.llm.model = "fake-model"
    settings.llm.max_retries = 0
    async with LLMClient(settings.llm) as client:
        yield client


def calibrated(cache: AnswerCache, *, accepted: int = 120, wrong: int = 0) -> None:
    cache.word_pairs.keep_calibration(
        Calibration("fake-model", PROMPT_VERSION, 300, 130, accepted, wrong, "test", time.time())
    )


def cache_with(store: SqliteStore, question: str = CACHED) -> AnswerCache:
    cache = AnswerCache(store, CacheSettings(flush_interval_s=0))
    cache.add_query(question, unit(1.0), payload(), **SCOPE)
    return cache


async def look(
    cache: AnswerCache, settings: Settings, llm: LLMClient, question: str = NEW
) -> tuple[AnswerLookup, WordJudge | None]:
    opened: list[WordJudge | None] = []

    def judge() -> WordJudge | None:
        opened.append(open_word_judge(settings, lambda: llm, cache.word_pairs))
        return opened[-1]

    found = await cache.search_query_verified(
        question, unit(0.95), verifier=None, judge=judge, **SCOPE
    )
    return found, (opened[0] if opened else None)


async def test_a_pair_is_judged_once_in_the_background_and_then_serves_without_a_call(
    store: SqliteStore, settings: Settings, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with(store)
    calibrated(cache)
    gate = threading.Event()
    server.enqueue(Reply.held(gate, "Yes"), Reply.scored(SAME))
    # The first lookup misses at once: the judge's reply is held back, the lookup never waits.
    found, judge = await asyncio.wait_for(look(cache, settings, llm), timeout=10)
    assert not found.hit and found.miss_reason == "guard_rejected"
    assert found.pending_pair is not None and judge is not None
    pair = found.pending_pair[0]
    assert (pair.new, pair.cached) == ("results", "outcomes")
    assert cache.word_pairs.verdict("default", pair) == "pending"
    gate.set()
    await judge.drain()
    assert cache.word_pairs.verdict("default", pair) == "same"
    (record,) = cache.word_pairs.pairs("default")
    assert record.decided_by == "model" and record.model == "fake-model"
    assert record.score is not None and record.score >= 0.9
    # Both directions were asked, each in its own question's words.
    first, second = server.completions
    assert (
        CACHED in first.messages[-1]["content"]
        and '"outcomes" with "results"' in (first.messages[-1]["content"])
    )
    assert NEW in second.messages[-1]["content"]

    again, _ = await look(cache, settings, llm)
    assert again.hit and again.word_pair == pair and len(server.completions) == 2
    # Another question that differs by the same pair in the same kind: no call either.
    other = "Does smoking affect clinical outcomes after knee replacement?"
    cache.add_query(other, np.eye(384, dtype=np.float32)[3], payload("2"), **SCOPE)
    v = np.zeros(384, dtype=np.float32)
    v[3], v[4] = 0.95, math.sqrt(1 - 0.95**2)
    hit = await cache.search_query_verified(
        "Does smoking affect clinical results after knee replacement?", v, verifier=None, **SCOPE
    )
    assert hit.hit and hit.entry is not None and hit.entry.question == other
    assert len(server.completions) == 2
    assert store.counters("answers.")["answers.hits.word_pair"] == 2


async def test_a_pair_judged_different_is_refused_and_says_so(
    store: SqliteStore, settings: Settings, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with(store, "Does exercise improve sleep quality in adults?")
    calibrated(cache)
    server.enqueue(Reply.scored(DIFFERENT))
    question = "Does exercise improve sleep latency in adults?"
    found, judge = await look(cache, settings, llm, question)
    assert not found.hit and judge is not None
    await judge.drain()
    again, _ = await look(cache, settings, llm, question)
    assert not again.hit and again.guard_reason is not None
    assert again.guard_reason.endswith("(judged different)")
    assert again.pending_pair is None and len(server.completions) == 1  # one direction: a No


async def test_without_a_calibrated_model_pairs_wait_for_a_person(
    store: SqliteStore, settings: Settings, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with(store)
    found, judge = await look(cache, settings, llm)
    assert not found.hit and judge is None  # never measured: closed
    calibrated(cache, accepted=100, wrong=2)  # precision 0.98 < 0.99: still closed
    found, judge = await look(cache, settings, llm)
    assert not found.hit and judge is None
    calibrated(cache, accepted=12, wrong=0)  # 1.0, but on too few accepted pairs: closed
    found, judge = await look(cache, settings, llm)
    assert not found.hit and judge is None and server.completions == []
    (pending,) = cache.word_pairs.pairs("default", "pending")
    assert pending.example_new == NEW and pending.example_cached == CACHED
    assert cache.word_pairs.approve("default", "Outcomes", "results") == 1
    served, _ = await look(cache, settings, llm)
    assert served.hit and server.completions == []
    # Scoped like the answers: another namespace has no verdict.
    assert cache.word_pairs.pairs("tenant-b") == []


async def test_revoking_a_pair_drops_the_answers_it_let_through(
    store: SqliteStore, settings: Settings, llm: LLMClient
) -> None:
    cache = cache_with(store)
    elsewhere = np.eye(384, dtype=np.float32)[5]
    kept = cache.add_query("Is obesity common in adults?", elsewhere, payload("3"), **SCOPE)
    await look(cache, settings, llm)
    cache.word_pairs.approve("default", "results", "outcomes")
    served, _ = await look(cache, settings, llm)
    assert served.hit and served.entry_id is not None
    assert cache.word_pairs.revoke("default", "results", "outcomes") == (1, 1)
    assert store.get_answer(served.entry_id) is None and store.get_answer(kept) is not None
    (record,) = cache.word_pairs.pairs("default")
    assert record.verdict == "different" and record.decided_by == "person" and record.uses == 0
    cache.add_query(CACHED, unit(1.0), payload(), **SCOPE)  # answered again: not through it
    refused, _ = await look(cache, settings, llm)
    assert not refused.hit and refused.guard_reason is not None
    assert "judged different" in refused.guard_reason


def test_only_a_difference_of_words_alone_is_a_pair() -> None:
    guard = QuestionGuard()
    assert pairs_between(guard, NEW, CACHED) == WordPair("results", "outcomes", "effect")
    # A word in one question only, words in another order, or a known difference: no pair.
    assert pairs_between(guard, CACHED.replace("?", " in winter?"), CACHED) is None
    assert (
        pairs_between(guard, "Is aspirin better than warfarin?", "Is warfarin better than aspirin?")
        is None
    )
    assert (
        pairs_between(guard, "Is aspirin safe in children?", "Is aspirin safe in adults?") is None
    )
    assert pairs_between(guard, "Does X reduce pain?", "Does X increase pain?") is None


async def test_a_failing_judge_leaves_the_pair_pending_and_raises_nothing(
    store: SqliteStore, settings: Settings, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with(store)
    calibrated(cache)
    server.enqueue(Reply.server_error())
    found, judge = await look(cache, settings, llm)
    assert not found.hit and judge is not None and found.pending_pair is not None
    await judge.drain()
    assert cache.word_pairs.verdict("default", found.pending_pair[0]) == "pending"
    # The next lookup of the same pair tries again.
    server.enqueue(Reply.scored(SAME), Reply.scored(SAME))
    _, judge = await look(cache, settings, llm)
    assert judge is not None
    await judge.drain()
    assert cache.word_pairs.verdict("default", found.pending_pair[0]) == "same"


@pytest.mark.parametrize(
    ("text", "score"),
    [("Yes", 1.0), (" yes.", 1.0), ("**Yes**", 1.0), ('"Yes"', 1.0), ("No", 0.0), ("Yes,", 0.0)],
)
async def test_the_judge_reads_a_vote_as_the_verifier_does(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer, text: str, score: float
) -> None:
    # Without log-probabilities both read the one word "Yes" alone, however quoted.
    server.supports_logprobs = False
    server.enqueue(*[Reply(text)] * 3)
    verifier = HitVerifier(lambda: llm, VerifyBandSettings(), threshold=0.9, model="fake-model")
    assert await verifier.ask(CACHED, NEW) == (score, "vote")
    judge = WordJudge(lambda: llm, "fake-model", WordPairStore(store))
    pair = WordPair(new="results", cached="outcomes", context="other")
    assert await judge.score(pair, NEW, CACHED) == score
    assert len(server.history) == (3 if score else 2)  # no second direction after a No
