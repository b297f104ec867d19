"""The verified band of tier 1 against the fake OpenAI-compatible server on loopback.

Real SQLite store, real LLM client over HTTP; vectors are built with an exact cosine so each
test puts its candidate where it needs it (above tau, in the band, below the band).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import AnswerCache, AnswerLookup
from medlit.cache.verify import (
    CALIBRATED_THRESHOLDS,
    TASK,
    HitVerifier,
    open_verifier,
    question_key,
    same_probability,
)
from medlit.config import CacheSettings, Settings, VerifyBandSettings
from medlit.llm.base import TokenLogprob
from medlit.llm.client import LLMClient
from medlit.storage.sqlite import SqliteStore
from medlit.usage import usage_scope
from tests.fakes.llm_server import FakeLLMServer, Reply

CACHED = "Is metformin safe during pregnancy?"
NEW = "Can pregnant women take metformin safely?"
SCOPE = {"namespace": "default", "fingerprint": "fp"}
SAME = {"Yes": 0.95, "No": 0.04}
DIFFERENT = {"No": 0.9, "Yes": 0.08}


def unit(cosine: float, axis: int = 1) -> np.ndarray:
    """A unit vector whose cosine with e0 is ``cosine``."""
    v = np.zeros(384, dtype=np.float32)
    v[0], v[axis] = cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))
    return v


BASE = unit(1.0)


def payload(pmid: str = "1") -> dict[str, object]:
    return {
        "answer": f"Probably yes [PMID:{pmid}].",
        "citations": [{"pmid": pmid, "title": "A cohort"}],
        "retrieval_score": 0.8,
    }


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "v.sqlite3") as s:
        yield s


@pytest.fixture
async def llm(settings: Settings, server: FakeLLMServer) -> AsyncIterator[LLMClient]:
    settings.llm.base_url = server.base_url
    settings.llm.model = "fake-model"
    settings.llm.max_retries = 0
    async with LLMClient(settings.llm) as client:
        yield client


def band(**overrides: object) -> VerifyBandSettings:
    return VerifyBandSettings(threshold=0.8, lower=0.78, **overrides)  # type: ignore[arg-type]


def cache_with_entry(store: SqliteStore, question: str = CACHED) -> AnswerCache:
    cache = AnswerCache(store, CacheSettings(guard=False, flush_interval_s=0))
    cache.add_query(question, BASE, payload(), **SCOPE)
    return cache


async def look(
    cache: AnswerCache, verifier: HitVerifier | None, cosine: float, question: str = NEW
) -> AnswerLookup:
    return await cache.search_query_verified(question, unit(cosine), verifier=verifier, **SCOPE)


def verifier_for(llm: LLMClient, settings: VerifyBandSettings | None = None) -> HitVerifier:
    return HitVerifier(lambda: llm, settings or band(), threshold=0.8, model="fake-model")


async def test_band_hit_asks_both_orders_with_logprobs_and_remembers(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    server.enqueue(Reply.scored(SAME), Reply.scored({"Yes": 0.85, "No": 0.1}))
    with usage_scope() as usage:
        found = await look(cache, verifier_for(llm), 0.85)
    assert found.hit and found.entry is not None and found.entry.question == CACHED
    assert found.verified_by == "fake-model" and found.verify_calls == 2
    assert usage.llm["verify_cache_hit"].calls == 2  # accounted like every LLM call
    first, second = server.completions
    assert first.json["logprobs"] is True and first.json["top_logprobs"] >= 5
    assert first.json["max_tokens"] <= 2 and first.json["temperature"] == 0
    # Both orders: the cached question first, then the new one first.
    assert first.messages[-1]["content"].index(CACHED) < first.messages[-1]["content"].index(NEW)
    assert second.messages[-1]["content"].index(NEW) < second.messages[-1]["content"].index(CACHED)

    again = await look(
        cache, verifier_for(llm), 0.85, question="  can PREGNANT women take metformin safely "
    )
    assert again.hit and again.verify_calls == 0 and len(server.completions) == 2
    counters = store.counters("answers.")
    assert counters["answers.hits"] == 2 and counters["answers.hits.verified"] == 2
    assert counters["answers.verify.calls"] == 2 and counters["answers.verify.accepted"] == 2
    assert counters["answers.verify.remembered"] == 1


async def test_the_lower_order_decides_and_a_refusal_is_remembered(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    server.enqueue(Reply.scored(SAME), Reply.scored({"Yes": 0.6, "No": 0.4}))
    found = await look(cache, verifier_for(llm), 0.85)
    assert not found.hit and found.miss_reason == "not_verified" and found.verify_calls == 2
    again = await look(cache, verifier_for(llm), 0.85)
    assert not again.hit and again.miss_reason == "not_verified" and again.verify_calls == 0
    assert len(server.completions) == 2
    counters = store.counters("answers.")
    assert counters["answers.verify.refused"] == 2 and counters["answers.miss.not_verified"] == 2
    assert "answers.hits" not in counters


async def test_a_clear_no_in_the_first_order_costs_one_call(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    server.enqueue(Reply.scored(DIFFERENT))
    found = await look(cache, verifier_for(llm), 0.85)
    assert not found.hit and found.verify_calls == 1 and len(server.completions) == 1


async def test_a_changed_threshold_applies_to_remembered_scores(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    server.enqueue(Reply.scored(SAME), Reply.scored({"Yes": 0.85, "No": 0.1}))
    strict = HitVerifier(lambda: llm, band(), threshold=0.9, model="fake-model")
    assert not (await look(cache, strict, 0.85)).hit
    # The score (0.85) is remembered, not the decision: a lower threshold now accepts it.
    assert (await look(cache, verifier_for(llm), 0.85)).hit
    assert len(server.completions) == 2


async def test_above_tau_and_below_the_band_never_call(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    above = await look(cache, verifier_for(llm), 0.95)
    assert above.hit and above.verified_by is None and above.verify_calls == 0
    below = await look(cache, verifier_for(llm), 0.70)
    assert not below.hit and below.miss_reason == "nothing_similar"
    off = await look(cache, None, 0.85)
    assert not off.hit and off.miss_reason == "nothing_similar"
    assert server.completions == []


async def test_at_most_two_calls_per_lookup(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    cache.add_query(
        "Is metformin safe while breastfeeding?", unit(0.99, axis=2), payload("2"), **SCOPE
    )
    # The best candidate passes the first order and fails the second: the budget is spent.
    server.enqueue(Reply.scored(SAME), Reply.scored(DIFFERENT), Reply.scored(SAME))
    found = await look(cache, verifier_for(llm), 0.85)
    assert not found.hit and found.verify_calls == 2 and len(server.completions) == 2
    assert server.pending == 1


async def test_a_refused_candidate_leaves_its_call_to_the_next(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    other = "Is metformin safe while breastfeeding?"
    cache.add_query(other, unit(0.99, axis=2), payload("2"), **SCOPE)
    # Candidate 1 refused in one call; candidate 2 gets one call only (no second order): miss.
    server.enqueue(Reply.scored(DIFFERENT), Reply.scored(SAME))
    found = await look(cache, verifier_for(llm), 0.85)
    assert not found.hit and found.verify_calls == 2
    assert [r.messages[-1]["content"].count("breastfeeding") for r in server.completions] == [0, 1]


async def test_without_logprobs_only_a_unanimous_word_in_the_narrow_band(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    server.supports_logprobs = False
    cache = cache_with_entry(store)
    verifier = verifier_for(llm, band(vote_lower=0.88))
    server.enqueue("Yes")
    wide = await look(cache, verifier, 0.85)  # below vote_lower: a vote is not enough there
    assert not wide.hit and wide.verify_calls == 1
    assert server.completions[0].json["logprobs"] is True  # asked, not given
    server.enqueue("Yes", "Yes")
    narrow = await look(cache, verifier, 0.90, question="Can metformin be taken in pregnancy?")
    assert narrow.hit and narrow.verify_calls == 2
    server.enqueue("Yes.", "Yes, mostly")  # anything but the word in every order is a miss
    other = await look(cache, verifier, 0.90, question="Is metformin fine for pregnant women?")
    assert not other.hit and other.miss_reason == "not_verified"


async def test_timeouts_and_errors_are_misses_not_failures(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = cache_with_entry(store)
    slow = verifier_for(llm, band(timeout_s=0.3))
    server.enqueue(Reply.scored(SAME, delay_s=60.0))  # far past the timeout, loaded or not
    with usage_scope() as usage:
        found = await look(cache, slow, 0.85)
    assert not found.hit and found.miss_reason == "not_verified" and found.verify_calls == 1
    # The abandoned call was sent (and may be billed): it counts, as a failed call.
    assert usage.llm[TASK].calls == 1 and usage.llm[TASK].failed == 1
    server.enqueue(Reply.server_error())
    failed = await look(cache, verifier_for(llm), 0.85)
    assert not failed.hit and failed.miss_reason == "not_verified"
    # Failures are not remembered: the next lookup asks again, and may hit.
    server.enqueue(Reply.scored(SAME), Reply.scored(SAME))
    assert (await look(cache, verifier_for(llm), 0.85)).hit
    assert store.counters("answers.verify.")["answers.verify.errors"] == 2


def test_same_probability_sums_every_spelling_of_same() -> None:
    top = (("Yes", math.log(0.7)), (" yes", math.log(0.1)), ("YES", math.log(0.05)))
    tokens = (TokenLogprob("Yes", math.log(0.7), (*top, ("No", math.log(0.1)))),)
    assert same_probability(tokens) == pytest.approx(0.85)
    assert same_probability(None) is None
    assert same_probability((TokenLogprob("No", math.log(0.9)),)) == 0.0
    assert question_key("Is it safe?") == question_key("  is it   SAFE ")
    assert question_key("Is it safe?") != question_key("Is it safe in children?")


def test_the_band_opens_only_with_a_model_and_a_calibrated_threshold(settings: Settings) -> None:
    def no_client() -> LLMClient:
        raise AssertionError("the client must not be opened to decide")

    assert open_verifier(settings, no_client) is None  # no LLM configured
    settings.llm.base_url, settings.llm.model = "http://127.0.0.1:9/v1", "some-model"
    assert open_verifier(settings, no_client) is None  # no threshold for this model
    settings.cache.verify_band.threshold = 0.9
    opened = open_verifier(settings, no_client)
    assert opened is not None and opened.threshold == 0.9 and opened.model == "some-model"
    settings.cache.verify_band.enabled = False
    assert open_verifier(settings, no_client) is None
    settings.cache.verify_band = VerifyBandSettings()
    for model, threshold in CALIBRATED_THRESHOLDS.items():
        settings.llm.model = model
        shipped = open_verifier(settings, no_client)
        assert shipped is not None and shipped.threshold == threshold
    # Routed like every task: the verifier may run on another model than the answers.
    settings.llm.model = "some-model"
    settings.llm.tasks = {"verify_cache_hit": {"model": "judge-model"}}  # type: ignore[dict-item]
    settings.cache.verify_band.threshold = 0.7
    routed = open_verifier(settings, no_client)
    assert routed is not None and routed.model == "judge-model"


class RejectChildren:
    """A guard that refuses any pair where one question is about children."""

    @dataclass
    class Verdict:
        ok: bool
        reason: str | None

    def check(self, new_question: str, cached_question: str) -> RejectChildren.Verdict:
        differs = ("children" in new_question) != ("children" in cached_question)
        return self.Verdict(not differs, "different population" if differs else None)


async def test_the_guard_comes_first_and_keeps_its_reason(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = AnswerCache(store, CacheSettings(flush_interval_s=0), guard=RejectChildren())
    cache.add_query("Is metformin safe in children?", BASE, payload(), **SCOPE)
    cache.add_query(CACHED, unit(0.85 / 0.95, axis=2), payload("2"), **SCOPE)  # cosine 0.85
    # The entry at tau is refused by the guard; the band's candidate (which the guard passes)
    # goes to the verifier, which refuses it: the miss keeps the guard's reason.
    server.enqueue(Reply.scored(DIFFERENT))
    found = await look(cache, verifier_for(llm), 0.95, question=NEW)
    assert not found.hit and found.miss_reason == "guard_rejected" and found.verify_calls == 1
    assert found.guard_reason == "different population"
    assert CACHED in server.completions[0].messages[-1]["content"]


async def test_a_band_candidate_the_guard_refuses_never_reaches_the_verifier(
    store: SqliteStore, llm: LLMClient, server: FakeLLMServer
) -> None:
    cache = AnswerCache(store, CacheSettings(flush_interval_s=0), guard=RejectChildren())
    cache.add_query("Is metformin safe in children?", BASE, payload(), **SCOPE)
    found = await look(cache, verifier_for(llm), 0.85, question=NEW)
    assert not found.hit and found.miss_reason == "nothing_similar" and found.verify_calls == 0
    assert server.completions == []
