"""AnswerCache and EvidenceCache behaviour with the real embedder, store and guard."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import AnswerCache, ChunkFilters, EvidenceCache
from medlit.config import CacheSettings
from medlit.embeddings.memo import MemoEmbedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.errors import CacheAdmissionError
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def embedder() -> MemoEmbedder:
    return MemoEmbedder(OnnxEmbedder())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "c.sqlite3") as s:
        yield s


def answer(pmid: str = "1", score: float = 0.7) -> dict[str, object]:
    return {
        "answer": "Yes, modestly [1].",
        "verdict": "yes",
        "citations": [{"pmid": pmid, "title": "A trial"}],
        "retrieval_score": score,
        "doc_scores": {pmid: score},
    }


Q = "Does aspirin reduce the risk of heart attack in adults?"


def lookup(cache: AnswerCache, embedder: MemoEmbedder, question: str, **kw: str):  # type: ignore[no-untyped-def]
    scope = {"namespace": "default", "fingerprint": "fp", **kw}
    return cache.search_query(question, embedder.embed([question])[0], **scope)


def test_paraphrase_hits_and_medical_difference_is_guarded(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    cache = AnswerCache(store, CacheSettings(tau=0.75))
    cache.add_query(Q, embedder.embed([Q])[0], answer(), namespace="default", fingerprint="fp")
    hit = lookup(cache, embedder, "Can aspirin decrease the risk of a heart attack in adults?")
    assert hit.hit and hit.entry is not None and hit.entry.question == Q
    assert hit.entry.citations[0].pmid == "1" and hit.entry.verdict == "yes"
    child = lookup(cache, embedder, "Does aspirin reduce the risk of heart attack in children?")
    assert not child.hit and child.miss_reason == "guard_rejected"
    assert child.guard_reason == "differs: children / adults"
    assert child.similarity >= 0.75  # similar enough for a plain threshold cache to serve it
    cache.flush()
    assert store.counters()["answers.miss.guard_rejected"] == 1


def test_scope_ttl_and_score_reasons(store: SqliteStore, embedder: MemoEmbedder) -> None:
    clock = Clock()
    cache = AnswerCache(store, CacheSettings(answer_ttl_s=60, min_score=0.5), clock=clock)
    vec = embedder.embed([Q])[0]
    cache.add_query(Q, vec, answer(score=0.4), namespace="default", fingerprint="fp")
    assert lookup(cache, embedder, Q).miss_reason == "low_score"
    assert lookup(cache, embedder, Q, namespace="other").miss_reason == "nothing_similar"
    assert lookup(cache, embedder, Q, fingerprint="new").miss_reason == "fingerprint_mismatch"
    cache.add_query(Q, vec, answer(score=0.9), namespace="default", fingerprint="fp")
    assert lookup(cache, embedder, Q).hit
    clock.now += 61
    miss = lookup(cache, embedder, Q)
    assert miss.miss_reason == "expired" and store.count_answers() == 0  # deleted when met
    cache.flush()
    counters = store.counters("answers.")
    assert counters["answers.hits"] == 1 and counters["answers.miss.low_score"] == 1
    assert counters["answers.miss.expired"] == 1 and counters["answers.expired"] == 1


def test_disabled_cache_never_hits(store: SqliteStore, embedder: MemoEmbedder) -> None:
    cache = AnswerCache(store, CacheSettings(enabled=False))
    cache.add_query(Q, embedder.embed([Q])[0], answer(), namespace="default", fingerprint="fp")
    assert lookup(cache, embedder, Q).miss_reason == "disabled"


@pytest.mark.parametrize(
    "bad",
    [
        {**answer(), "citations": []},
        {**answer(), "citations": [{"pmid": None, "title": "no id"}]},
        {**answer(), "answer": "  "},
        {**answer(), "retrieval_score": float("nan")},
    ],
)
def test_admission_refuses_uncited_or_invalid(
    store: SqliteStore, embedder: MemoEmbedder, bad: dict[str, object]
) -> None:
    cache = AnswerCache(store)
    with pytest.raises(CacheAdmissionError):
        cache.add_query(Q, embedder.embed([Q])[0], bad, namespace="default", fingerprint="fp")
    assert store.count_answers() == 0


def test_capacity_enforced_on_insert(store: SqliteStore) -> None:
    cache = AnswerCache(store, CacheSettings(answer_capacity=3, guard=False))
    rng = np.random.default_rng(0)
    for i in range(5):
        vec = rng.normal(size=384).astype(np.float32)
        cache.add_query(f"q{i}", vec, answer(), namespace="default", fingerprint="fp")
    cache.flush()
    assert store.count_answers() == 3 and store.counters()["answers.evictions"] == 2


def article(pmid: str, conclusion: str, year: int = 2020) -> Article:
    return Article(
        pmid=pmid,
        title=f"Trial {pmid} of aspirin",
        year=year,
        publication_types=["Randomized Controlled Trial"],
        abstract=[
            AbstractSection(label="METHODS", text="Adults were randomised to aspirin or placebo."),
            AbstractSection(label="CONCLUSIONS", text=conclusion),
        ],
    )


def test_evidence_add_search_fresh_and_rechunk(store: SqliteStore, embedder: MemoEmbedder) -> None:
    clock = Clock()
    ev = EvidenceCache(store, CacheSettings(evidence_ttl_s=100), clock=clock)
    arts = [
        article("1", "Aspirin reduced myocardial infarction."),
        article("2", "Vitamin D did not prevent fractures.", year=2005),
    ]
    first = ev.add_articles(arts, embedder)
    assert (first.added, first.chunks_embedded) == (2, 6)
    assert ev.add_articles(arts, embedder).skipped_fresh == 2
    hits = ev.search_chunks(embedder.embed(["aspirin heart attack"])[0], 2)
    assert hits[0].article.pmid == "1" and hits[0].similarity > hits[-1].similarity - 1e-6
    assert (
        ev.search_chunks(
            hits[0].chunk and embedder.embed(["x"])[0], 9, ChunkFilters(min_year=2010)
        )[0].article.pmid
        == "1"
    )
    assert set(ev.fresh_articles(["1", "2", "3"])) == {"1", "2"}
    assert [c.ordinal for c in ev.neighbours("pmid:1#2", window=1)] == [0, 1, 2]
    changed = article("1", "Aspirin did not reduce myocardial infarction.")
    result = ev.add_articles([changed], embedder)
    assert result.rechunked == 1 and result.chunks_embedded == 3
    assert ev.article_chunks("pmid:1")[2].text.startswith("Aspirin did not")
    clock.now += 101
    assert ev.fresh_articles(["1"]) == {}
    assert ev.search_chunks(embedder.embed(["aspirin"])[0], 3) == []  # expired: never returned
    stale = ev.add_articles([changed], embedder)  # same content, stale: refreshed, not embedded
    assert (stale.refreshed, stale.chunks_embedded, stale.expired) == (1, 0, 1)
    assert set(ev.fresh_articles(["1", "2"])) == {"1"}


def test_evidence_capacity_evicts_whole_lru_articles(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    ev = EvidenceCache(store, CacheSettings(evidence_capacity=7))
    ev.add_articles([article("1", "One."), article("2", "Two.")], embedder)
    ev.search_chunks(embedder.embed(["Trial 1 of aspirin"])[0], 1, ChunkFilters(pmids=["1"]))
    result = ev.add_articles([article("3", "Three.")], embedder)
    assert result.evicted == 1 and store.count_chunks() == 6
    assert set(store.get_articles_by_pmid(["1", "2", "3"])) == {"1", "3"}


def test_hits_are_flushed_on_close_and_by_interval(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite3"
    vec = np.ones(384, dtype=np.float32)
    with SqliteStore(db) as store:
        cache = AnswerCache(store, CacheSettings(guard=False, flush_interval_s=3600))
        cache.add_query("q", vec, answer(), namespace="n", fingerprint="f")
        cache.flush()
        assert cache.search_query("q", vec, namespace="n", fingerprint="f").hit
        assert "answers.hits" not in store.counters()  # buffered, not yet written
    with SqliteStore(db) as store:
        assert store.counters()["answers.hits"] == 1  # written by the close hook
        rec = store.get_answer(1)
        assert rec is not None and rec.hits == 1
        eager = AnswerCache(store, CacheSettings(guard=False, flush_interval_s=0))
        assert eager.search_query("q", vec, namespace="n", fingerprint="f").hit
        assert store.counters()["answers.hits"] == 2


def test_background_flush_writes_without_another_call(
    tmp_path: Path, embedder: MemoEmbedder
) -> None:
    import time

    with SqliteStore(tmp_path / "c.sqlite3") as store:
        clock = Clock()
        ev = EvidenceCache(store, CacheSettings(flush_interval_s=0.05), clock=clock)
        ev.add_articles([article("1", "Aspirin lowered the risk.")], embedder)
        clock.now += 100
        query = embedder.embed(["aspirin risk"])[0]
        assert ev.search_chunks(query, 1)

        def last_used() -> float:
            return store.get_articles(["pmid:1"])["pmid:1"].last_used_at

        def written() -> bool:
            # One batch is two writes, the LRU refresh then the counters: wait for both.
            added = store.counters().get("evidence.articles_added")
            return last_used() == clock.now and added is not None

        deadline = time.monotonic() + 60
        while not written() and time.monotonic() < deadline:
            time.sleep(0.01)  # the timer thread writes the batch; nothing calls flush
        assert last_used() == clock.now
        assert store.counters()["evidence.articles_added"] == 1


class _SlowTouchStore(SqliteStore):
    """A real store whose LRU write waits for the test (a flush caught mid-write)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        import threading

        self.entered, self.proceed = threading.Event(), threading.Event()

    def touch_articles(self, keys: Sequence[str], now: float) -> None:
        self.entered.set()
        self.proceed.wait(60)
        super().touch_articles(keys, now)


def test_close_during_a_background_flush_does_not_deadlock(
    tmp_path: Path, embedder: MemoEmbedder
) -> None:
    import threading
    import time

    store = _SlowTouchStore(tmp_path / "c.sqlite3")
    ev = EvidenceCache(store, CacheSettings(flush_interval_s=3600))
    ev.add_articles([article("1", "Aspirin lowered the risk.")], embedder)
    assert ev.search_chunks(embedder.embed(["aspirin"])[0], 1)  # one LRU touch pending
    flusher = threading.Thread(target=ev.flush)  # as the background thread would
    flusher.start()
    assert store.entered.wait(60)  # the flush holds its write lock, not yet the store's
    closer = threading.Thread(target=store.close)
    closer.start()
    deadline = time.monotonic() + 60
    while store._close_hooks and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # close() is now waiting for the flush
    store.proceed.set()
    flusher.join(60)
    closer.join(60)
    assert not flusher.is_alive() and not closer.is_alive(), "close and a flush deadlocked"
    with SqliteStore(tmp_path / "c.sqlite3") as again:
        assert again.get_articles(["pmid:1"])["pmid:1"].last_used_at > 0


class CountingStore(SqliteStore):
    """The real store, counting its tier-1 searches (each is a round trip on PostgreSQL)."""

    searches = 0

    def search_answers(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        self.searches += 1
        return super().search_answers(*args, **kwargs)  # type: ignore[arg-type]


def test_a_lookup_is_one_search_even_when_other_settings_crowd_the_namespace(
    tmp_path: Path, embedder: MemoEmbedder
) -> None:
    with CountingStore(tmp_path / "c.sqlite3") as store:
        cache = AnswerCache(store, CacheSettings())
        vec = embedder.embed([Q])[0]
        for reason, fingerprint in (("nothing_similar", "fp"), ("fingerprint_mismatch", "new")):
            if reason == "fingerprint_mismatch":
                cache.add_query(Q, vec, answer(), namespace="default", fingerprint="fp")
            before = store.searches
            assert lookup(cache, embedder, Q, fingerprint=fingerprint).miss_reason == reason
            assert store.searches == before + 1
        before = store.searches
        assert lookup(cache, embedder, Q).hit and store.searches == before + 1
        # More answers of other settings than one search returns, all as close as ours
        # (ours is the newest: last among equals): still found, by a second search.
        for i in range(cache.max_candidates * 4):
            cache.add_query(Q, vec, answer(), namespace="default", fingerprint=f"old{i}")
        cache.add_query(Q, vec, answer("2"), namespace="default", fingerprint="fp")
        before = store.searches
        hit = lookup(cache, embedder, Q)
        assert hit.hit and hit.entry is not None and hit.entry.citations[0].pmid == "2"
        assert store.searches == before + 2
        assert lookup(cache, embedder, Q, fingerprint="other").miss_reason == (
            "fingerprint_mismatch"
        )


def test_an_answer_admitted_on_its_one_article_needs_the_subject_floor(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    vec = embedder.embed([Q])[0]
    one = {**answer(score=0.32), "extra": {"admission": "subject"}}
    AnswerCache(store, CacheSettings()).add_query(
        Q, vec, one, namespace="default", fingerprint="fp"
    )
    assert lookup(AnswerCache(store, CacheSettings(subject_min_score=0.3)), embedder, Q).hit
    for settings in (CacheSettings(subject_min_score=0.35), CacheSettings(subject_min_score=None)):
        assert lookup(AnswerCache(store, settings), embedder, Q).miss_reason == "low_score"
    # An answer stored on the confident bar still needs min_score, whatever the subject floor.
    AnswerCache(store, CacheSettings()).add_query(
        Q, vec, answer(score=0.32), namespace="default", fingerprint="fp"
    )
    cache = AnswerCache(store, CacheSettings(subject_min_score=0.3))
    assert lookup(cache, embedder, Q).miss_reason == "low_score"


def test_a_new_cache_reads_the_same_question_by_its_key(
    tmp_path: Path, embedder: MemoEmbedder
) -> None:
    with CountingStore(tmp_path / "c.sqlite3") as store:
        vec = embedder.embed([Q])[0]
        AnswerCache(store, CacheSettings()).add_query(
            Q, vec, answer(), namespace="default", fingerprint="fp"
        )
    # A new process: the same question is served with no vector search, no index opened.
    with CountingStore(tmp_path / "c.sqlite3") as store:
        cache = AnswerCache(store, CacheSettings())
        hit = lookup(cache, embedder, Q)
        assert hit.hit and hit.similarity == 1.0 and hit.entry is not None
        assert store.searches == 0 and not store._indexes
        # Other words are searched by vector, and from then on every lookup is.
        assert lookup(cache, embedder, Q.replace("adults", "adult")).hit
        assert lookup(cache, embedder, Q).hit and store.searches == 2
    # What the checks refuse by key is left to the vector search, which says why.
    with CountingStore(tmp_path / "c.sqlite3") as store:
        stricter = AnswerCache(store, CacheSettings(min_score=0.9))  # the answer's is 0.7
        missed = lookup(stricter, embedder, Q)
        assert not missed.hit and missed.miss_reason == "low_score" and store.searches == 1
