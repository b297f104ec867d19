"""Conformance suite for :class:`medlit.storage.base.Store` backends.

Every backend must pass these: the embedded SQLite store, and the PostgreSQL + pgvector store
on a real server from the ``pgserver`` wheel (a fresh schema per test; skipped with the reason
only when no server can be started, see ``tests/postgres.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache.chunking import chunk_article
from medlit.errors import StorageError
from medlit.lookups import LookupLane
from medlit.storage.base import ChunkFilters, Connection, Store
from medlit.storage.restudy import m005_study_types_from_text, m006_randomised_in_methods
from medlit.types import AbstractSection, Article, StudyType
from tests.vectors import unit

BACKENDS = ["sqlite", "postgres"]
DIM = 384


def _open(backend: str, location: str) -> Store:
    if backend == "sqlite":
        from medlit.storage.sqlite import SqliteStore

        return SqliteStore(Path(location), dim=DIM)
    if backend == "postgres":
        from medlit.storage.postgres import PostgresStore

        return PostgresStore(location, dim=DIM, pool_size=4)
    raise AssertionError(backend)  # pragma: no cover


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Open (or reopen) a store of the parametrised backend on one location."""
    opened: list[Store] = []
    if request.param == "postgres":
        location = str(request.getfixturevalue("pg_url"))
    else:
        location = str(tmp_path / "store.sqlite3")

    def factory() -> Store:
        store = _open(request.param, location)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: Callable[[], Store]) -> Store:
    return make_store()


def near(vec: np.ndarray, noise: float, seed: int) -> np.ndarray:
    out = vec + noise * unit(10_000 + seed)
    return (out / np.linalg.norm(out)).astype(np.float32)


def add(
    store: Store,
    question: str,
    vec: np.ndarray,
    *,
    ns: str = "ns",
    fp: str = "fp",
    now: float = 0.0,
    score: float = 0.6,
) -> int:
    return store.insert_answer(
        namespace=ns,
        fingerprint=fp,
        question=question,
        embedding=vec,
        payload={"answer": question, "n": [1, 2]},
        retrieval_score=score,
        now=now,
    )


def article(pmid: str, year: int = 2020, text: str = "Some results were found.") -> Article:
    return Article(
        pmid=pmid,
        title=f"Study {pmid}",
        year=year,
        publication_types=["Randomized Controlled Trial"],
        abstract=[
            AbstractSection(label="RESULTS", text=text),
            AbstractSection(label="CONCLUSIONS", text=f"Conclusion of {pmid}."),
        ],
    )


def put_article(store: Store, art: Article, now: float = 0.0, seed: int = 0) -> list[str]:
    chunks = chunk_article(art)
    vectors = np.stack([unit(seed * 100 + i) for i in range(len(chunks))])
    store.upsert_article(art, content_hash=art.title, chunks=chunks, embeddings=vectors, now=now)
    return [c.id for c in chunks]


# -- answers ----------------------------------------------------------------------------
def test_search_answers_returns_exact_similarity_best_first(store: Store) -> None:
    base = unit(1)
    a = add(store, "a", base)
    b = add(store, "b", near(base, 0.3, 1))
    add(store, "far", unit(2))
    found = store.search_answers(base, min_similarity=0.8, namespace="ns", fingerprint="fp")
    assert [rec.id for rec, _ in found] == [a, b]
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)
    assert found[1][1] == pytest.approx(float(near(base, 0.3, 1) @ base), abs=1e-5)
    assert found[0][0].payload == {"answer": "a", "n": [1, 2]}


def test_reads_as_concurrent_as_the_store_declares_agree_with_serial_reads(store: Store) -> None:
    """The answer-cache lookup lane runs ``read_concurrency`` reads at once on the store."""
    assert isinstance(store.read_concurrency, int) and store.read_concurrency >= 1
    ids = [add(store, f"q{i}", unit(200 + i)) for i in range(8)]

    def lookup(i: int) -> list[int]:
        found = store.search_answers(unit(200 + i), min_similarity=0.99, namespace="ns")
        return [rec.id for rec, _ in found]

    lane = LookupLane(store.read_concurrency)

    async def all_at_once() -> list[list[int]]:
        return list(await asyncio.gather(*(lane.run(lookup, i % 8) for i in range(40))))

    assert asyncio.run(all_at_once()) == [[ids[i % 8]] for i in range(40)]


def test_search_answers_scopes_namespace_and_fingerprint(store: Store) -> None:
    vec = unit(3)
    add(store, "q", vec, ns="one", fp="x")
    assert store.search_answers(vec, min_similarity=0.9, namespace="two", fingerprint="x") == []
    assert store.search_answers(vec, min_similarity=0.9, namespace="one", fingerprint="y") == []
    assert len(store.search_answers(vec, min_similarity=0.9, namespace="one")) == 1


def test_a_tenant_lookup_examines_only_its_own_namespace(store: Store) -> None:
    """Tenant A's many answers near the question are never candidates of tenant B's lookup:
    B finds its one answer, and the rows B's lookup examines do not grow with A's size (so
    neither its time nor its recall depends on A)."""
    question = unit(7)
    mine = add(store, "b's question", near(question, 0.25, 0), ns="beta")
    examined: list[int] = []
    for start, stop in ((0, 40), (40, 400)):
        for i in range(start, stop):  # A's entries are all closer to the question than B's
            add(store, f"a{i}", near(question, 0.08, i + 1), ns="acme")
        before = getattr(store, "answer_candidates")  # noqa: B009 (a backend diagnostic)
        found = store.search_answers(question, min_similarity=0.8, namespace="beta", limit=10)
        examined.append(getattr(store, "answer_candidates") - before)  # noqa: B009
        assert [rec.id for rec, _ in found] == [mine]
    assert examined == [1, 1]
    assert store.count_answers("acme") == 400
    assert len(store.search_answers(question, min_similarity=0.8, namespace="acme")) == 10


def test_an_answer_is_read_by_its_exact_question(store: Store) -> None:
    answer = add(store, "Does aspirin prevent stroke?", unit(6), ns="one", fp="x")
    add(store, "Does aspirin prevent stroke?", unit(6), ns="two", fp="x")
    found = store.answer_for_question(
        "Does aspirin prevent stroke?", namespace="one", fingerprint="x"
    )
    assert found is not None and found.id == answer and found.payload["answer"].startswith("Does")
    for question, ns, fp in (
        ("Does aspirin prevent stroke?", "one", "y"),  # other settings
        ("Does aspirin prevent stroke?", "three", "x"),  # another tenant
        ("does aspirin prevent stroke? ", "one", "x"),  # the same key, not the same words
        ("Does aspirin prevent strokes?", "one", "x"),
    ):
        assert store.answer_for_question(question, namespace=ns, fingerprint=fp) is None


def test_insert_same_question_replaces(store: Store) -> None:
    vec = unit(4)
    first = add(store, "Same question?", vec)
    second = add(store, "same question? ", vec, score=0.9)
    assert first != second
    assert store.count_answers() == 1
    assert store.get_answer(first) is None
    rec = store.get_answer(second)
    assert rec is not None and rec.retrieval_score == pytest.approx(0.9)


def test_returned_payload_is_a_copy(store: Store) -> None:
    vec = unit(5)
    aid = add(store, "q", vec)
    rec = store.get_answer(aid)
    assert rec is not None
    rec.payload["n"].append(3)
    again = store.get_answer(aid)
    assert again is not None and again.payload["n"] == [1, 2]


def test_lru_eviction_respects_touch(store: Store) -> None:
    ids = [add(store, f"q{i}", unit(10 + i), now=float(i)) for i in range(5)]
    store.touch_answers([ids[0]], now=1.0)  # older timestamp than others: order is by use
    assert store.answer_lru_order() == [*ids[1:], ids[0]]
    assert store.evict_answers(3) == 2
    assert sorted(store.answer_lru_order()) == sorted([ids[3], ids[4], ids[0]])
    rec = store.get_answer(ids[0])
    assert rec is not None and rec.hits == 1


def test_purge_and_clear_answers(store: Store) -> None:
    add(store, "old", unit(20), now=10.0)
    add(store, "new", unit(21), now=20.0, ns="other")
    assert store.purge_answers(created_before=15.0) == 1
    assert store.count_answers() == 1
    assert store.clear_answers("nope") == 0
    assert store.clear_answers("other") == 1
    assert store.search_answers(unit(21), min_similarity=0.5) == []


def test_wrong_dimension_is_refused(store: Store) -> None:
    with pytest.raises(StorageError):
        add(store, "q", np.ones(3, dtype=np.float32))


def test_answers_survive_reopen(make_store: Callable[[], Store]) -> None:
    first = make_store()
    vec = unit(30)
    aid = add(first, "kept", vec)
    first.close()
    second = make_store()
    found = second.search_answers(vec, min_similarity=0.99)
    assert [rec.id for rec, _ in found] == [aid]


# -- evidence ---------------------------------------------------------------------------
def test_publication_types_are_read_by_pmid(store: Store) -> None:
    put_article(store, article("1"))
    retracted = article("2").model_copy(
        update={"publication_types": ["Journal Article", "Retracted Publication"]}
    )
    put_article(store, retracted, seed=1)
    assert store.publication_types_by_pmid(["1", "2", "3"]) == {
        "1": ["Randomized Controlled Trial"],
        "2": ["Journal Article", "Retracted Publication"],
    }
    assert store.publication_types_by_pmid([]) == {}


def test_articles_and_chunks_roundtrip(store: Store) -> None:
    art = article("1")
    ids = put_article(store, art)
    assert store.get_articles([art.key])[art.key].article == art
    assert set(store.get_articles_by_pmid(["1", "2"])) == {"1"}
    assert [c.id for c in store.article_chunks(art.key)] == ids
    assert store.count_articles() == 1 and store.count_chunks() == len(ids)
    matches = store.search_chunks(unit(1), 2)
    assert matches[0].chunk.id == ids[1] and matches[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert matches[0].article.pmid == "1"


def test_rechunk_replaces_chunks_and_refresh_keeps_them(store: Store) -> None:
    art = article("1")
    put_article(store, art, seed=0)
    store.upsert_article(art, content_hash=art.title, chunks=None, embeddings=None, now=50.0)
    rec = store.get_articles([art.key])[art.key]
    assert rec.fetched_at == 50.0 and len(store.article_chunks(art.key)) == rec.chunk_count == 3
    put_article(store, art, seed=7)
    assert store.count_chunks() == 3
    assert store.search_chunks(unit(1), 1)[0].similarity < 0.5  # old vectors are gone
    assert store.search_chunks(unit(701), 1)[0].chunk.id == f"{art.key}#1"


def test_answers_and_articles_keep_the_address_they_came_from(store: Store) -> None:
    fake, real = "http://127.0.0.1:8765/entrez/eutils/", "https://eutils.ncbi.nlm.nih.gov/"
    answer_id = store.insert_answer(
        namespace="ns",
        fingerprint="fp",
        question="q",
        embedding=unit(1),
        payload={"answer": "a"},
        retrieval_score=0.6,
        now=0.0,
        origin=fake,
    )
    record = store.get_answer(answer_id)
    assert record is not None and record.origin == fake
    keyed = store.answer_for_question("q", namespace="ns", fingerprint="fp")
    assert keyed is not None and keyed.origin == fake
    assert store.search_answers(unit(1), min_similarity=0.9)[0][0].origin == fake
    add(store, "unknown", unit(2))  # no origin given: the empty one (unknown)
    found = store.search_answers(unit(2), min_similarity=0.9)
    assert found[0][0].origin == ""
    art = article("1")
    chunks = chunk_article(art)
    vectors = np.stack([unit(100 + i) for i in range(len(chunks))])
    store.upsert_article(
        art, content_hash="h", chunks=chunks, embeddings=vectors, now=0.0, origin=fake
    )
    assert store.get_articles([art.key])[art.key].origin == fake
    assert store.get_articles_by_pmid(["1"])["1"].origin == fake
    assert store.search_chunks(unit(101), 1)[0].origin == fake
    assert store.search_chunks(unit(101), 1, ChunkFilters(pmids=["1"]))[0].origin == fake
    # Served again by another address: a refresh takes its origin, the chunks stay.
    store.upsert_article(art, content_hash="h", chunks=None, embeddings=None, now=5.0, origin=real)
    assert store.get_articles([art.key])[art.key].origin == real
    assert store.search_chunks(unit(101), 1)[0].origin == real


def test_rows_stored_before_origins_migrate_to_the_unknown_origin(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    add(store, "q", unit(1))
    put_article(store, article("1"))
    # Back to the schema before m008: no origin column, the migration not applied.
    with store.transaction() as conn:
        conn.execute("ALTER TABLE answers DROP COLUMN origin")
        conn.execute("ALTER TABLE articles DROP COLUMN origin")
        conn.execute("DELETE FROM _migrations WHERE name = ?", ("m008_origins",))
    store.close()
    store = make_store()  # opens the old schema: m008 runs
    answer = store.answer_for_question("q", namespace="ns", fingerprint="fp")
    assert answer is not None and answer.origin == ""
    assert store.get_articles_by_pmid(["1"])["1"].origin == ""
    assert store.search_chunks(unit(1), 1)[0].origin == ""


def test_answers_keep_their_questions_frame(store: Store) -> None:
    from medlit.words.frame import frame_of, read_frame

    question = "Does aspirin not prevent stroke in women?"
    frame = read_frame(question)
    answer_id = store.insert_answer(
        namespace="ns",
        fingerprint="fp",
        question=question,
        embedding=unit(1),
        payload={"answer": "a"},
        retrieval_score=0.6,
        now=0.0,
        frame=frame.stored(),
    )
    record = store.get_answer(answer_id)
    assert record is not None and record.frame == frame.stored()
    keyed = store.answer_for_question(question, namespace="ns", fingerprint="fp")
    assert keyed is not None and frame_of(keyed.question, keyed.frame) == frame
    found = store.search_answers(unit(1), min_similarity=0.9)[0][0]
    assert frame_of(found.question, found.frame) == frame
    add(store, "unframed", unit(2))  # no frame given: none stored
    assert store.search_answers(unit(2), min_similarity=0.9)[0][0].frame == ""


def test_answers_stored_before_frames_migrate_to_no_frame(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    add(store, "q", unit(1))
    # Back to the schema before m010: no frame column, the migration not applied.
    with store.transaction() as conn:
        conn.execute("ALTER TABLE answers DROP COLUMN frame")
        conn.execute("DELETE FROM _migrations WHERE name = ?", ("m010_answer_frames",))
    store.close()
    store = make_store()  # opens the old schema: m010 runs
    answer = store.answer_for_question("q", namespace="ns", fingerprint="fp")
    assert answer is not None and answer.frame == ""


def test_search_chunks_filters(store: Store) -> None:
    put_article(store, article("1", year=2001), seed=1)
    put_article(store, article("2", year=2022), seed=2, now=100.0)
    q = unit(101)
    assert store.search_chunks(q, 1)[0].article.pmid == "1"
    assert store.search_chunks(q, 1, ChunkFilters(min_year=2010))[0].article.pmid == "2"
    assert store.search_chunks(q, 1, ChunkFilters(pmids=["2"]))[0].article.pmid == "2"
    assert store.search_chunks(q, 1, ChunkFilters(article_keys=["pmid:2"]))[0].article.pmid == "2"
    assert store.search_chunks(q, 5, ChunkFilters(fetched_after=50.0))[0].article.pmid == "2"
    assert store.search_chunks(q, 5, ChunkFilters(study_types={0})) == []


def test_articles_stored_as_other_get_the_design_their_methods_state(store: Store) -> None:
    """``m005_study_types_from_text``: articles stored before the design was read from the
    text (the column says "other") are found by a study-type filter once it has run."""
    trial = article("1").model_copy(
        update={
            "publication_types": ["Journal Article"],
            "abstract": [
                AbstractSection(
                    label="METHODS",
                    category="METHODS",
                    text="Patients were randomized to dexamethasone or prednisone.",
                ),
                AbstractSection(label="RESULTS", text="Relapse rates did not differ."),
            ],
        }
    )
    plain = article("2").model_copy(update={"publication_types": ["Journal Article"]})
    put_article(store, trial, seed=1)
    put_article(store, plain, seed=2)
    rct, other = ChunkFilters(study_types={int(StudyType.RCT)}), ChunkFilters(study_types={0})
    assert trial.study_type is StudyType.RCT and plain.study_type is StudyType.OTHER
    with store.transaction() as conn:  # as a store written before the rules were
        conn.execute("UPDATE articles SET study_type = 0")
    assert store.search_chunks(unit(101), 5, rct) == []
    with store.transaction() as conn:
        m005_study_types_from_text(conn)
    assert {m.article.pmid for m in store.search_chunks(unit(101), 5, rct)} == {"1"}
    assert {m.article.pmid for m in store.search_chunks(unit(101), 5, other)} == {"2"}


def test_trials_stored_as_observational_or_other_are_read_again(store: Store) -> None:
    """``m006_randomised_in_methods``: "we randomized" and "randomly divided" trials, stored
    as "other" or observational before the rules read them, become trials; a design the
    publication types gave stays."""

    def stored(pmid: str, methods: str, types: list[str]) -> Article:
        section = AbstractSection(label="METHODS", category="METHODS", text=methods)
        record = article(pmid).model_copy(
            update={"publication_types": types, "abstract": [section]}
        )
        put_article(store, record, seed=int(pmid))
        return record

    said = stored("1", "We randomized 42 patients to the control or study group.", [])
    divided = stored("2", "A prospective study: patients were randomly divided into 2 groups.", [])
    indexed = stored("3", "Patients were randomly divided into 2 groups.", ["Observational Study"])
    assert [a.study_type for a in (said, divided, indexed)] == [
        StudyType.RCT,
        StudyType.RCT,
        StudyType.OBSERVATIONAL,
    ]
    with store.transaction() as conn:  # as stored before the rules: other, observational
        conn.execute("UPDATE articles SET study_type = 0 WHERE key = 'pmid:1'")
        conn.execute("UPDATE articles SET study_type = 2 WHERE key <> 'pmid:1'")
        m006_randomised_in_methods(conn)
    rct = ChunkFilters(study_types={int(StudyType.RCT)})
    observational = ChunkFilters(study_types={int(StudyType.OBSERVATIONAL)})
    assert {m.article.pmid for m in store.search_chunks(unit(101), 5, rct)} == {"1", "2"}
    assert {m.article.pmid for m in store.search_chunks(unit(101), 5, observational)} == {"3"}


def test_evict_whole_articles_by_lru(store: Store) -> None:
    for i in range(4):
        put_article(store, article(str(i)), seed=i, now=float(i))
    store.touch_articles(["pmid:0"], now=10.0)
    articles, chunks = store.evict_articles(chunk_capacity=7)
    assert (articles, chunks) == (2, 6)
    assert set(store.get_articles([f"pmid:{i}" for i in range(4)])) == {"pmid:0", "pmid:3"}
    assert {m.article.pmid for m in store.search_chunks(unit(101), 10)} == {"0", "3"}


def test_purge_and_clear_evidence(store: Store) -> None:
    put_article(store, article("1"), now=1.0)
    put_article(store, article("2"), now=5.0, seed=2)
    assert store.purge_articles(fetched_before=3.0) == (1, 3)
    assert store.clear_evidence() == (1, 3)
    assert store.count_chunks() == 0 and store.search_chunks(unit(0), 3) == []


# -- generic ----------------------------------------------------------------------------
def test_counters(store: Store) -> None:
    store.bump_counters({"answers.hits": 2, "evidence.x": 1})
    store.bump_counters({"answers.hits": 1})
    assert store.counters("answers.") == {"answers.hits": 3}


def test_embedding_memo(store: Store) -> None:
    vec = unit(9)
    store.put_embeddings("m", {"h1": vec})
    got = store.get_embeddings("m", ["h1", "h2"])
    assert list(got) == ["h1"] and np.allclose(got["h1"], vec)
    assert store.get_embeddings("other", ["h1"]) == {}


def m001_notes(conn: Connection) -> None:
    conn.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")


def m002_notes_tag(conn: Connection) -> None:
    conn.execute("ALTER TABLE notes ADD COLUMN tag TEXT")


def test_component_migrations_and_transactions(make_store: Callable[[], Store]) -> None:
    store = make_store()
    assert store.apply_migrations("notes", [m001_notes]) == 1
    assert store.apply_migrations("notes", [m001_notes, m002_notes_tag]) == 1
    assert store.apply_migrations("notes", [m001_notes, m002_notes_tag]) == 0
    with store.transaction() as conn:
        conn.execute("INSERT INTO notes (id, body, tag) VALUES (?, 'kept', ?)", ("1", "t"))
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("INSERT INTO notes (id, body) VALUES ('2', 'rolled back')")
        raise RuntimeError("boom")
    store.close()
    again = make_store()
    assert again.apply_migrations("notes", [m001_notes, m002_notes_tag]) == 0
    with again.transaction() as conn:
        rows = conn.execute("SELECT body, tag FROM notes").fetchall()
    assert rows == [("kept", "t")]


def test_size_on_disk_lists_database(store: Store) -> None:
    add(store, "q", unit(1))
    sizes = store.size_on_disk()
    assert sum(sizes.values()) > 0 and all(v >= 0 for v in sizes.values())


def test_portable_component_sql(store: Store) -> None:
    store.apply_migrations("notes", [m001_notes, m002_notes_tag])
    with store.transaction() as conn:
        cur = conn.executemany(
            "INSERT INTO notes (id, body, tag) VALUES (?, ?, ?)",
            [("a", "50% better?", "x"), ("b", "what?", "y"), ("c", "100%", None)],
        )
        assert cur.rowcount == 3
        conn.execute(
            "INSERT INTO notes (id, body) VALUES (?, ?) "
            "ON CONFLICT (id) DO UPDATE SET body = excluded.body",
            ("b", "what? (edited)"),
        )
        # '?' and '%' inside a literal are text, not parameters.
        rows = conn.execute(
            "SELECT id FROM notes WHERE body LIKE '%?%' AND tag <> ? ORDER BY id", ("x",)
        ).fetchall()
        assert rows == [("b",)]
        assert conn.execute(
            "SELECT count(*) FROM notes WHERE body LIKE '%\\%%' ESCAPE '\\'"
        ).fetchone() == (2,)
        assert conn.execute("UPDATE notes SET tag = 'z' WHERE tag IS NULL").rowcount == 1
    assert store.read("SELECT body FROM notes WHERE id = ?", ("b",)) == [("what? (edited)",)]


def test_nested_transaction_is_a_savepoint(store: Store) -> None:
    store.apply_migrations("notes", [m001_notes])
    with store.transaction() as conn:
        conn.execute("INSERT INTO notes (id, body) VALUES ('outer', 'kept')")
        with pytest.raises(RuntimeError), store.transaction() as inner:
            inner.execute("INSERT INTO notes (id, body) VALUES ('inner', 'undone')")
            raise RuntimeError("inner fails")
        # The outer transaction sees its own write through read() too.
        assert store.read("SELECT id FROM notes") == [("outer",)]
    assert store.read("SELECT id FROM notes") == [("outer",)]


def test_bad_sql_is_a_storage_error(store: Store) -> None:
    with pytest.raises(StorageError):
        store.read("SELECT nope FROM nowhere")
    with pytest.raises(StorageError), store.transaction() as conn:
        conn.execute("INSERT INTO nowhere VALUES (1)")


def test_two_open_stores_on_one_database_see_each_other(
    make_store: Callable[[], Store],
) -> None:
    """Two processes (or replicas) on one database: what one caches, the other finds."""
    first, second = make_store(), make_store()
    vec = unit(40)
    aid = add(first, "shared question", vec)
    found = second.search_answers(vec, min_similarity=0.99, namespace="ns", fingerprint="fp")
    assert [rec.id for rec, _ in found] == [aid]
    put_article(second, article("7"), seed=4)
    assert first.search_chunks(unit(401), 1)[0].article.pmid == "7"
    second.bump_counters({"answers.hits": 1})
    first.bump_counters({"answers.hits": 1})
    assert first.counters("answers.") == {"answers.hits": 2}


def test_concurrent_writers_of_one_question_leave_one_answer(
    make_store: Callable[[], Store],
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    stores = [make_store(), make_store()]
    vec = unit(41)

    def write(i: int) -> int:
        return add(stores[i % 2], "Same question?", vec, score=0.5 + i / 100)

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(write, range(8)))
    assert len(set(ids)) == 8  # every write replaced the one before
    assert stores[0].count_answers() == 1
    found = stores[1].search_answers(vec, min_similarity=0.99)
    assert len(found) == 1 and found[0][0].id in ids


def test_an_answer_is_checked_once_by_replicas_sharing_the_store(
    make_store: Callable[[], Store],
) -> None:
    """The check lease: of replicas racing for a due answer one gets it; once checked, the
    answer is not due again until later; a lease that ran out may be taken again."""
    from concurrent.futures import ThreadPoolExecutor

    stores = [make_store(), make_store()]
    aid = add(stores[0], "Checked question?", unit(42), now=100.0)
    assert stores[1].get_answer(aid).last_checked == 100.0  # type: ignore[union-attr]
    assert stores[1].answer_basis(aid) == {}  # stored without one
    basis = {"searches": [{"source": "pubmed", "query": "q", "at": 99.0}], "sources": ["pubmed"]}
    aid = stores[0].insert_answer(
        namespace="ns",
        fingerprint="fp",
        question="Checked question?",
        embedding=unit(42),
        payload={"answer": "a"},
        retrieval_score=0.6,
        now=100.0,
        basis=basis,
    )
    assert stores[1].answer_basis(aid) == basis
    assert "searches" not in stores[1].get_answer(aid).payload  # type: ignore[union-attr]
    assert not stores[0].claim_answer_check(aid, now=150.0, due_before=50.0, lease_s=60.0)

    def claim(i: int) -> bool:
        return stores[i % 2].claim_answer_check(aid, now=200.0, due_before=150.0, lease_s=60.0)

    with ThreadPoolExecutor(max_workers=4) as pool:
        won = list(pool.map(claim, range(8)))
    assert won.count(True) == 1
    assert [r.id for r in stores[1].answers_due(checked_before=150.0)] == [aid]
    stores[1].finish_answer_check(aid, checked_at=200.0)
    record = stores[0].get_answer(aid)
    assert record is not None and (record.checked_at, record.last_checked) == (200.0, 200.0)
    assert record.created_at == 100.0  # the TTL still counts from when it was stored
    assert stores[0].answers_due(checked_before=150.0) == []
    assert not stores[0].claim_answer_check(aid, now=210.0, due_before=150.0, lease_s=60.0)
    # A check that failed releases the lease and leaves the answer due.
    assert stores[0].claim_answer_check(aid, now=400.0, due_before=300.0, lease_s=60.0)
    stores[0].finish_answer_check(aid, checked_at=None)
    assert stores[1].claim_answer_check(aid, now=401.0, due_before=300.0, lease_s=60.0)
    # A replica that died holding the lease: taken again once it ran out.
    assert not stores[0].claim_answer_check(aid, now=430.0, due_before=300.0, lease_s=60.0)
    assert stores[0].claim_answer_check(aid, now=462.0, due_before=300.0, lease_s=60.0)
    assert [r.id for r in stores[0].answers_due(checked_before=300.0, namespace="other")] == []


def test_postgres_eviction_counts_only_near_capacity(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL skips the exact count(*) while the planner's estimate is far below capacity."""
    from medlit.storage import _pg_answers

    store = _open("postgres", pg_url)
    try:
        for i in range(5):
            add(store, f"q{i}", unit(30 + i), now=float(i))
        with store.transaction() as conn:
            conn.raw.execute("ANALYZE answers")  # the estimate autovacuum would keep: 5 rows
        monkeypatch.setattr(_pg_answers, "_ESTIMATE_FROM_CAPACITY", 2)
        for i in range(5, 10):
            add(store, f"q{i}", unit(30 + i), now=float(i))
        # 10 held, estimate 5: under 0.8 x 8 the count is skipped (capacity is soft until
        # the next analyze), from 0.8 x 6 on it is counted and the excess evicted.
        assert store.evict_answers(8) == 0
        assert store.evict_answers(6) == 4
        assert store.count_answers() == 6
    finally:
        store.close()


def test_full_text_chunks_keep_their_flag_section_and_article_body(store: Store) -> None:
    from medlit.types import FullText, FullTextSection

    body = FullText(
        pmcid="PMC9",
        licence="CC BY",
        sections=[FullTextSection(label="Results", text="Deaths fell from 30 to 12.")],
    )
    art = article("77").model_copy(update={"full_text": body})
    ids = put_article(store, art, seed=7)
    chunks = store.article_chunks(art.key)
    assert [c.id for c in chunks] == ids
    assert [(c.section, c.from_full_text) for c in chunks][-1] == ("Results", True)
    assert not any(c.from_full_text for c in chunks[:-1])
    (match,) = store.search_chunks(unit(7 * 100 + len(ids) - 1), 1, ChunkFilters())
    assert match.chunk.from_full_text and match.chunk.section == "Results"
    assert match.article.full_text == body


def test_add_chunks_keeps_what_the_article_holds_and_counts_them(store: Store) -> None:
    from medlit.types import FullText, FullTextSection

    body = FullText(
        pmcid="PMC9",
        sections=[
            FullTextSection(label="Results", text="Deaths fell from 30 to 12."),
            FullTextSection(label="Results", kind="figure", text="Figure 1 Survival."),
        ],
    )
    art = article("78").model_copy(update={"full_text": body})
    whole = chunk_article(art)
    head = [c for c in whole if not c.from_full_text]
    store.upsert_article(
        art,
        content_hash="h",
        chunks=head,
        embeddings=np.stack([unit(800 + i) for i in range(len(head))]),
        now=0.0,
    )
    first, second = [c for c in whole if c.from_full_text]
    assert store.add_chunks(art.key, [first], np.stack([unit(900)])) == 1
    # A chunk held already is kept as it is (its vector too); only the new one is added.
    added = store.add_chunks(art.key, [first, second], np.stack([unit(950), unit(901)]))
    assert added == 1
    held = store.article_chunks(art.key)
    assert [c.id for c in held] == [c.id for c in whole]
    assert store.get_articles([art.key])[art.key].chunk_count == len(whole)
    assert store.count_chunks() == len(whole)
    assert store.search_chunks(unit(900), 1)[0].chunk.id == first.id
    assert store.search_chunks(unit(901), 1)[0].chunk.id == second.id
    assert store.search_chunks(unit(950), 1)[0].similarity < 0.5
    # Not stored: nothing is added; a vector per chunk is required.
    assert store.add_chunks("pmid:nobody", [first], np.stack([unit(1)])) == 0
    with pytest.raises(StorageError):
        store.add_chunks(art.key, [first, second], np.stack([unit(1)]))


def test_api_keys_remember_they_were_created(make_store: Callable[[], Store]) -> None:
    """The service requires keys once any was created: that mark outlives every key (revoked
    or expired) and a reopen, on every backend; an expiry is stored and read back."""
    import time

    from medlit.service.keys import KeyStore

    keys = KeyStore(make_store())
    assert not keys.ever_created() and keys.active_count() == 0
    key, token = keys.create("acme", expires_at=time.time() + 3600)
    short, short_token = keys.create("beta", expires_at=time.time() + 0.2)
    assert keys.ever_created() and keys.active_count() == 2
    assert keys.verify(token) == key and key.expires_at is not None
    time.sleep(0.25)
    assert keys.verify(short_token) is None
    assert keys.lookup(short_token) == short and short.expired()
    assert keys.active_count() == 1
    keys.revoke(key.key_id)
    assert keys.verify(token) is None and keys.lookup(token) is not None
    reopened = KeyStore(make_store())
    assert reopened.ever_created() and reopened.active_count() == 0


def test_api_keys_made_before_the_mark_existed_count(make_store: Callable[[], Store]) -> None:
    from medlit.service import keys as keys_module

    store = make_store()
    store.apply_migrations("keys", keys_module.MIGRATIONS[:1])  # an older database
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO api_keys (key_id, tenant, key_hash, label, rate_per_minute, "
            "created_at, revoked_at) VALUES ('k1', 'acme', 'h', '', NULL, 1.0, 2.0)"
        )
    assert keys_module.KeyStore(store).ever_created()


def test_research_jobs_are_claimed_fairly_across_tenants(store: Store) -> None:
    """The fair claim on every backend: tenants in turn, the busiest last, and no tenant past
    its limit even when a worker asks for its job by id (one conditional UPDATE)."""
    import datetime as dt
    import time

    from medlit.research.jobs import JobStore
    from medlit.research.models import ResearchJob

    jobs = JobStore(store)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    made: dict[str, list[str]] = {"b": [], "a": []}
    for i, tenant in enumerate(["b"] * 4 + ["a"] * 2):  # b queued first
        job = ResearchJob(question=f"q{i}", depth="quick", tenant=tenant)
        job.created_at = start + dt.timedelta(seconds=i)
        jobs.insert(job)
        made[tenant].append(job.id)
    now = time.time()
    # Nobody runs anything: oldest tenant first, then one job of each tenant in turn.
    assert jobs.claimable(now, tenant_limit=1) == [made["b"][0], made["a"][0]]
    assert jobs.claimable(now, limit=10) == [
        made["b"][0], made["a"][0], made["b"][1], made["a"][1], made["b"][2], made["b"][3]
    ]  # fmt: skip
    assert jobs.claim(made["b"][0], "w1", now, 60, tenant_limit=1)
    # b runs one: a first, and b's next job is past b's limit.
    assert jobs.claimable(now, tenant_limit=1) == [made["a"][0]]
    assert not jobs.claim(made["b"][1], "w2", now, 60, tenant_limit=1)
    assert jobs.claim(made["b"][1], "w2", now, 60, tenant_limit=2)
    assert jobs.running_by_tenant(now) == {"b": 2}
    assert jobs.unfinished("b") == 4 and jobs.unfinished("a") == 2
    # Both leases given back: a's turn has not come yet, so a goes first although b is older.
    jobs.release(made["b"][0], "w1")
    jobs.release(made["b"][1], "w2")
    assert jobs.claimable(now, tenant_limit=1)[0] == made["a"][0]
    assert jobs.claim(made["a"][0], "w1", now + 1, 60, tenant_limit=1)
    jobs.release(made["a"][0], "w1")
    assert jobs.claimable(now + 2, tenant_limit=1)[0] == made["b"][0]  # b's turn is older now


def test_an_interrupted_research_job_is_kept_so_and_resumable(store: Store) -> None:
    """INTERRUPTED on every backend: saved and read back as it was (with where it stopped),
    listed, and runnable: a worker claims it, a cancel reaches it; ended jobs are neither."""
    import time

    from medlit.research.jobs import JobStore
    from medlit.research.models import JobStatus, ResearchJob

    jobs = JobStore(store)
    job = ResearchJob(question="q", depth="quick")
    jobs.insert(job)
    job.status, job.failed_stage = JobStatus.INTERRUPTED, JobStatus.EXECUTING
    jobs.save(job)
    done = ResearchJob(question="done", depth="quick", status=JobStatus.COMPLETED)
    jobs.insert(done)
    again = jobs.get(job.id)
    assert (again.status, again.failed_stage) == (JobStatus.INTERRUPTED, JobStatus.EXECUTING)
    assert jobs.status(job.id) is JobStatus.INTERRUPTED
    assert {row[1] for row in jobs.list() if row[0] == job.id} == {"INTERRUPTED"}
    now = time.time()
    assert jobs.claimable(now) == [job.id] and jobs.unfinished(job.tenant) == 1
    assert jobs.claim(job.id, "w1", now, 60) and not jobs.claim(done.id, "w1", now, 60)
    jobs.release(job.id, "w1")
    assert jobs.request_cancel(job.id) and not jobs.request_cancel(done.id)


def test_word_pair_verdicts_are_shared_by_replicas(make_store: Callable[[], Store]) -> None:
    """Two processes' stores on one database: a verdict kept by one serves the other, and a
    revocation through either drops the answers the pair let through."""
    from medlit.cache.word_pairs import PROMPT_VERSION, Calibration, WordPair, WordPairStore

    one, two = make_store(), make_store()
    first, second = WordPairStore(one), WordPairStore(two)
    pair = WordPair("older", "elderly", "effect")
    assert first.propose("ns", pair, "Is X common in older people?", "... elderly people?")
    assert not second.propose("ns", pair, "again", "again")  # known already, from the other
    assert second.verdict("ns", pair) == "pending"
    second.decide("ns", pair, "same", by="model", model="m", score=0.97)
    # Either way round, the same pair; another namespace or context kind knows nothing of it.
    assert first.verdict("ns", WordPair("elderly", "older", "effect")) == "same"
    assert first.verdict("other", pair) is None
    assert first.verdict("ns", WordPair("older", "elderly", "risk")) is None
    answer = add(one, "... elderly people?", unit(1))
    first.record_use("ns", pair, answer)
    assert [r.uses for r in second.pairs("ns")] == [1]
    assert second.revoke("ns", "OLDER", "elderly") == (1, 1)
    assert one.get_answer(answer) is None and two.get_answer(answer) is None
    assert first.verdict("ns", pair) == "different"
    first.keep_calibration(Calibration("m", PROMPT_VERSION, 90, 40, 35, 0, "contrast", 1.0))
    kept = second.calibration("m")
    assert kept is not None and kept.precision == 1.0 and kept.opens
