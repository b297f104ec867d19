"""Components that keep their own tables (research jobs, chat memory) on both store backends.

Their SQL is written once (portable subset, ``?`` parameters) and must run unchanged on the
embedded SQLite store and on PostgreSQL; ``open_store`` picks the backend from the settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.agent.memory import MIGRATIONS as MEMORY_MIGRATIONS
from medlit.agent.memory import ChatMemory, Turn
from medlit.config import Settings
from medlit.errors import NotFoundError
from medlit.research.jobs import JobStore
from medlit.research.models import JobStatus, ResearchJob
from medlit.storage import open_store
from medlit.storage.base import Store


@pytest.fixture(params=["sqlite", "postgres"])
def backend_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path / "home")
    if request.param == "postgres":
        settings.database_url = request.getfixturevalue("pg_url")
    return settings


@pytest.fixture
def store(backend_settings: Settings) -> Iterator[Store]:
    with open_store(backend_settings) as opened:
        yield opened


def test_open_store_picks_the_backend_from_the_settings(
    backend_settings: Settings, store: Store
) -> None:
    from medlit.storage.postgres import PostgresStore
    from medlit.storage.sqlite import SqliteStore

    expected = SqliteStore if backend_settings.database_url is None else PostgresStore
    assert type(store) is expected
    assert "***" not in backend_settings.database_label or backend_settings.database_url


def test_job_store_saves_lists_and_finds_by_prefix(store: Store) -> None:
    jobs = JobStore(store)
    first = ResearchJob(id="abc111", question="Does 50% dose reduction help?", depth="quick")
    second = ResearchJob(id="abc222", question="What about_children?")
    jobs.save(first)
    jobs.save(second)
    second.status = JobStatus.COMPLETED
    jobs.save(second)  # the upsert replaces the document
    assert jobs.get("abc222").status is JobStatus.COMPLETED
    assert jobs.get("abc1").question == "Does 50% dose reduction help?"
    with pytest.raises(NotFoundError, match="ambiguous"):
        jobs.get("abc")
    with pytest.raises(NotFoundError):
        jobs.get("zzz")
    listed = jobs.list()
    assert {row[0] for row in listed} == {"abc111", "abc222"}
    assert JobStore(store).get("abc111").depth == "quick"  # migrations are not re-run


async def test_chat_memory_roundtrip(store: Store) -> None:
    memory = ChatMemory(store, summarize_every=2, recent_turns=3)
    assert memory.get("s1").is_empty

    async def summarize(summary: str, turns: list[Turn]) -> str:
        return f"{summary} +{len(turns)}".strip()

    await memory.update("s1", Turn("q1", "Question one?", "a1"))
    got = await memory.update("s1", Turn("q2", "Question two?", "a2"), summarizer=summarize)
    assert got.summary == "+2" and got.turns == 2
    again = memory.get("s1")
    assert (again.summary, again.turns, again.last_question) == ("+2", 2, "Question two?")
    assert memory.clear("s1") is True
    assert memory.clear("s1") is False


def test_session_times_keep_their_precision_after_the_upgrade(store: Store) -> None:
    """A database made before m002 (``updated_at REAL``: 4 bytes on PostgreSQL, epoch seconds
    rounded to 128 s) is upgraded in place; its sessions survive, and times keep every digit."""
    store.apply_migrations("memory", MEMORY_MIGRATIONS[:1])
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO memory_sessions (session_id, summary, pending, turns, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            ("old", "kept", "[]", 4, 1_763_000_000.0),
        )
    memory = ChatMemory(store, summarize_every=2, recent_turns=3)  # applies m002
    old = memory.get("old")
    assert (old.summary, old.turns) == ("kept", 4)
    with store.transaction() as conn:
        conn.execute(
            "UPDATE memory_sessions SET updated_at = ? WHERE session_id = ?",
            (1_763_000_000.25, "old"),
        )
    rows = store.read("SELECT updated_at FROM memory_sessions WHERE session_id = ?", ("old",))
    assert rows[0][0] == 1_763_000_000.25
    assert ChatMemory(store, summarize_every=2, recent_turns=3).get("old").turns == 4  # once
