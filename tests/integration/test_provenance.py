"""Provenance (issue 63): a cached answer or article is served only where it came from.

The README's demo, as a new user ran it: the same question asked of one fake E-utilities
server, then of another one with different records. The second answer must not be the
first's cached answer, nor cite a record only the first server served. Then ``medlit cache
list|clear --source``, and a store made before origins were recorded.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import AnswerCache, EvidenceCache
from medlit.config import CacheSettings
from medlit.storage.schema import CORE_MIGRATIONS, apply_migrations, ensure_migrations_table
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article, FullText, FullTextSection
from tests.fakes.eutils_server import FakeEutils
from tests.integration.test_ask_flow import Q1, corpus
from tests.vectors import unit


def second_corpus() -> list[Article]:
    """Another server's records on the same topic: one PMID the first server also serves (with
    other content), the rest its own."""

    def make(pmid: str, title: str, conclusion: str) -> Article:
        return Article(
            pmid=pmid,
            title=title,
            abstract=[
                AbstractSection(
                    label="METHODS", category="METHODS", text=f"We studied {title.lower()}."
                ),
                AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
            ],
            journal="Journal of the Second Server",
            year=2022,
            publication_types=["Journal Article", "Randomized Controlled Trial"],
            language="eng",
        )

    return [
        make(
            "31000001",
            "Aspirin and stroke in adults: the second server's trial",
            "Aspirin prevented stroke in adults in this second trial.",
        ),
        make(
            "32000001",
            "Daily aspirin and first stroke in adults",
            "Daily aspirin reduced first strokes in adults.",
        ),
        make(
            "32000002",
            "Aspirin versus placebo for stroke prevention in adults",
            "Aspirin lowered the risk of stroke in adults compared with placebo.",
        ),
        make(
            "32000003",
            "Aspirin and ischaemic stroke in middle-aged adults",
            "Aspirin was associated with fewer ischaemic strokes in adults.",
        ),
    ]


@pytest.fixture
def first() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def second() -> Iterator[FakeEutils]:
    with FakeEutils(articles=second_corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def medlit(
    home: Path, base_url: str, *args: str, log_level: str = "warning"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(
        MEDLIT_LOG_LEVEL=log_level,
        MEDLIT_HOME=str(home),
        MEDLIT_PUBMED_BASE_URL=base_url,
        MEDLIT_PUBMED_REQUESTS_PER_SECOND="50",
        MEDLIT_AGENT_MIN_DOCS="2",
        MEDLIT_EUROPEPMC_ENABLED="false",
        HF_HUB_OFFLINE="1",
        COLUMNS="250",
    )
    return subprocess.run(
        [sys.executable, "-c", "from medlit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )


def served_by(articles: list[Article]) -> set[tuple[str, str]]:
    return {(a.pmid or "", a.title) for a in articles}


def cited(answer: dict[str, object]) -> set[tuple[str, str]]:
    return {(c["pmid"], c["title"]) for c in answer["citations"]}  # type: ignore[attr-defined,index]


def test_the_demo_servers_answers_are_not_served_for_another_address(
    tmp_path: Path, first: FakeEutils, second: FakeEutils
) -> None:
    one = medlit(tmp_path, first.base_url, "ask", Q1, "--json")
    assert one.returncode == 0, one.stderr
    a = json.loads(one.stdout)
    assert a["cache"]["admitted"] and a["citations"]
    assert cited(a) <= served_by(corpus())

    two = medlit(tmp_path, second.base_url, "ask", Q1, "--json", log_level="info")
    assert two.returncode == 0, two.stderr
    b = json.loads(two.stdout)
    # Not a hit from the first server's answer, and it says why in one line.
    assert b["cache"]["tier1"] == "miss", b["cache"]
    assert b["cache"]["miss_reason"] == "other_source"
    assert b["cache"]["guard_reason"] == (
        f"cached answer came from {first.base_url} not {second.base_url}"
    )
    # It cites only what the second server served: never a record only the first served
    # (PMID 31000001 both serve, with other content: the second's is what is cited).
    assert b["citations"] and cited(b) <= served_by(second_corpus()), cited(b)
    assert not cited(b) & (served_by(corpus()) - served_by(second_corpus()))
    assert second.served("efetch") >= 1 and b["api_calls"]["pubmed"] >= 2
    # The first server's record of a PMID both serve was fetched again, and the log says why.
    assert "evidence_not_reused" in two.stderr
    assert f"came from {first.base_url} not {second.base_url}" in two.stderr

    # The cache lists what each address left, and drops one address's entries.
    listed = medlit(tmp_path, second.base_url, "cache", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    sources = json.loads(listed.stdout)["sources"]
    table = medlit(tmp_path, second.base_url, "cache", "list")
    assert table.returncode == 0 and first.base_url in table.stdout, table.stdout
    assert sources[second.base_url]["answers"] == 1
    assert sources[first.base_url]["articles"] >= 1 and sources[second.base_url]["articles"] >= 1
    one_source = medlit(  # as typed: without the trailing slash
        tmp_path, second.base_url, "cache", "list", "--source", first.base_url.rstrip("/"), "--json"
    )
    rows = json.loads(one_source.stdout)
    assert rows["answers"] == [] and rows["articles"]
    assert {r["origin"] for r in rows["articles"]} == {first.base_url}
    assert "31000001" not in {r["key"] for r in rows["articles"]}  # fetched again from the second
    dropped = medlit(
        tmp_path, second.base_url, "cache", "clear", "--source", first.base_url, "--yes"
    )
    assert dropped.returncode == 0, dropped.stderr
    assert f"deleted {len(rows['articles'])} articles" in dropped.stdout
    after = json.loads(medlit(tmp_path, second.base_url, "cache", "list", "--json").stdout)
    assert first.base_url not in after["sources"]
    assert after["sources"][second.base_url] == sources[second.base_url]

    # The second server's answer is served again from its own address.
    again = json.loads(medlit(tmp_path, second.base_url, "ask", Q1, "--json").stdout)
    assert again["cache"]["tier1"] == "hit" and cited(again) == cited(b)


# -- a store made before origins were recorded ----------------------------------------------
OLD = "http://127.0.0.1:8765/entrez/eutils/"
REAL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"


def old_store(path: Path) -> None:
    """A store as medlit made it before origins were recorded: the core migrations before
    ``m008_origins``, one answer and one article, written by the old SQL (no origin column)."""
    names = [migration.__name__ for migration in CORE_MIGRATIONS]
    conn = sqlite3.connect(path)
    with conn:
        ensure_migrations_table(conn)
        apply_migrations(conn, "core", CORE_MIGRATIONS[: names.index("m008_origins")])
        conn.execute(
            "INSERT INTO answers (namespace, fingerprint, question, question_hash, payload, "
            "retrieval_score, embedding, created_at, last_used_at, lru) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            (
                "default",
                "fp",
                Q1,
                _qhash(Q1),
                json.dumps(
                    {
                        "answer": "Yes [1].",
                        "citations": [{"pmid": "39000002", "title": "Old"}],
                        "retrieval_score": 0.9,
                    }
                ),
                0.9,
                unit(1).tobytes(),
                1e12,
                1e12,
            ),
        )
        art = Article(pmid="39000002", title="Old", abstract=[AbstractSection(text="Old. Two.")])
        conn.execute(
            "INSERT INTO articles (key, pmid, doi, year, study_type, data, content_hash, "
            "fetched_at, last_used_at, chunk_count, lru) VALUES (?, ?, NULL, NULL, 0, ?, ?, "
            "?, ?, 0, 1)",
            (art.key, art.pmid, art.model_dump_json(), "h", 1e12, 1e12),
        )
    conn.close()


def _qhash(question: str) -> str:
    from medlit.storage.base import question_hash

    return question_hash(question)


async def test_an_old_store_opens_and_its_entries_are_not_served(tmp_path: Path) -> None:
    path = tmp_path / "medlit.sqlite3"
    old_store(path)
    with SqliteStore(path, dim=384) as store:
        clock = lambda: 1e12 + 10  # noqa: E731
        answers = AnswerCache(store, CacheSettings(guard=False), clock=clock)
        record = store.answer_for_question(Q1, namespace="default", fingerprint="fp")
        assert record is not None and record.origin == ""  # migrated: unknown
        keyed = await answers.search_key(Q1, namespace="default", fingerprint="fp", origin=REAL)
        assert keyed is None  # not served by key: left to the search, which says why
        lookup = answers.search_query(
            Q1, unit(1), namespace="default", fingerprint="fp", origin=REAL
        )
        assert not lookup.hit and lookup.miss_reason == "other_source"
        assert lookup.guard_reason == (
            "cached answer has no recorded source address (stored before medlit recorded one), "
            f"not {REAL}"
        )
        evidence = EvidenceCache(store, clock=clock, addresses={"pubmed": REAL})
        assert evidence.fresh_articles(["39000002"]) == {}
        assert evidence.fresh_articles(["39000002"], origin=OLD) == {}
        assert evidence.fresh_by_key(["39000002"]) == {}


def test_answers_are_served_only_to_their_own_address(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.sqlite3", dim=384) as store:
        answers = AnswerCache(store, CacheSettings(guard=False))
        payload = {"answer": "a", "citations": [{"pmid": "1", "title": "t"}], "retrieval_score": 1}
        answers.add_query("q", unit(1), payload, namespace="n", fingerprint="f", origin=OLD)
        same = answers.search_query("q", unit(1), namespace="n", fingerprint="f", origin=OLD)
        assert same.hit
        other = answers.search_query("q", unit(1), namespace="n", fingerprint="f", origin=REAL)
        assert not other.hit and other.miss_reason == "other_source"
        assert other.guard_reason == f"cached answer came from {OLD} not {REAL}"
        answers.flush()
        assert store.counters("answers.miss.other_source") == {"answers.miss.other_source": 1}


class Hashes:
    model_id = "hash-test"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([unit(abs(hash(t)) % 100_000) for t in texts])


def test_evidence_is_reused_only_from_its_own_address(tmp_path: Path) -> None:
    art = Article(pmid="7", title="T", abstract=[AbstractSection(text="One. Two.")])
    with SqliteStore(tmp_path / "s.sqlite3", dim=384) as store:
        fake = EvidenceCache(store, addresses={"pubmed": OLD})
        fake.add_articles([art], Hashes())  # type: ignore[arg-type]
        assert set(fake.fresh_articles(["7"])) == {"7"}
        assert fake.search_chunks(Hashes().embed(["T"])[0], 5)
        real = EvidenceCache(store, addresses={"pubmed": REAL})
        assert real.fresh_articles(["7"]) == {}
        assert real.fresh_articles(["7"], origin=REAL) == {}
        assert real.fresh_by_key([art.key]) == {}
        assert real.search_chunks(Hashes().embed(["T"])[0], 5, sources=["pubmed"]) == []
        assert real.kept_to(["pubmed"]).search_chunks(Hashes().embed(["T"])[0], 5) == []
        # Fetched again from the real address: reused from there (and no longer by the fake).
        added = real.add_articles([art], Hashes())  # type: ignore[arg-type]
        assert added.refreshed == 1 and added.chunks_embedded == 0
        assert set(real.fresh_articles(["7"])) == {"7"}
        assert real.search_chunks(Hashes().embed(["T"])[0], 5)
        assert fake.fresh_articles(["7"]) == {}


def test_a_full_text_read_from_another_address_does_not_join_the_record(tmp_path: Path) -> None:
    body = FullText(
        pmcid="PMC1",
        sections=[FullTextSection(label="Results", text="Twelve of 150 on the drug died.")],
    )
    art = Article(pmid="8", title="T", abstract=[AbstractSection(text="One. Two.")])
    with SqliteStore(tmp_path / "s.sqlite3", dim=384) as store:
        fake = EvidenceCache(store, addresses={"pubmed": OLD})
        fake.add_articles([art.model_copy(update={"full_text": body})], Hashes())  # type: ignore[arg-type]
        real = EvidenceCache(store, addresses={"pubmed": REAL})
        real.add_articles([art], Hashes())  # type: ignore[arg-type]
        held = store.get_articles([art.key])[art.key]
        assert held.origin == REAL and held.article.full_text is None
        # From its own address, a record fetched again keeps the body read before.
        real.add_articles([art.model_copy(update={"full_text": body})], Hashes())  # type: ignore[arg-type]
        real.add_articles([art], Hashes())  # type: ignore[arg-type]
        assert store.get_articles([art.key])[art.key].article.full_text == body
