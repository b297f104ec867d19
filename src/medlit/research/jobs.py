"""Research jobs persisted in the store (tables ``research_jobs``, ``research_events``).

A job is one row: a few columns to list, filter and claim by, and the whole
:class:`ResearchJob` as JSON. The orchestrator saves it after every stage and after every
sub-question, so a process that dies loses at most the sub-questions in flight.

Claims are leases, so that any number of workers, in any number of processes or hosts sharing
the store, run each job once: a worker claims a job with one conditional ``UPDATE`` (it wins
only if the lease is free or expired), renews the lease while it runs, and saves only while it
still holds it (:class:`medlit.errors.LeaseLost` otherwise). A job whose process was killed keeps
its lease until it expires; then any worker may claim and resume it.

Progress events are stored per job with increasing ``seq`` numbers (the SSE event ids), so a
client that reconnects asks for the events after the last one it saw.

The SQL here runs on SQLite and PostgreSQL alike (qmark parameters, ``ON CONFLICT``, portable
types; the cursor's ``rowcount`` tells whether a conditional update won).
"""

from __future__ import annotations

import builtins
import os
import socket
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from medlit.errors import LeaseLost, NotFoundError, StorageError
from medlit.research.models import (
    DEFAULT_TENANT,
    JobStatus,
    ProgressEvent,
    ResearchJob,
    utcnow,
)
from medlit.storage.base import Connection
from medlit.text import require_clean_text

__all__ = ["MIGRATIONS", "RUNNABLE", "JobDatabase", "JobStore", "new_owner", "owner_is_dead"]

#: Statuses a worker picks up: accepted, or interrupted mid-run (FAILED waits for a person).
RUNNABLE: tuple[str, ...] = tuple(s.value for s in JobStatus if not s.terminal)


def new_owner(kind: str = "worker") -> str:
    """A lease owner id: ``host/pid/kind-random`` (host and pid tell a dead holder apart)."""
    return f"{socket.gethostname()}/{os.getpid()}/{kind}-{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str | None) -> bool:
    """Whether ``owner`` is a process of this host that no longer runs (killed, crashed).

    Its lease can be taken over at once instead of waiting for it to expire. Owners on other
    hosts are never judged dead here: their leases expire.
    """
    if not owner:
        return False
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


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


def m002_tenants_leases_events(conn: Connection) -> None:
    """Tenants, leases and cancel requests on jobs; the stored progress events."""
    for sql in (
        f"ALTER TABLE research_jobs ADD COLUMN tenant TEXT NOT NULL DEFAULT '{DEFAULT_TENANT}'",
        "ALTER TABLE research_jobs ADD COLUMN lease_owner TEXT",
        "ALTER TABLE research_jobs ADD COLUMN lease_until DOUBLE PRECISION",
        "ALTER TABLE research_jobs ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0",
        "CREATE INDEX research_jobs_tenant ON research_jobs (tenant, created_at)",
        "CREATE INDEX research_jobs_status ON research_jobs (status)",
        "CREATE TABLE research_events (job_id TEXT NOT NULL, seq BIGINT NOT NULL,"
        " data TEXT NOT NULL, PRIMARY KEY (job_id, seq))",
    ):
        conn.execute(sql)


def m003_tenant_turns(conn: Connection) -> None:
    """When each tenant last had a job claimed (round-robin across tenants)."""
    conn.execute(
        "CREATE TABLE research_turns (tenant TEXT PRIMARY KEY, last_claim DOUBLE PRECISION"
        " NOT NULL)"
    )


def m011_report_versions(conn: Connection) -> None:
    """The versions of a job's report a refresh replaced (the whole job as it was)."""
    conn.execute(
        "CREATE TABLE research_report_versions (job_id TEXT NOT NULL, version BIGINT NOT NULL,"
        " saved_at TEXT NOT NULL, generated_at TEXT, data TEXT NOT NULL,"
        " PRIMARY KEY (job_id, version))"
    )


MIGRATIONS = [
    m001_research_jobs,
    m002_tenants_leases_events,
    m003_tenant_turns,
    m011_report_versions,
]

MAX_EVENT_SEQ = 2**53  # the largest event number a reader may ask after

_RUNNABLE_SQL = ", ".join(f"'{s}'" for s in RUNNABLE)


class JobStore:
    """Save, load, list, claim and cancel research jobs; store their progress events."""

    def __init__(self, db: JobDatabase) -> None:
        self.db = db
        db.apply_migrations("research", MIGRATIONS)

    # -- the job document --------------------------------------------------------------------

    def insert(self, job: ResearchJob, *, owner: str | None = None, lease_s: float = 0) -> None:
        """Save a new job, already claimed by ``owner`` when given (no worker can take it)."""
        until = time.time() + lease_s if owner is not None else None
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO research_jobs (id, tenant, question, depth, status, created_at,"
                " updated_at, data, lease_owner, lease_until)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*self.columns(job), owner, until),
            )

    @staticmethod
    def columns(job: ResearchJob) -> tuple[str, ...]:
        """The job's row (touched now): id, tenant, question, depth, status, created_at,
        updated_at, data (the JSON document)."""
        job.touch()
        try:
            data = job.model_dump_json()
        except ValueError as exc:  # pragma: no cover - a model that cannot serialise is a bug
            raise StorageError(f"cannot serialise job {job.id}: {exc}") from exc
        return (
            job.id,
            job.tenant,
            job.question,
            job.depth,
            job.status.value,
            job.created_at.isoformat(),
            job.updated_at.isoformat(),
            data,
        )

    def save(self, job: ResearchJob, *, owner: str | None = None) -> None:
        """Insert or replace the job (the whole document, atomically).

        Args:
            job: the job.
            owner: the lease holder saving it; the save then happens only while ``owner``
                still holds the job's lease.

        Raises:
            LeaseLost: ``owner`` no longer holds the lease (another worker took the job over).
        """
        self.write(self.columns(job), owner=owner)

    def write(self, columns: tuple[str, ...], *, owner: str | None = None) -> None:
        """The write half of :meth:`save`, given :meth:`columns` (callers that serialise on
        the event loop and write in a thread use the two halves)."""
        job_id, status, updated_at, data = columns[0], columns[4], columns[6], columns[7]
        with self.db.transaction() as conn:
            if owner is not None:
                cursor = conn.execute(
                    "UPDATE research_jobs SET status = ?, updated_at = ?, data = ?"
                    " WHERE id = ? AND lease_owner = ?",
                    (status, updated_at, data, job_id, owner),
                )
                if cursor.rowcount != 1:
                    raise LeaseLost(f"research job {job_id} is no longer held by {owner}")
                return
            conn.execute(
                "INSERT INTO research_jobs (id, tenant, question, depth, status, created_at,"
                " updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE"
                " SET status = excluded.status, updated_at = excluded.updated_at,"
                " data = excluded.data",
                columns,
            )

    def get(self, job_id: str, tenant: str | None = None) -> ResearchJob:
        """The job with this id.

        Args:
            job_id: the id; without ``tenant``, a unique prefix of it is enough (the CLI).
            tenant: only this tenant's jobs exist (exact ids only: another tenant's job is
                "not found", never "forbidden").

        Raises:
            NotFoundError: no job, or the prefix is ambiguous.
            ValidationError: the id is not valid text (bytes that are not UTF-8).
        """
        job_id = require_clean_text(job_id, "the job id")
        if tenant is not None:
            rows = self.db.read(
                "SELECT data FROM research_jobs WHERE id = ? AND tenant = ?", (job_id, tenant)
            )
            if not rows:
                raise NotFoundError(f"no research job {job_id!r}")
            return ResearchJob.model_validate_json(rows[0][0])
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

    def status(self, job_id: str) -> JobStatus | None:
        """The job's status (one column read), None if there is no such job."""
        rows = self.db.read("SELECT status FROM research_jobs WHERE id = ?", (job_id,))
        return JobStatus(rows[0][0]) if rows else None

    def list(
        self, limit: int = 50, *, offset: int = 0, tenant: str | None = None
    ) -> list[tuple[str, str, str, str, str]]:
        """(id, status, depth, created_at, question) of the newest jobs first.

        Args:
            limit: at most this many.
            offset: skip the newest ``offset`` first (paging).
            tenant: only this tenant's jobs (None: every job, the local CLI's view).
        """
        where, params = ("WHERE tenant = ? ", [tenant]) if tenant is not None else ("", [])
        rows = self.db.read(
            "SELECT id, status, depth, created_at, question FROM research_jobs "
            f"{where}ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [(str(a), str(b), str(c), str(d), str(e)) for a, b, c, d, e in rows]

    def count(self, tenant: str | None = None) -> int:
        """How many jobs (of ``tenant``) there are."""
        if tenant is None:
            rows = self.db.read("SELECT COUNT(*) FROM research_jobs")
        else:
            rows = self.db.read("SELECT COUNT(*) FROM research_jobs WHERE tenant = ?", (tenant,))
        return int(rows[0][0])

    # -- report versions ---------------------------------------------------------------------

    def keep_version(self, job: ResearchJob) -> None:
        """Keep ``job`` as it is now as the version ``job.report_version`` of its report (a
        refresh is about to replace it); kept once: a second keep of one version changes
        nothing."""
        generated = job.report.generated_at.isoformat() if job.report is not None else None
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO research_report_versions (job_id, version, saved_at, generated_at,"
                " data) VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_id, version) DO NOTHING",
                (
                    job.id,
                    job.report_version,
                    utcnow().isoformat(),
                    generated,
                    job.model_dump_json(),
                ),
            )

    def mark_checked(self, job_id: str, at: datetime) -> bool:
        """Record that the job's searches were rerun for what is new at ``at``; False (and
        nothing recorded) while a run holds the job: its save must not be overwritten."""
        owner = new_owner("check")
        if not self.claim(job_id, owner, time.time(), 30.0, any_status=True):
            return False
        try:
            job = self.get(job_id)
            job.checked_at = at
            self.save(job, owner=owner)
        finally:
            self.release(job_id, owner)
        return True

    def versions(self, job_id: str) -> builtins.list[tuple[int, str, str | None]]:
        """(version, saved_at, generated_at) of the job's earlier report versions, oldest
        first (the current version is the job itself)."""
        rows = self.db.read(
            "SELECT version, saved_at, generated_at FROM research_report_versions"
            " WHERE job_id = ? ORDER BY version",
            (job_id,),
        )
        return [(int(v), str(s), None if g is None else str(g)) for v, s, g in rows]

    def version(self, job_id: str, version: int, tenant: str | None = None) -> ResearchJob:
        """The job as it was at report ``version`` (its current version: the job itself;
        ``job_id`` and ``tenant`` as :meth:`get` takes them).

        Raises:
            NotFoundError: no such job or version.
        """
        job = self.get(job_id, tenant)
        if version == job.report_version:
            return job
        rows = self.db.read(
            "SELECT data FROM research_report_versions WHERE job_id = ? AND version = ?",
            (job.id, version),
        )
        if not rows:
            kept = [v for v, _, _ in self.versions(job.id)] + [job.report_version]
            raise NotFoundError(
                f"job {job.id} has no report version {version} (it has {', '.join(map(str, kept))})"
            )
        return ResearchJob.model_validate_json(rows[0][0])

    # -- leases ------------------------------------------------------------------------------

    def claimable(
        self, now: float, limit: int = 10, *, tenant_limit: int | None = None
    ) -> builtins.list[str]:
        """Ids of runnable jobs whose lease is free or expired, in a fair order across
        tenants: one job of each tenant in turn, the tenant with the fewest jobs running
        first, then the one whose turn came longest ago (a worker's claim records it), then
        the one whose oldest job waits longest; each tenant's own jobs oldest first. A tenant
        already running ``tenant_limit`` jobs gets none (one running fewer: one)."""
        rows = self.db.read(
            f"SELECT id, tenant FROM research_jobs WHERE status IN ({_RUNNABLE_SQL})"
            " AND (lease_until IS NULL OR lease_until < ?) ORDER BY created_at, id LIMIT ?",
            (now, 2000),
        )
        if not rows:
            return []
        running = self.running_by_tenant(now)
        queues: dict[str, builtins.list[str]] = {}
        for job_id, tenant in rows:
            queues.setdefault(str(tenant), []).append(str(job_id))
        turns = {
            str(t): float(at)
            for t, at in self.db.read("SELECT tenant, last_claim FROM research_turns")
        }
        # sorted() is stable: among equals, the tenant whose oldest job waits longest.
        order = sorted(queues, key=lambda t: (running.get(t, 0), turns.get(t, -1.0)))
        if tenant_limit is not None:  # each tenant: as many as it may still start
            order = [t for t in order if running.get(t, 0) < tenant_limit]
            for t in order:
                del queues[t][tenant_limit - running.get(t, 0) :]
        picked: builtins.list[str] = []
        for turn in range(max((len(queues[t]) for t in order), default=0)):
            picked += [queues[t][turn] for t in order if turn < len(queues[t])]
            if len(picked) >= limit:
                break
        return picked[:limit]

    def running_by_tenant(self, now: float) -> dict[str, int]:
        """How many runnable jobs each tenant has under a live lease (running somewhere)."""
        rows = self.db.read(
            f"SELECT tenant, COUNT(*) FROM research_jobs WHERE status IN ({_RUNNABLE_SQL})"
            " AND lease_until >= ? GROUP BY tenant",
            (now,),
        )
        return {str(t): int(n) for t, n in rows}

    def unfinished(self, tenant: str) -> int:
        """How many of ``tenant``'s jobs have not ended (queued or running)."""
        rows = self.db.read(
            f"SELECT COUNT(*) FROM research_jobs WHERE tenant = ? AND status IN ({_RUNNABLE_SQL})",
            (tenant,),
        )
        return int(rows[0][0])

    def claim(
        self,
        job_id: str,
        owner: str,
        now: float,
        lease_s: float,
        *,
        any_status: bool = False,
        steal_from: str | None = None,
        tenant_limit: int | None = None,
    ) -> bool:
        """Take (or extend) the lease of a job; True if ``owner`` holds it now.

        One conditional UPDATE: of two workers racing for a job, exactly one wins.

        Args:
            job_id: the job.
            owner: who claims it.
            now: the time (epoch seconds).
            lease_s: how long the lease lasts unless renewed.
            any_status: claim a FAILED or CANCELLED job too (a person resuming it).
            steal_from: a holder known to be dead (:func:`owner_is_dead`): its lease is
                taken over before it expires.
            tenant_limit: claim it only while its tenant runs fewer jobs than this (other
                jobs under a live lease), checked in the same UPDATE; a claim made so
                records the tenant's turn (:meth:`claimable` serves tenants in turn).
        """
        status = "" if any_status else f" AND status IN ({_RUNNABLE_SQL})"
        params: builtins.list[Any] = [owner, now + lease_s, job_id, now, owner, steal_from or owner]
        share = ""
        if tenant_limit is not None:
            share = (
                " AND (SELECT COUNT(*) FROM research_jobs AS other"
                " WHERE other.tenant = research_jobs.tenant AND other.id <> research_jobs.id"
                f" AND other.status IN ({_RUNNABLE_SQL}) AND other.lease_until >= ?) < ?"
            )
            params += [now, tenant_limit]
        with self.db.transaction() as conn:
            cursor = conn.execute(
                f"UPDATE research_jobs SET lease_owner = ?, lease_until = ? WHERE id = ?{status}"
                " AND (lease_until IS NULL OR lease_until < ? OR lease_owner = ?"
                f" OR lease_owner = ?){share}",
                tuple(params),
            )
            won = bool(cursor.rowcount == 1)
            if won and tenant_limit is not None:
                conn.execute(
                    "INSERT INTO research_turns (tenant, last_claim) SELECT tenant, ?"
                    " FROM research_jobs WHERE id = ? ON CONFLICT (tenant)"
                    " DO UPDATE SET last_claim = excluded.last_claim",
                    (now, job_id),
                )
            return won

    def lease_of(self, job_id: str) -> str | None:
        """Who holds the job's lease (None: nobody, or no such job)."""
        rows = self.db.read("SELECT lease_owner FROM research_jobs WHERE id = ?", (job_id,))
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def held_on_this_host(self) -> builtins.list[tuple[str, str]]:
        """(id, owner) of runnable jobs whose lease is held by a process of this host."""
        rows = self.db.read(
            f"SELECT id, lease_owner FROM research_jobs WHERE status IN ({_RUNNABLE_SQL})"
            " AND lease_owner LIKE ?",
            (socket.gethostname().replace("%", "_") + "/%",),
        )
        return [(str(a), str(b)) for a, b in rows]

    def renew(self, job_id: str, owner: str, now: float, lease_s: float) -> bool:
        """Extend ``owner``'s lease; False if it does not hold it any more."""
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE research_jobs SET lease_until = ? WHERE id = ? AND lease_owner = ?",
                (now + lease_s, job_id, owner),
            )
            return bool(cursor.rowcount == 1)

    def release(self, job_id: str, owner: str) -> None:
        """Give the lease up (if ``owner`` still holds it)."""
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE research_jobs SET lease_owner = NULL, lease_until = NULL"
                " WHERE id = ? AND lease_owner = ?",
                (job_id, owner),
            )

    # -- cancelling --------------------------------------------------------------------------

    def request_cancel(self, job_id: str) -> bool:
        """Flag a runnable job for cancelling; False if it has already ended."""
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE research_jobs SET cancel_requested = 1"
                f" WHERE id = ? AND status IN ({_RUNNABLE_SQL})",
                (job_id,),
            )
            return bool(cursor.rowcount == 1)

    def cancel(self, job_id: str, tenant: str | None = None) -> ResearchJob:
        """Cancel a job: flagged, so that its run stops at the next step and ends CANCELLED;
        a job nobody runs (queued, or its process died) ends CANCELLED here and now. A job
        that has already ended is returned unchanged.

        Raises:
            NotFoundError: no such job (of ``tenant``).
        """
        job = self.get(job_id, tenant)
        if job.status.terminal or not self.request_cancel(job.id):
            return self.get(job.id, tenant)
        owner = new_owner("cancel")
        holder = self.lease_of(job.id)
        steal = holder if owner_is_dead(holder) else None
        if self.claim(job.id, owner, time.time(), 30.0, steal_from=steal):
            try:
                job = self.get(job.id, tenant)
                job.status = JobStatus.CANCELLED
                job.error = "cancelled"
                self.save(job, owner=owner)
                event = ProgressEvent(job_id=job.id, stage=job.status, message="cancelled")
                self.add_event(
                    job.id, lambda seq: event.model_copy(update={"seq": seq}).model_dump_json()
                )
            finally:
                self.release(job.id, owner)
        return self.get(job.id, tenant)

    def clear_cancel(self, job_id: str) -> None:
        """Forget a cancel request (a person resumes the cancelled job)."""
        with self.db.transaction() as conn:
            conn.execute("UPDATE research_jobs SET cancel_requested = 0 WHERE id = ?", (job_id,))

    def cancel_requested(self, job_id: str) -> bool:
        """Whether someone asked to cancel the job."""
        rows = self.db.read("SELECT cancel_requested FROM research_jobs WHERE id = ?", (job_id,))
        return bool(rows and rows[0][0])

    # -- progress events ---------------------------------------------------------------------

    def add_event(self, job_id: str, make: Any) -> int:
        """Store the job's next event; ``make(seq) -> str`` renders it with its number.

        Only the job's lease holder (or a canceller of an unclaimed job) writes events, so
        numbering inside the transaction does not race.
        """
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM research_events WHERE job_id = ?", (job_id,)
            ).fetchone()
            seq = int(row[0]) + 1 if row else 1
            conn.execute(
                "INSERT INTO research_events (job_id, seq, data) VALUES (?, ?, ?)",
                (job_id, seq, str(make(seq))),
            )
        return seq

    def events(
        self, job_id: str, after: int = 0, limit: int = 500
    ) -> builtins.list[tuple[int, str]]:
        """(seq, JSON) of the job's events after ``after``, in order (``after`` is held to
        0..2**53 and ``limit`` to 1..10,000: what reaches the store fits its BIGINT)."""
        after = min(max(int(after), 0), MAX_EVENT_SEQ)
        limit = min(max(int(limit), 1), 10_000)
        rows = self.db.read(
            "SELECT seq, data FROM research_events WHERE job_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (job_id, after, limit),
        )
        return [(int(s), str(d)) for s, d in rows]
