"""The SQLite store keeps at most ``answer_index_cache_max`` tier-1 indexes in memory.

Each tenant namespace has its own tier-1 index; with many tenants the least recently used are
saved and dropped, and a dropped one is opened again at its namespace's next lookup, with every
answer written meanwhile (by this store or another process) found.
"""

from __future__ import annotations

import threading
from pathlib import Path

from medlit.config import CacheSettings
from medlit.storage.sqlite import SqliteStore
from tests.vectors import unit

SPACES = ("alpha", "beta", "gamma")


def put(store: SqliteStore, namespace: str, seed: int) -> int:
    return store.insert_answer(
        namespace=namespace,
        fingerprint="fp",
        question=f"{namespace}-q{seed}",
        embedding=unit(seed),
        payload={"answer": f"a{seed}"},
        retrieval_score=0.5,
        now=float(seed),
    )


def found(store: SqliteStore, namespace: str, seed: int) -> list[str]:
    hits = store.search_answers(unit(seed), min_similarity=0.99, namespace=namespace)
    return [record.question for record, _ in hits]


def bounded(db: Path, cap: int = 2) -> SqliteStore:
    return SqliteStore(db, cache=CacheSettings(answer_index_cache_max=cap))


def test_three_namespaces_two_indexes_every_lookup_right(tmp_path: Path) -> None:
    with bounded(tmp_path / "m.sqlite3") as store:
        # The same seeds (same vectors) in every namespace: a lookup that consulted another
        # tenant's index, or a stale one, would return the wrong question.
        for seed in range(20):
            for space in SPACES:
                put(store, space, seed)
                assert len(store.open_answer_indexes()) <= 2
        assert store.answer_index_evictions > 0
        for round_ in range(3):
            for space in SPACES:
                for seed in (0, 7, 19):
                    assert found(store, space, seed) == [f"{space}-q{seed}"], (round_, space)
                    assert len(store.open_answer_indexes()) <= 2
                assert store.open_answer_indexes()[-1] == space  # the one just used stays
        assert found(store, "alpha", 1000) == []


def test_dropped_index_catches_up_with_writes_made_while_out(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with bounded(db) as store, bounded(db) as other:
        put(store, "alpha", 1)
        put(store, "beta", 2)
        put(store, "gamma", 3)  # alpha is dropped now
        assert store.open_answer_indexes() == ["beta", "gamma"]
        new = put(other, "alpha", 4)  # another process writes alpha's answers meanwhile
        other.delete_answers([new])
        put(other, "alpha", 5)
        assert found(store, "alpha", 5) == ["alpha-q5"]
        assert found(store, "alpha", 4) == []
        assert found(store, "alpha", 1) == ["alpha-q1"]
        assert store.open_answer_indexes() == ["gamma", "alpha"]


def test_dropped_index_was_saved_and_reopens_without_repair(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with bounded(db) as store:
        for seed in range(30):
            put(store, "alpha", seed)
        put(store, "beta", 100)
        put(store, "gamma", 101)  # alpha is saved and dropped here
        assert "alpha" not in store.open_answer_indexes()
        assert found(store, "alpha", 12) == ["alpha-q12"]
        reopened = store.answer_index("alpha")
        assert len(reopened) == 30
        assert reopened.repairs == []  # read from its saved file, not rebuilt


def test_concurrent_lookups_across_evictions(tmp_path: Path) -> None:
    with bounded(tmp_path / "m.sqlite3") as store:
        for seed in range(10):
            for space in SPACES:
                put(store, space, seed)
        errors: list[str] = []

        def lookups(offset: int) -> None:
            for i in range(60):
                space = SPACES[(i + offset) % len(SPACES)]
                seed = (i * 3 + offset) % 10
                got = found(store, space, seed)
                if got != [f"{space}-q{seed}"]:
                    errors.append(f"{space} {seed}: {got}")
                if len(store.open_answer_indexes()) > 2:
                    errors.append("more than two indexes in memory")

        threads = [threading.Thread(target=lookups, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.answer_index_evictions > 10
