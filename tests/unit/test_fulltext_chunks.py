"""Full-text chunks: by section, labelled, flagged, stored and reused by tier 2; the schema
migration on a database made before them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import EvidenceCache
from medlit.cache.chunking import (
    FULL_TEXT_EMBEDDED,
    article_content_hash,
    chunk_article,
    embedded_chunks,
    is_results_chunk,
    rank_lexically,
)
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
    question = "How many died on placebo?"
    result = cache.add_articles([_article(full_text=BODY)], embedder, question=question)
    assert result.rechunked == 1
    chunks = cache.article_chunks("pmid:42")
    # The Results chunks (text, table, figure) are embedded; the Methods chunk is not.
    assert len(chunks) == len(before) + 3
    assert [c.from_full_text for c in chunks].count(True) == 3
    assert {c.section for c in chunks if c.from_full_text} == {"Results"}
    # Ids are those of the whole list: the Methods chunk's ordinal is skipped, not reused.
    whole = chunk_article(_article(full_text=BODY))
    assert {c.id for c in chunks} <= {c.id for c in whole}
    # A search meets the record again, abstract only: the full text read before stays.
    again = cache.add_articles([_article()], embedder)
    assert again.skipped_fresh == 1 and again.chunks_embedded == 0
    assert len(cache.article_chunks("pmid:42")) == len(chunks)
    held = cache.fresh_by_key(["pmid:42"])["pmid:42"]
    assert held.full_text == BODY and held.full_text.licence
    # Scoring sees them: the nearest chunk to a Results question is the full text's.
    vector = np.asarray(embedder.embed([question])[0], dtype=np.float32)
    best = cache.search_chunks(vector, 3)
    assert best[0].chunk.from_full_text and best[0].chunk.section == "Results"


def test_without_a_question_a_body_is_stored_but_not_embedded(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    cache = EvidenceCache(store, CacheSettings())
    result = cache.add_articles([_article(full_text=BODY)], embedder)
    assert result.chunks_embedded == len(chunk_article(_article()))
    assert not any(c.from_full_text for c in cache.article_chunks("pmid:42"))
    assert cache.fresh_by_key(["pmid:42"])["pmid:42"].full_text == BODY
    # The answer that reads it embeds its picks (the article itself is unchanged).
    read = cache.add_articles([_article(full_text=BODY)], embedder, question="Deaths by arm?")
    assert read.skipped_fresh == 1 and read.chunks_embedded == 3
    stored = cache.article_chunks("pmid:42")
    assert [c.section for c in stored if c.from_full_text] == ["Results"] * 3
    assert store.get_articles(["pmid:42"])["pmid:42"].chunk_count == len(stored)


@pytest.mark.shared_data
def test_a_later_question_embeds_only_its_picks_tier2_lacks(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    full = parse_jats(shared_data_path("pmc_oa", "6605965a.nxml").read_bytes())
    article = _article(full_text=full)
    cache = EvidenceCache(store, CacheSettings())
    first = cache.add_articles([article], embedder, question=EPIC_QUESTION, full_text_chunks=4)
    body = [c for c in cache.article_chunks("pmid:42") if c.from_full_text]
    assert len(body) == 4 and first.chunks_embedded == len(chunk_article(_article())) + 4
    other = "Is parity or age at menarche associated with colorectal cancer risk?"
    picks = {c.id for c in embedded_chunks(chunk_article(article), other, 4) if c.from_full_text}
    second = cache.add_articles([article], embedder, question=other, full_text_chunks=4)
    held = {c.id for c in body}
    assert second.chunks_embedded == len(picks - held) > 0  # what is held is not embedded again
    stored = {c.id for c in cache.article_chunks("pmid:42") if c.from_full_text}
    assert stored == held | picks
    again = cache.add_articles([article], embedder, question=other, full_text_chunks=4)
    assert again.chunks_embedded == 0


EPIC_QUESTION = (
    "Is oral contraceptive use associated with colorectal cancer risk in pre-menopausal women?"
)
EPIC_HR = "pre- or peri-menopausal women (HR, 1.19; 95% CI: 0.96–1.48)"


@pytest.mark.shared_data
def test_the_question_picks_the_results_chunk_that_answers_it() -> None:
    full = parse_jats(shared_data_path("pmc_oa", "6605965a.nxml").read_bytes())
    chunks = chunk_article(_article(full_text=full))
    results = [c for c in chunks if is_results_chunk(c)]
    assert len(results) > FULL_TEXT_EMBEDDED  # there is a choice to make
    picked = embedded_chunks(chunks, EPIC_QUESTION)
    body = [c for c in picked if c.from_full_text]
    assert len(body) == FULL_TEXT_EMBEDDED
    assert all(is_results_chunk(c) for c in body)  # never Methods
    assert [c for c in picked if not c.from_full_text] == [
        c for c in chunks if not c.from_full_text
    ]
    assert [c.ordinal for c in picked] == sorted(c.ordinal for c in picked)
    # The passage with the answer is the best lexical match, so it is embedded even with a
    # budget of one chunk.
    (best,) = [c for c in embedded_chunks(chunks, EPIC_QUESTION, 1) if c.from_full_text]
    assert EPIC_HR in best.text
    assert any(EPIC_HR in c.text for c in body)


@pytest.mark.shared_data
def test_every_article_embeds_at_most_its_budget_of_results_chunks() -> None:
    for path in sorted(shared_data_path("pmc_oa").glob("*.nxml")):
        chunks = chunk_article(_article(full_text=parse_jats(path.read_bytes())))
        results = [c for c in chunks if is_results_chunk(c)]
        body = [c for c in embedded_chunks(chunks, "What was found?") if c.from_full_text]
        assert len(body) == min(len(results), FULL_TEXT_EMBEDDED), path
        assert all(is_results_chunk(c) for c in body), path


def test_results_chunks_without_a_shared_word_keep_their_order() -> None:
    chunks = chunk_article(_article(full_text=BODY))
    body = [c for c in embedded_chunks(chunks, "zzz qqq", 2) if c.from_full_text]
    assert [c.text for c in body] == [
        "Twelve of 150 on the drug died (8%). Thirty of 150 on placebo died (20%).",
        "Table 1 Deaths by arm.\nArm | Deaths\nDrug | 12\nPlacebo | 30",
    ]
    # A word of the question picks its chunk over the ones before it.
    (table,) = [c for c in embedded_chunks(chunks, "Deaths by arm?", 1) if c.from_full_text]
    assert table.text.startswith("Table 1")
    assert rank_lexically("survival curves", [c.text for c in chunks])[0] == len(chunks) - 1
    # No question: the abstract's chunks only.
    assert embedded_chunks(chunks, None) == [c for c in chunks if not c.from_full_text]


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
