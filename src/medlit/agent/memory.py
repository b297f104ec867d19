"""Summary-only chat memory per session (seed 001, ``ChatMemory.update``).

A session remembers a short summary, not the transcript: the questions asked since the last
summary (at most ``memory_recent_turns``), and, when an LLM is configured, a summary it rewrites
every ``memory_summarize_every`` turns (task ``summarize_memory``). Without an LLM the memory
is the last questions themselves, a deterministic summary. The memory lives in the store (table
``memory_sessions``), never in the per-question ``AgentState``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from medlit.errors import MedlitError
from medlit.log import get_logger
from medlit.storage.base import Connection, Migration

__all__ = [
    "ChatMemory",
    "MemoryStore",
    "SessionMemory",
    "Summarizer",
    "Turn",
    "session_key",
    "summary_messages",
]

log = get_logger("agent.memory")


def _create_sessions(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS memory_sessions (
            session_id TEXT PRIMARY KEY,
            summary TEXT NOT NULL DEFAULT '',
            pending TEXT NOT NULL DEFAULT '[]',
            turns INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL
        )"""
    )


def m002_sessions_updated_at_double(conn: Connection) -> None:
    """``updated_at`` as ``DOUBLE PRECISION``: ``REAL`` is 4 bytes on PostgreSQL, whose 24-bit
    mantissa rounds today's epoch seconds to the nearest 128 s. The table is rebuilt (create,
    copy, drop, rename), the one way both engines change a column's type; SQLite's ``REAL``
    was 8 bytes already, so its values come through unchanged."""
    for sql in (
        """CREATE TABLE memory_sessions_v2 (
            session_id TEXT PRIMARY KEY,
            summary TEXT NOT NULL DEFAULT '',
            pending TEXT NOT NULL DEFAULT '[]',
            turns INTEGER NOT NULL DEFAULT 0,
            updated_at DOUBLE PRECISION NOT NULL
        )""",
        "INSERT INTO memory_sessions_v2 (session_id, summary, pending, turns, updated_at)"
        " SELECT session_id, summary, pending, turns, updated_at FROM memory_sessions",
        "DROP TABLE memory_sessions",
        "ALTER TABLE memory_sessions_v2 RENAME TO memory_sessions",
    ):
        conn.execute(sql)


MIGRATIONS = [_create_sessions, m002_sessions_updated_at_double]


def session_key(namespace: str, session_id: str) -> str:
    """The stored id of a tenant's session: tenant ``default`` keeps the bare id (the CLI's
    sessions), any other is ``namespace/session_id``, so two tenants using the same session id
    never share a memory (the service refuses ``/`` in session ids)."""
    return session_id if namespace == "default" else f"{namespace}/{session_id}"


@dataclass
class Turn:
    """One question and the gist of its answer."""

    question: str
    standalone_question: str
    answer: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"q": self.question, "s": self.standalone_question, "a": self.answer}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Turn:
        """Inverse of :meth:`to_dict`."""
        return cls(str(raw.get("q", "")), str(raw.get("s", "")), str(raw.get("a", "")))


@dataclass
class SessionMemory:
    """What a session remembers: an LLM summary and the turns not yet folded into it."""

    session_id: str
    summary: str = ""
    pending: list[Turn] = field(default_factory=list)  # oldest first
    turns: int = 0

    @property
    def is_empty(self) -> bool:
        """Nothing asked yet in this session."""
        return self.turns == 0

    @property
    def last_question(self) -> str | None:
        """The standalone form of the last question asked, if remembered."""
        return self.pending[-1].standalone_question if self.pending else None

    def render(self) -> str:
        """The memory as prompt text (summary, then the recent questions)."""
        parts = []
        if self.summary:
            parts.append(self.summary.strip())
        if self.pending:
            recent = "; ".join(t.standalone_question for t in self.pending)
            parts.append(f"Recent questions: {recent}")
        return "\n".join(parts)


Summarizer = Callable[[str, list[Turn]], Awaitable[str]]
"""Folds (old summary, new turns) into a new summary; an LLM call in practice."""


class MemoryStore(Protocol):
    """What the memory needs of a store (every :class:`medlit.storage.base.Store`)."""

    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply a component's pending migrations."""
        ...

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query."""
        ...


class ChatMemory:
    """Session memories in the store.

    Args:
        store: the database (migrations are applied on construction).
        summarize_every: turns between summaries when a summarizer is given.
        recent_turns: turns kept verbatim at most.
    """

    def __init__(self, store: MemoryStore, *, summarize_every: int, recent_turns: int) -> None:
        self._store = store
        self._every = summarize_every
        self._recent = recent_turns
        store.apply_migrations("memory", MIGRATIONS)

    def get(self, session_id: str) -> SessionMemory:
        """The session's memory (empty for a new session)."""
        rows = self._store.read(
            "SELECT summary, pending, turns FROM memory_sessions WHERE session_id = ?",
            (session_id,),
        )
        if not rows:
            return SessionMemory(session_id)
        row = rows[0]
        pending = [Turn.from_dict(raw) for raw in json.loads(row[1])]
        return SessionMemory(session_id, row[0], pending, int(row[2]))

    def _save(self, memory: SessionMemory) -> None:
        pending = json.dumps([t.to_dict() for t in memory.pending], ensure_ascii=False)
        with self._store.transaction() as conn:
            conn.execute(
                """INSERT INTO memory_sessions (session_id, summary, pending, turns, updated_at)
                   VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(session_id) DO UPDATE SET summary = excluded.summary,
                   pending = excluded.pending, turns = excluded.turns,
                   updated_at = excluded.updated_at""",
                (memory.session_id, memory.summary, pending, memory.turns, time.time()),
            )

    async def update(
        self,
        session_id: str,
        turn: Turn,
        *,
        summarizer: Summarizer | None = None,
    ) -> SessionMemory:
        """Record a turn; every ``summarize_every`` pending turns, fold them into the summary.

        Without a summarizer (no LLM, or a cache hit that must cost no LLM call) the turn is
        only queued, and the oldest pending turns fall off beyond ``recent_turns``; the next
        update with a summarizer folds whatever is pending. A failing summarizer is logged and
        the turns stay pending: memory must never sink an answer.
        """
        import anyio.to_thread

        # The store calls run in a worker thread: a server's event loop must not wait on them.
        memory = await anyio.to_thread.run_sync(self.get, session_id)
        memory.turns += 1
        turn.answer = turn.answer[:400]
        memory.pending.append(turn)
        if summarizer is not None and len(memory.pending) >= self._every:
            try:
                summary = (await summarizer(memory.summary, list(memory.pending))).strip()
            except MedlitError as exc:
                log.warning("memory_summary_failed", session=session_id, error=str(exc))
            else:
                if summary:
                    memory.summary = summary
                    # Keep the last question verbatim: follow-ups refer to it most often.
                    memory.pending = memory.pending[-1:]
        cap = max(self._recent, self._every if summarizer is not None else 0)
        memory.pending = memory.pending[-cap:]
        await anyio.to_thread.run_sync(self._save, memory)
        return memory

    def clear(self, session_id: str) -> bool:
        """Forget a session; returns whether it existed."""
        with self._store.transaction() as conn:
            cur = conn.execute("DELETE FROM memory_sessions WHERE session_id = ?", (session_id,))
        return cur.rowcount > 0


def summary_messages(summary: str, turns: list[Turn]) -> list[dict[str, str]]:
    """The ``summarize_memory`` prompt: fold new turns into the running summary."""
    lines = [f"- Q: {t.standalone_question}\n  A: {t.answer}" for t in turns]
    return [
        {
            "role": "system",
            "content": "You keep a short memory of a conversation with a biomedical literature "
            "assistant. Write at most 5 sentences: the topics, drugs, populations and outcomes "
            "discussed, and the conclusions reached. No PMIDs. Plain text only.",
        },
        {
            "role": "user",
            "content": f"Summary so far:\n{summary or '(none)'}\n\nNew turns:\n"
            + "\n".join(lines)
            + "\n\nUpdated summary:",
        },
    ]
