"""Research jobs persisted in the store (table ``research_jobs``, component ``research``).

A job is one row: a few columns to list and filter by, and the whole :class:`ResearchJob` as
JSON. The orchestrator saves it after every stage and after every sub-question, so a process
that dies loses at most the sub-questions in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from medlit.errors import NotFoundError, StorageError
from medlit.research.models import ResearchJob
from medlit.storage.base import Connection
from medlit.text import require_clean_text

__all__ = ["MIGRATIONS", "JobDatabase", "JobStore"]


class JobDatabase(Protocol):
    """What the job store needs of a store (:class:`medlit.storage.base.Store`)."""

    def apply_migrations(self, component: str, migrations: Sequence[Any]) -> int:
        """Apply a component's pending migrations."""
        ...

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A read query."""
        ...


def m001_research_jobs(conn: Connection) -> None:
    """The jobs table."""
    conn.execute(
        """CREATE TABLE research_jobs (
            id TEXT PRIMARY KEY,
            question TEXT NOT NULL,
            depth TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            data TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX research_jobs_created ON research_jobs (created_at)")


MIGRATIONS = [m001_research_jobs]


class JobStore:
    """Save, load and list research jobs."""

    def __init__(self, db: JobDatabase) -> None:
        self.db = db
        db.apply_migrations("research", MIGRATIONS)

    def save(self, job: ResearchJob) -> None:
        """Insert or replace the job (the whole document, atomically)."""
        job.touch()
        try:
            data = job.model_dump_json()
        except ValueError as exc:  # pragma: no cover - a model that cannot serialise is a bug
            raise StorageError(f"cannot serialise job {job.id}: {exc}") from exc
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO research_jobs (id, question, depth, status, created_at, updated_at,"
                " data) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " status = excluded.status, updated_at = excluded.updated_at,"
                " data = excluded.data",
                (
                    job.id,
                    job.question,
                    job.depth,
                    job.status.value,
                    job.created_at.isoformat(),
                    job.updated_at.isoformat(),
                    data,
                ),
            )

    def get(self, job_id: str) -> ResearchJob:
        """The job with this id (a unique prefix of it is enough).

        Raises:
            NotFoundError: no job, or the prefix is ambiguous.
            ValidationError: the id is not valid text (bytes that are not UTF-8).
        """
        job_id = require_clean_text(job_id, "the job id")
        rows = self.db.read("SELECT data FROM research_jobs WHERE id = ?", (job_id,))
        if not rows and job_id:
            escaped = job_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self.db.read(
                "SELECT data FROM research_jobs WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
                (escaped + "%",),
            )
            if len(rows) > 1:
                raise NotFoundError(f"job id prefix {job_id!r} is ambiguous; give more of it")
        if not rows:
            raise NotFoundError(f"no research job {job_id!r} (see `medlit research list`)")
        return ResearchJob.model_validate_json(rows[0][0])

    def list(self, limit: int = 50) -> list[tuple[str, str, str, str, str]]:
        """(id, status, depth, created_at, question) of the newest jobs first."""
        rows = self.db.read(
            "SELECT id, status, depth, created_at, question FROM research_jobs"
            " ORDER BY created_at DESC LIMIT ?",
            (limit,),
        )
        return [(str(a), str(b), str(c), str(d), str(e)) for a, b, c, d, e in rows]
