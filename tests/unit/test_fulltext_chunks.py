"""Full-text chunks: by section, labelled, flagged, stored and reused by tier 2; the schema
migration on a database made before them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import EvidenceCache
from medlit.cache.chunking import article_content_hash, chunk_article
from medlit.config import CacheSettings
from medlit.embeddings.memo import MemoEmbedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.sources.jats import parse_jats
from medlit.storage import schema
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article, FullText, FullTextSection
from tests.conftest import shared_data_path

ABSTRACT = [
    AbstractSection(label="RESULTS", text="Deaths fell with the drug."),
    AbstractSection(label="CONCLUSIONS", text="The drug saves lives."),
]
BODY = FullText(
    pmcid="PMC1",
    licence="http://creativecommons.org/licenses/by/4.0/",
    sections=[
        FullTextSection(label="Methods", text="We randomised 300 adults to drug or placebo."),
        FullTextSection(label="Results", text="Twelve of 150 on the drug died (8%)."),
        FullTextSection(label="Results", text="Thirty of 150 on placebo died (20%)."),
        FullTextSection(
            label="Results",
            kind="table",
            text="Table 1 Deaths by arm.\nArm | Deaths\nDrug | 12\nPlacebo | 30",
        ),
        FullTextSection(label="Results", kind="figure", text="Figure 1 Survival curves."),
    ],
)


def _article(**kw: object) -> Article:
    return Article(pmid="42", title="A drug trial", abstract=ABSTRACT, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def embedder() -> MemoEmbedder:
    return MemoEmbedder(OnnxEmbedder())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "c.sqlite3") as s:
        yield s


def test_full_text_follows_the_abstract_with_labels_and_flags() -> None:
    plain = chunk_article(_article())
    chunks = chunk_article(_article(full_text=BODY))
    assert [c.text for c in chunks[: len(plain)]] == [c.text for c in plain]
    assert not any(c.from_full_text for c in plain)
    body = chunks[len(plain) :]
    assert all(c.from_full_text and not c.is_conclusion for c in body)
    assert [(c.section, c.text) for c in body] == [
        ("Methods", "We randomised 300 adults to drug or placebo."),
        # Paragraphs of one section pack together; never across sections.
        ("Results", "Twelve of 150 on the drug died (8%). Thirty of 150 on placebo died (20%)."),
        ("Results", "Table 1 Deaths by arm.\nArm | Deaths\nDrug | 12\nPlacebo | 30"),
        ("Results", "Figure 1 Survival curves."),
    ]
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_content_hash_unchanged_without_full_text() -> None:
    assert article_content_hash(_article()) == article_content_hash(_article(full_text=None))
    assert article_content_hash(_article()) != article_content_hash(_article(full_text=BODY))


def test_long_table_pieces_repeat_caption_header_and_group() -> None:
    rows = "\n".join(f"Dose {i} | {i} events in {i * 10} patients" for i in range(40))
    table = FullTextSection(
        label="Results",
        kind="table",
        text=f"Table 2 Events.\nDose | Events\nAmong women\n{rows}",
    )
    article = _article(full_text=FullText(pmcid="PMC1", sections=[table]))
    pieces = [c.text for c in chunk_article(article) if c.from_full_text]
    assert len(pieces) > 1
    for piece in pieces:
        lines = piece.splitlines()
        assert lines[:2] == ["Table 2 Events.", "Dose | Events"]
        assert lines[2] == "Among women"  # the group its rows fall under
        assert len(piece.split()) <= 125
    said = "\n".join(pieces)
    assert all(f"Dose {i} | " in said for i in range(40))


@pytest.mark.shared_data
def test_real_articles_chunk_within_bounds() -> None:
    for path in sorted(shared_data_path("pmc_oa").glob("*.nxml")):
        full = parse_jats(path.read_bytes())
        chunks = [c for c in chunk_article(_article(full_text=full)) if c.from_full_text]
        assert len(chunks) >= 10, path
        assert all(c.section for c in chunks)
        words = sorted(len(c.text.split()) for c in chunks)
        assert words[len(words) // 2] <= 120, path  # the median chunk is an abstract's size


def test_tier2_stores_full_text_chunks_and_keeps_them_when_met_again(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    cache = EvidenceCache(store, CacheSettings())
    cache.add_articles([_article()], embedder)
    before = cache.article_chunks("pmid:42")
    result = cache.add_articles([_article(full_text=BODY)], embedder)
    assert result.rechunked == 1
    chunks = cache.article_chunks("pmid:42")
    assert len(chunks) == len(before) + 4
    assert [c.from_full_text for c in chunks].count(True) == 4
    assert {c.section for c in chunks if c.from_full_text} == {"Methods", "Results"}
    # A search meets the record again, abstract only: the full text read before stays.
    again = cache.add_articles([_article()], embedder)
    assert again.skipped_fresh == 1 and again.chunks_embedded == 0
    assert len(cache.article_chunks("pmid:42")) == len(chunks)
    held = cache.fresh_by_key(["pmid:42"])["pmid:42"]
    assert held.full_text == BODY and held.full_text.licence
    # Scoring sees them: the nearest chunk to a Results question is the full text's.
    vector = np.asarray(embedder.embed(["How many died on placebo?"])[0], dtype=np.float32)
    best = cache.search_chunks(vector, 3)
    assert best[0].chunk.from_full_text and best[0].chunk.section == "Results"


def test_migration_adds_the_flag_to_an_existing_database(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.ensure_migrations_table(conn)
    conn.execute("BEGIN")
    old = [m for m in schema.CORE_MIGRATIONS if m.__name__ != "m007_full_text_chunks"]
    schema.apply_migrations(conn, "core", old)
    conn.execute(
        "INSERT INTO articles (key, pmid, data, content_hash, fetched_at, last_used_at, "
        "chunk_count, lru) VALUES ('pmid:7', '7', ?, 'h', 1e12, 1e12, 1, 1)",
        (Article(pmid="7", title="Old").model_dump_json(),),
    )
    conn.execute(
        "INSERT INTO chunks (chunk_id, article_key, ordinal, section, text, is_conclusion, "
        "embedding) VALUES ('pmid:7#0', 'pmid:7', 0, 'TITLE', 'Old', 0, ?)",
        (np.zeros(384, dtype=np.float32).tobytes(),),
    )
    conn.execute("COMMIT")
    conn.close()
    with SqliteStore(path) as store:
        (chunk,) = store.article_chunks("pmid:7")
        assert chunk.text == "Old" and chunk.from_full_text is False
        names = {r[0] for r in store.read("SELECT name FROM _migrations")}
        assert "m007_full_text_chunks" in names


def test_introduction_and_discussion_are_not_evidence() -> None:
    body = FullText(
        pmcid="PMC2",
        sections=[
            FullTextSection(label="Introduction", text="Smith found that coffee cures gout."),
            FullTextSection(label="Results", text="Coffee did not change gout flares."),
            FullTextSection(label="Results and Discussion", text="Flares were rare."),
            FullTextSection(label="Discussion", text="Unlike Smith, we saw no benefit."),
            FullTextSection(label="Discussion", kind="table", text="Table 3 Earlier studies."),
        ],
    )
    article = _article(full_text=body)
    said = {c.text for c in chunk_article(article) if c.from_full_text}
    assert said == {
        "Coffee did not change gout flares.",
        "Flares were rare.",
        "Table 3 Earlier studies.",
    }
    read = article.as_read()
    assert "coffee cures gout" not in read.abstract_text
    assert "Coffee did not change gout flares." in read.abstract_text
    assert [s.category for s in read.abstract[len(ABSTRACT) :]][:1] == ["RESULTS"]


def test_fingerprint_with_full_text_off_is_todays() -> None:
    from medlit.code_version import answering_code
    from medlit.config import Settings, _answer_fingerprint

    settings = Settings()
    settings.fulltext.mode = "off"
    today = _answer_fingerprint(answering_code(), "ask-v1", "m", ("pubmed",), True)
    assert settings.answer_fingerprint(["pubmed"], "m") == today
    settings.fulltext.mode = "auto"
    assert settings.answer_fingerprint(["pubmed"], "m") != today


def test_prompt_labels_full_text_passages_and_citations_list_them() -> None:
    from medlit.agent.prompt import expand_context, passages_of
    from medlit.types import Evidence

    article = _article(full_text=BODY)
    chunks = chunk_article(article)
    evidence = [
        Evidence(chunk=chunks[1], article=article, similarity=0.8, score=0.8),
        Evidence(chunk=chunks[-2], article=article, similarity=0.7, score=0.7),
    ]
    (block,) = expand_context(evidence, None, window=0, max_chars=10_000)
    lines = block.render().splitlines()
    assert lines[0].startswith("[PMID:42] A drug trial")
    assert lines[1] == "RESULTS: Deaths fell with the drug."
    assert lines[2] == "[PMID:42 · Results] Table 1 Deaths by arm."
    passages = passages_of(evidence, article.key)
    assert [(p.section, p.from_full_text) for p in passages] == [
        ("RESULTS", False),
        ("Results", True),
    ]
