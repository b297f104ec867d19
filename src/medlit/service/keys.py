"""API keys: who may call the service, and as which tenant.

A key is shown once, when created (``medlit keys create --tenant NAME``), and stored only as the
SHA-256 of the token: the token carries 256 random bits, so a fast hash is enough (there is
nothing to brute-force, unlike a password). A key looks like ``mlk_<key id>_<secret>``; the key
id is public (``medlit keys list`` shows it, logs may name it), the secret never leaves the
caller.

A key may carry an expiry (``medlit keys create --expires-in 30d``); past it, the key is refused
with a 401 that says so. Once any key has been created, the store remembers it for good (table
``api_key_marks``): the service then requires a key on every request, even after the last key
is revoked or has expired. Without that mark, a server whose last key was revoked would open to
anyone who could reach it.

The tables live in the store (component ``keys``) and use only SQL that SQLite and PostgreSQL
both run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from medlit.errors import NotFoundError, ValidationError
from medlit.storage.base import Connection, Migration

__all__ = [
    "ApiKey",
    "KeyStore",
    "hash_token",
    "parse_duration",
    "parse_expiry",
    "valid_tenant_name",
]

_TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_TOKEN_PREFIX = "mlk_"


def _create_keys(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS api_keys (
            key_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            key_hash TEXT NOT NULL UNIQUE,
            label TEXT NOT NULL DEFAULT '',
            rate_per_minute BIGINT,
            created_at DOUBLE PRECISION NOT NULL,
            revoked_at DOUBLE PRECISION
        )"""
    )


_KEYS_CREATED = "keys_created"


def _expiry_and_marks(conn: Connection) -> None:
    conn.execute("ALTER TABLE api_keys ADD COLUMN expires_at DOUBLE PRECISION")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS api_key_marks (
            name TEXT PRIMARY KEY,
            at DOUBLE PRECISION NOT NULL
        )"""
    )
    # A database that already holds keys (revoked ones too) has had keys created.
    conn.execute(
        "INSERT INTO api_key_marks (name, at) SELECT ?, created_at FROM api_keys "
        "ORDER BY created_at LIMIT 1",
        (_KEYS_CREATED,),
    )


MIGRATIONS = [_create_keys, _expiry_and_marks]


class KeysStore(Protocol):
    """What the key store needs of a store (``SqliteStore`` provides it)."""

    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply a component's pending migrations."""
        ...

    def transaction(self) -> AbstractContextManager[Any]:
        """A write transaction."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query."""
        ...


_DURATION_RE = re.compile(r"^\s*(\d{1,6})\s*([mhdw])\s*$", re.IGNORECASE)
_UNIT_S = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``90m``, ``12h``, ``30d`` or ``2w``.

    Raises:
        ValidationError: anything else (or zero).
    """
    match = _DURATION_RE.match(text or "")
    if match is None or int(match.group(1)) == 0:
        raise ValidationError(
            f"invalid duration {text!r}: write a whole number and a unit, m (minutes), "
            "h (hours), d (days) or w (weeks), e.g. 30d"
        )
    return int(match.group(1)) * _UNIT_S[match.group(2).lower()]


def parse_expiry(text: str) -> float:
    """The Unix time of an ISO date or date-time (``2027-01-31``: the start of that day,
    UTC; a time without a zone is UTC).

    Raises:
        ValidationError: not an ISO date or date-time.
    """
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValidationError(
            f"invalid date {text!r}: write an ISO date or date-time, e.g. 2027-01-31 or "
            "2027-01-31T18:00+01:00"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def hash_token(token: str) -> str:
    """The stored form of a key: hex SHA-256 of the whole token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def valid_tenant_name(name: str) -> str:
    """The tenant name if acceptable (lowercase letters, digits, ``-``, ``_``; ≤ 63 chars).

    Raises:
        ValidationError: any other name.
    """
    if not _TENANT_RE.match(name or ""):
        raise ValidationError(
            f"invalid tenant name {name!r}: use 1-63 lowercase letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class ApiKey:
    """One API key as stored (never the token itself)."""

    key_id: str
    tenant: str
    label: str
    rate_per_minute: int | None
    created_at: float
    revoked_at: float | None
    expires_at: float | None = None

    @property
    def active(self) -> bool:
        """Not revoked (it may still have expired: :meth:`expired`)."""
        return self.revoked_at is None

    def expired(self, now: float | None = None) -> bool:
        """Whether the key's expiry has passed (at ``now``, default: the current time)."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at

    def usable(self, now: float | None = None) -> bool:
        """Neither revoked nor expired."""
        return self.active and not self.expired(now)


_COLS = "key_id, tenant, label, rate_per_minute, created_at, revoked_at, expires_at"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        key_id=str(row[0]),
        tenant=str(row[1]),
        label=str(row[2] or ""),
        rate_per_minute=None if row[3] is None else int(row[3]),
        created_at=float(row[4]),
        revoked_at=None if row[5] is None else float(row[5]),
        expires_at=None if row[6] is None else float(row[6]),
    )


class KeyStore:
    """API keys in the store.

    Args:
        store: the database (the ``keys`` migrations are applied on construction).
    """

    def __init__(self, store: KeysStore) -> None:
        self._store = store
        store.apply_migrations("keys", MIGRATIONS)

    def create(
        self,
        tenant: str,
        *,
        label: str = "",
        rate_per_minute: int | None = None,
        expires_at: float | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key for ``tenant``; returns it and the token (shown once, never stored).

        Args:
            tenant: the tenant the key acts for.
            label: a note (who holds the key).
            rate_per_minute: the key's own request rate (None: the service's default).
            expires_at: when the key stops working (Unix time; None: never).

        Raises:
            ValidationError: a bad tenant name, a negative rate or an expiry in the past.
        """
        valid_tenant_name(tenant)
        if rate_per_minute is not None and rate_per_minute < 0:
            raise ValidationError("the rate limit must be 0 (none) or more requests a minute")
        now = time.time()
        if expires_at is not None and expires_at <= now:
            raise ValidationError("the expiry must be in the future")
        key_id = secrets.token_hex(6)
        token = f"{_TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO api_keys (key_id, tenant, key_hash, label, rate_per_minute, "
                "created_at, revoked_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                (key_id, tenant, hash_token(token), label, rate_per_minute, now, expires_at),
            )
            conn.execute(
                "INSERT INTO api_key_marks (name, at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                (_KEYS_CREATED, now),
            )
        return ApiKey(key_id, tenant, label, rate_per_minute, now, None, expires_at), token

    def lookup(self, token: str) -> ApiKey | None:
        """The key whose token this is, revoked or expired alike, or None (no such key)."""
        if not token.startswith(_TOKEN_PREFIX) or len(token) > 200:
            return None
        rows = self._store.read(
            f"SELECT {_COLS} FROM api_keys WHERE key_hash = ?", (hash_token(token),)
        )
        return _key(rows[0]) if rows else None

    def verify(self, token: str) -> ApiKey | None:
        """The usable key (neither revoked nor expired) whose token this is, or None."""
        key = self.lookup(token)
        return key if key is not None and key.usable() else None

    def ever_created(self) -> bool:
        """Whether any key was ever created in this store (revoked and expired keys count:
        once true, the service requires a key on every request for good)."""
        rows = self._store.read(
            "SELECT count(*) FROM api_key_marks WHERE name = ?", (_KEYS_CREATED,)
        )
        return bool(rows and int(rows[0][0]))

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """Every key, oldest first."""
        sql = f"SELECT {_COLS} FROM api_keys"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        return [_key(r) for r in self._store.read(sql + " ORDER BY created_at, key_id")]

    def active_count(self) -> int:
        """Keys neither revoked nor expired."""
        rows = self._store.read(
            "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (time.time(),),
        )
        return int(rows[0][0]) if rows else 0

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key (it stops working at once, or within ``key_cache_s`` in a server).

        Raises:
            NotFoundError: no active key has this id.
        """
        with self._store.transaction() as conn:
            cur = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (time.time(), key_id),
            )
            changed = cur.rowcount
        if not changed:
            raise NotFoundError(f"no active API key with id {key_id!r}")
        rows = self._store.read(f"SELECT {_COLS} FROM api_keys WHERE key_id = ?", (key_id,))
        return _key(rows[0])
