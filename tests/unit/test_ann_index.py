"""The ANN index stays in step with SQLite: restart, deletion, corruption, drift, crashes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from medlit.config import CacheSettings
from medlit.storage.sqlite import SqliteStore, answer_index_path
from tests.vectors import unit

DIM = 384


def fill(store: SqliteStore, seeds: range) -> dict[int, int]:
    return {
        seed: store.insert_answer(
            namespace="ns",
            fingerprint="fp",
            question=f"q{seed}",
            embedding=unit(seed),
            payload={"answer": f"a{seed}"},
            retrieval_score=0.5,
            now=float(seed),
        )
        for seed in seeds
    }


def found(store: SqliteStore, seed: int) -> list[str]:
    return [r.question for r, _ in store.search_answers(unit(seed), min_similarity=0.99)]


def index_path(db: Path) -> Path:
    """The saved tier-1 index of namespace ``ns`` (the one :func:`fill` writes)."""
    return answer_index_path(db, "ns")


def test_restart_uses_saved_index_without_repair(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        fill(store, range(50))
    assert index_path(db).exists()
    with SqliteStore(db) as store:
        assert found(store, 7) == ["q7"]
        assert store.answer_index("ns").repairs == []


def test_deleted_index_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        fill(store, range(30))
    index_path(db).unlink()
    with SqliteStore(db) as store:
        assert found(store, 12) == ["q12"]
        assert "rebuild" in store.answer_index("ns").repairs
    with SqliteStore(db) as store:  # and saved again
        assert found(store, 3) == ["q3"] and store.answer_index("ns").repairs == []


def test_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        fill(store, range(30))
    path = index_path(db)
    path.write_bytes(path.read_bytes()[:100])
    with SqliteStore(db) as store:
        assert found(store, 29) == ["q29"]
        assert "rebuild" in store.answer_index("ns").repairs


def test_index_of_another_database_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        fill(store, range(10))
    saved = index_path(db).read_bytes(), index_path(db).with_suffix(".usearch.json").read_bytes()
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    with SqliteStore(db) as store:  # a new, empty database beside an old index
        index_path(db).write_bytes(saved[0])
        index_path(db).with_suffix(".usearch.json").write_bytes(saved[1])
    with SqliteStore(db) as store:
        assert found(store, 3) == []
        assert len(store.answer_index("ns")) == 0


def test_drift_is_replayed_from_the_log(tmp_path: Path) -> None:
    """Writes after the last save (a crash before close) are applied from ann_log on open."""
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        ids = fill(store, range(20))
    stale = index_path(db).read_bytes(), index_path(db).with_suffix(".usearch.json").read_bytes()
    with SqliteStore(db) as store:
        fill(store, range(20, 30))
        store.delete_answers([ids[5]])
    # Put the old index back, as if the process had died before saving.
    index_path(db).write_bytes(stale[0])
    index_path(db).with_suffix(".usearch.json").write_bytes(stale[1])
    with SqliteStore(db) as store:
        assert found(store, 25) == ["q25"]
        assert found(store, 5) == []
        assert len(store.answer_index("ns")) == 29
        assert store.answer_index("ns").repairs == []  # replay, not rebuild


def test_trimmed_log_falls_back_to_key_diff(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        fill(store, range(10))
    stale = index_path(db).read_bytes(), index_path(db).with_suffix(".usearch.json").read_bytes()
    with SqliteStore(db) as store:
        fill(store, range(10, 15))
        with store.transaction() as conn:
            conn.execute("DELETE FROM ann_log WHERE seq < (SELECT max(seq) FROM ann_log)")
    index_path(db).write_bytes(stale[0])
    index_path(db).with_suffix(".usearch.json").write_bytes(stale[1])
    with SqliteStore(db) as store:
        assert found(store, 12) == ["q12"] and len(store.answer_index("ns")) == 15
        assert "resync" in store.answer_index("ns").repairs


def test_other_process_writes_are_seen(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    reader = SqliteStore(db)
    writer = SqliteStore(db)
    try:
        fill(reader, range(3))
        assert found(writer, 1) == ["q1"]
        fill(writer, range(3, 6))
        writer.delete_answers([1])
        assert found(reader, 4) == ["q4"] and found(reader, 0) == []
    finally:
        writer.close()
        reader.close()


def test_killed_writer_loses_at_most_the_write_in_flight(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    script = textwrap.dedent(
        f"""
        import os, numpy as np
        from medlit.config import CacheSettings
        from medlit.storage.sqlite import SqliteStore, answer_index_path
        store = SqliteStore({str(db)!r}, cache=CacheSettings(index_save_every=7))
        for seed in range(40):
            v = np.random.default_rng(seed).normal(size={DIM}).astype(np.float32)
            store.insert_answer(namespace="ns", fingerprint="fp", question=f"q{{seed}}",
                                embedding=v, payload={{}}, retrieval_score=0.5, now=0.0)
            if seed == 30:
                os.kill(os.getpid(), 9)   # no close(), no final save
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == -9, proc.stderr.decode()
    with SqliteStore(db, cache=CacheSettings(index_save_every=7)) as store:
        assert store.count_answers() == 31
        assert len(store.answer_index("ns")) == 31
        for seed in (0, 20, 30):
            assert found(store, seed) == [f"q{seed}"]
        check = store.read("PRAGMA integrity_check")
        assert check == [("ok",)]


@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_other_scalar_kinds(tmp_path: Path, dtype: str) -> None:
    cfg = CacheSettings(ann_dtype=dtype)  # type: ignore[arg-type]
    with SqliteStore(tmp_path / "m.sqlite3", cache=cfg) as store:
        fill(store, range(20))
        assert found(store, 11) == ["q11"]


def test_a_save_during_catch_up_records_the_caught_up_generation(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    cfg = CacheSettings(index_save_every=5, ann_delta_limit=0)  # catch-ups update the file
    with SqliteStore(db, cache=cfg) as store:
        fill(store, range(3))
    # Another process adds rows without opening the index.
    with SqliteStore(db, cache=cfg) as writer, writer.transaction() as conn:
        for seed in range(3, 13):
            conn.execute(
                "INSERT INTO answers (namespace, fingerprint, question, question_hash, "
                "payload, retrieval_score, embedding, created_at, last_used_at, lru) "
                "VALUES ('ns', 'fp', ?, ?, '{}', 0.5, ?, 0, 0, ?)",
                (f"q{seed}", f"h{seed}", unit(seed).tobytes(), seed + 1),
            )
    with SqliteStore(db, cache=cfg) as store:
        assert found(store, 12) == ["q12"]  # caught up (10 keys: saved during the catch-up)
    with SqliteStore(db, cache=cfg) as store:
        store.answer_index("ns")
        index = store.answer_index("ns")
        assert index._view, "the saved index was behind the log: opening replayed it again"
        assert found(store, 12) == ["q12"]


def _add_rows_elsewhere(db: Path, seeds: range) -> None:
    """Another process inserts answers without opening the index (only the log knows)."""
    with SqliteStore(db) as writer, writer.transaction() as conn:
        for seed in seeds:
            conn.execute(
                "INSERT INTO answers (namespace, fingerprint, question, question_hash, "
                "payload, retrieval_score, embedding, created_at, last_used_at, lru) "
                "VALUES ('ns', 'fp', ?, ?, '{}', 0.5, ?, 0, 0, ?)",
                (f"q{seed}", f"h{seed}", unit(seed).tobytes(), seed + 1),
            )


def test_small_changes_go_to_a_delta_and_leave_the_saved_file_alone(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    with SqliteStore(db) as store:
        ids = fill(store, range(200))  # a delta may hold up to 200 / 20 = 10 keys
    saved = index_path(db).stat().st_mtime_ns, index_path(db).read_bytes()
    _add_rows_elsewhere(db, range(200, 205))
    with SqliteStore(db) as store:
        store.delete_answers([ids[3], ids[4]])  # saved entries: masked, not removed from the file
        index = store.answer_index("ns")
        assert index._view and index._delta_len() == 5 and index._masked == {ids[3], ids[4]}
        assert found(store, 202) == ["q202"]  # from the delta
        assert found(store, 3) == [] and found(store, 4) == []  # masked
        assert found(store, 7) == ["q7"]
        assert len(index) == 203
        # A search for k neighbours still returns k live keys when masked ones rank first.
        keys, _ = index.search(unit(3), 5)
        assert len(keys) == 5 and not {int(k) for k in keys} & {ids[3], ids[4]}
    assert (index_path(db).stat().st_mtime_ns, index_path(db).read_bytes()) == saved
    with SqliteStore(db) as store:  # the next process rebuilds the same delta from the log
        assert found(store, 204) == ["q204"] and found(store, 4) == []
        assert store.answer_index("ns")._view


def test_a_delta_past_its_limit_is_folded_into_the_saved_index(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    cfg = CacheSettings(ann_delta_limit=8)
    with SqliteStore(db, cache=cfg) as store:
        fill(store, range(200))
    _add_rows_elsewhere(db, range(200, 205))
    with SqliteStore(db, cache=cfg) as store:
        index = store.answer_index("ns")
        assert index._view and index._delta_len() == 5
        fill(store, range(205, 210))  # 10 changed keys > 8: copied, updated, saved on close
        index = store.answer_index("ns")
        assert not index._view and index._delta_len() == 0 and not index._masked
        assert found(store, 202) == ["q202"] and found(store, 208) == ["q208"]
    with SqliteStore(db, cache=cfg) as store:
        index = store.answer_index("ns")
        assert index._view and index._delta_len() == 0 and index.repairs == []
        assert found(store, 209) == ["q209"] and len(index) == 210
