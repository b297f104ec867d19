"""``medlit db migrate`` and ``medlit db copy`` through the real CLI, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from medlit.agent.memory import ChatMemory, Turn
from medlit.cache.chunking import chunk_article
from medlit.cli import app
from medlit.config import Settings
from medlit.research.jobs import JobStore
from medlit.research.models import JobStatus, ResearchJob
from medlit.storage.postgres import PostgresStore
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article
from tests.vectors import unit

runner = CliRunner()


def fill_sqlite() -> None:
    """A SQLite store under MEDLIT_HOME with something in every table."""
    with SqliteStore.open(Settings()) as store:
        for i, ns in enumerate(["default", "default", "team"]):
            store.insert_answer(
                namespace=ns,
                fingerprint="fp",
                question=f"question {i}?",
                embedding=unit(i),
                payload={"answer": f"answer {i}", "pmids": ["1"]},
                retrieval_score=0.7,
                now=100.0 + i,
            )
        first = store.answer_lru_order()[0]
        store.touch_answers([first], now=200.0)  # LRU order differs from insertion order
        for n in range(2):
            art = Article(
                pmid=str(n + 1),
                title=f"Study {n}",
                year=2020,
                abstract=[AbstractSection(label="RESULTS", text=f"Result {n} at 50% dose.")],
            )
            chunks = chunk_article(art)
            vectors = np.stack([unit(100 + 10 * n + j) for j in range(len(chunks))])
            store.upsert_article(
                art, content_hash=f"h{n}", chunks=chunks, embeddings=vectors, now=50.0
            )
        store.put_embeddings("model", {"h1": unit(7), "h2": unit(8)})
        store.bump_counters({"answers.hits": 5, "evidence.reused": 2})
        memory = ChatMemory(store, summarize_every=3, recent_turns=3)
        asyncio.run(memory.update("session-1", Turn("q", "Standalone q?", "a")))
        job = ResearchJob(id="job123", question="Is it safe?", status=JobStatus.COMPLETED)
        JobStore(store).save(job)


def snapshot(url: str) -> dict[str, object]:
    with PostgresStore(url, pool_size=1) as store:
        found = store.search_answers(unit(1), min_similarity=0.99)
        return {
            "answers": store.count_answers(),
            "by_ns": sorted(r[0] for r in store.read("SELECT namespace FROM answers")),
            "lru": [store.get_answer(i).question for i in store.answer_lru_order()],  # type: ignore[union-attr]
            "articles": store.count_articles(),
            "chunks": store.count_chunks(),
            "memo": sorted(store.get_embeddings("model", ["h1", "h2"])),
            "counters": store.counters(),
            "hit": [(rec.question, round(sim, 5)) for rec, sim in found],
            "search": [m.article.pmid for m in store.search_chunks(unit(100), 1)],
            "session": ChatMemory(store, summarize_every=3, recent_turns=3)
            .get("session-1")
            .last_question,
            "job": JobStore(store).get("job123").status,
        }


def test_copy_moves_everything_and_twice_changes_nothing(pg_url: str) -> None:
    fill_sqlite()
    first = runner.invoke(app, ["db", "copy", "--from", "sqlite", "--to", pg_url, "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["inserted"]["answers"] == 3
    assert report["inserted"]["chunks"] == report["read"]["chunks"] == 4
    assert report["inserted"]["research_jobs"] == 1
    assert report["inserted"]["memory_sessions"] == 1
    assert "***" in report["to"] or "@" not in report["to"]
    after_first = snapshot(pg_url)
    assert after_first == {
        "answers": 3,
        "by_ns": ["default", "default", "team"],
        "lru": ["question 1?", "question 2?", "question 0?"],
        "articles": 2,
        "chunks": 4,
        "memo": ["h1", "h2"],
        "counters": {"answers.hits": 5, "evidence.reused": 2},
        "hit": [("question 1?", 1.0)],
        "search": ["1"],
        "session": "Standalone q?",
        "job": JobStatus.COMPLETED,
    }
    second = runner.invoke(app, ["db", "copy", "--to", pg_url, "--json"])
    assert second.exit_code == 0, second.output
    assert set(json.loads(second.stdout)["inserted"].values()) == {0}
    assert snapshot(pg_url) == after_first


def test_copy_refuses_what_it_cannot_do(pg_url: str) -> None:
    no_target = runner.invoke(app, ["db", "copy"])
    assert no_target.exit_code != 0 and "MEDLIT_DATABASE_URL" in no_target.output
    no_source = runner.invoke(app, ["db", "copy", "--to", pg_url])
    assert no_source.exit_code != 0 and "no SQLite store" in no_source.output
    bad_url = runner.invoke(app, ["db", "copy", "--to", "mysql://u:pw@h/db"])
    assert bad_url.exit_code != 0 and "pw" not in bad_url.output


def test_migrate_creates_every_component_table(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLIT_DATABASE_URL", pg_url)
    first = runner.invoke(app, ["db", "migrate", "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["applied"] == {
        "research": 4,
        "memory": 2,
        "keys": 2,
        "verify": 1,
    }
    again = runner.invoke(app, ["db", "migrate", "--json"])
    assert json.loads(again.stdout)["applied"] == {
        "research": 0,
        "memory": 0,
        "keys": 0,
        "verify": 0,
    }


def test_cache_stats_and_config_on_postgres(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_DATABASE_URL", pg_url)
    with PostgresStore(pg_url, pool_size=1) as store:
        for ns in ("default", "team", "team"):
            store.insert_answer(
                namespace=ns,
                fingerprint="fp",
                question=f"q {ns} {store.count_answers()}",
                embedding=unit(store.count_answers()),
                payload={},
                retrieval_score=0.5,
                now=1.0,
            )
        store.bump_counters({"answers.hits": 4})
    stats = runner.invoke(app, ["cache", "stats", "--json"])
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.stdout)
    assert data["answers"]["by_namespace"] == {"default": 1, "team": 2}
    assert data["answers"]["hits"] == 4
    assert data["disk_bytes"]["postgres:answers"] > 0

    monkeypatch.setenv("MEDLIT_DATABASE_URL", "postgresql://medlit:s3cret@db.example:5432/m")
    shown = runner.invoke(app, ["config"])
    assert shown.exit_code == 0, shown.output
    assert "postgresql://medlit:***@db.example:5432/m" in shown.output
    as_json = runner.invoke(app, ["config", "--json"])
    assert "s3cret" not in shown.output + as_json.output


def test_an_unreachable_database_is_one_line_and_exit_7(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_DATABASE_URL", "postgresql://medlit:pw@127.0.0.1:1/none")
    result = runner.invoke(app, ["cache", "stats"])
    assert result.exit_code == 7
    assert "cannot connect" in result.output and "pw@" not in result.output
    # libpq's hint ("\n\tIs the server running ...") joins the line, not a second one.
    assert len(result.output.strip().splitlines()) == 1 and "\\t" not in result.output
    assert "Is the server running" in result.output
