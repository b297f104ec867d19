"""Property tests of the answer cache's invariants (hypothesis state machine).

Against a simple model, over random sequences of inserts, lookups, clock jumps and caller
mutations: a lookup never returns an expired, low-score, foreign-namespace or
foreign-fingerprint entry, and hits exactly when the model says it should; the cache never
exceeds its capacity; eviction follows LRU order (a hit refreshes); mutating what was passed in
or returned never changes the cache.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from medlit.cache.answers import AnswerCache
from medlit.config import CacheSettings
from medlit.storage.sqlite import SqliteStore

DIM = 16
QUESTIONS = 6
_rng = np.random.default_rng(42)
BASE = _rng.normal(size=(QUESTIONS, DIM)).astype(np.float32)
BASE /= np.linalg.norm(BASE, axis=1, keepdims=True)
_sims = BASE @ BASE.T
assert (_sims[~np.eye(QUESTIONS, dtype=bool)] < 0.9).all()  # distinct questions never match

TTL = 100.0
CAPACITY = 4
MIN_SCORE = 0.5


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def payload(q: int, score: float) -> dict[str, Any]:
    return {
        "answer": f"answer {q}",
        "citations": [{"pmid": str(100 + q), "title": f"t{q}"}],
        "retrieval_score": score,
        "doc_scores": {str(100 + q): score},
    }


class AnswerCacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="medlit-props-"))
        self.store = SqliteStore(self.dir / "c.sqlite3", dim=DIM)
        self.clock = FakeClock()
        cfg = CacheSettings(
            tau=0.9, min_score=MIN_SCORE, guard=False, answer_ttl_s=TTL, answer_capacity=CAPACITY
        )
        self.cache = AnswerCache(self.store, cfg, clock=self.clock)
        # model: (ns, fp, q) -> [id, created_at, score, lru_tick]
        self.model: dict[tuple[str, str, int], list[Any]] = {}
        self.tick = 0
        self.maintained = False

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _purge(self) -> None:
        cutoff = self.clock.now - TTL
        for key in [k for k, v in self.model.items() if v[1] < cutoff]:
            del self.model[key]

    @rule(
        q=st.integers(0, QUESTIONS - 1),
        ns=st.sampled_from(["a", "b"]),
        fp=st.sampled_from(["x", "y"]),
        score=st.sampled_from([0.3, 0.6, 0.9]),
        mutate=st.booleans(),
    )
    def add(self, q: int, ns: str, fp: str, score: float, mutate: bool) -> None:
        data = payload(q, score)
        entry_id = self.cache.add_query(f"q{q}", BASE[q], data, namespace=ns, fingerprint=fp)
        if mutate:  # the caller keeps using its dict: the cache must not see it
            data["answer"] = "changed"
            data["citations"].clear()
        self.tick += 1
        self.model[(ns, fp, q)] = [entry_id, self.clock.now, score, self.tick]
        self.maintained = True
        self._purge()
        while len(self.model) > CAPACITY:
            oldest = min(self.model, key=lambda k: self.model[k][3])
            del self.model[oldest]

    @rule(dt=st.sampled_from([1.0, 30.0, 60.0, 101.0]))
    def advance(self, dt: float) -> None:
        self.clock.now += dt

    @rule(
        q=st.integers(0, QUESTIONS - 1),
        ns=st.sampled_from(["a", "b"]),
        fp=st.sampled_from(["x", "y"]),
        mutate=st.booleans(),
    )
    def lookup(self, q: int, ns: str, fp: str, mutate: bool) -> None:
        if not self.maintained:
            self.maintained = True
            self._purge()
        result = self.cache.search_query(f"q{q}", BASE[q], namespace=ns, fingerprint=fp)
        entry = self.model.get((ns, fp, q))
        cutoff = self.clock.now - TTL
        if entry is not None and entry[1] < cutoff:
            assert not result.hit and result.miss_reason == "expired"
            del self.model[(ns, fp, q)]
            return
        expect_hit = entry is not None and entry[2] >= MIN_SCORE
        assert result.hit == expect_hit, (result, entry)
        if not result.hit:
            assert result.entry is None
            if entry is not None:
                assert result.miss_reason == "low_score"
            return
        assert entry is not None and result.entry is not None
        assert result.entry_id == entry[0]
        assert result.entry.answer == f"answer {q}" and result.entry.question == f"q{q}"
        assert result.entry.citations[0].pmid == str(100 + q)
        assert result.similarity >= 0.9 and result.entry.retrieval_score >= MIN_SCORE
        self.tick += 1
        entry[3] = self.tick
        if mutate:
            result.entry.answer = "mutated"
            result.entry.citations.clear()
            result.entry.doc_scores["x"] = 1.0

    @precondition(lambda self: bool(self.model))
    @rule()
    def remembered_payloads_are_intact(self) -> None:
        for (ns, fp, q), (entry_id, *_rest) in self.model.items():
            record = self.store.get_answer(entry_id)
            assert record is not None and record.namespace == ns and record.fingerprint == fp
            assert record.payload["answer"] == f"answer {q}"
            assert record.payload["doc_scores"] == {str(100 + q): record.retrieval_score}

    @invariant()
    def never_over_capacity(self) -> None:
        self.cache.flush()  # hits are written in batches; compare the written state
        assert self.store.count_answers() <= CAPACITY

    @invariant()
    def same_entries_in_lru_order(self) -> None:
        self.cache.flush()
        expected = [v[0] for v in sorted(self.model.values(), key=lambda v: v[3])]
        assert self.store.answer_lru_order() == expected


AnswerCacheMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestAnswerCache = AnswerCacheMachine.TestCase
