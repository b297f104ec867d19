"""API keys: who may call the service, and as which tenant.

A key is shown once, when created (``medlit keys create --tenant NAME``), and stored only as the
SHA-256 of the token: the token carries 256 random bits, so a fast hash is enough (there is
nothing to brute-force, unlike a password). A key looks like ``mlk_<key id>_<secret>``; the key
id is public (``medlit keys list`` shows it, logs may name it), the secret never leaves the
caller.

The table lives in the store (component ``keys``) and uses only SQL that SQLite and PostgreSQL
both run.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from medlit.errors import NotFoundError, ValidationError
from medlit.storage.base import Migration

__all__ = ["ApiKey", "KeyStore", "hash_token", "valid_tenant_name"]

_TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_TOKEN_PREFIX = "mlk_"


def _create_keys(conn: sqlite3.Connection) -> None:
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


MIGRATIONS = [_create_keys]


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

    @property
    def active(self) -> bool:
        """Not revoked."""
        return self.revoked_at is None


_COLS = "key_id, tenant, label, rate_per_minute, created_at, revoked_at"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        key_id=str(row[0]),
        tenant=str(row[1]),
        label=str(row[2] or ""),
        rate_per_minute=None if row[3] is None else int(row[3]),
        created_at=float(row[4]),
        revoked_at=None if row[5] is None else float(row[5]),
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
        self, tenant: str, *, label: str = "", rate_per_minute: int | None = None
    ) -> tuple[ApiKey, str]:
        """A new key for ``tenant``; returns it and the token (shown once, never stored).

        Raises:
            ValidationError: a bad tenant name or a negative rate.
        """
        valid_tenant_name(tenant)
        if rate_per_minute is not None and rate_per_minute < 0:
            raise ValidationError("the rate limit must be 0 (none) or more requests a minute")
        key_id = secrets.token_hex(6)
        token = f"{_TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        now = time.time()
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO api_keys (key_id, tenant, key_hash, label, rate_per_minute, "
                "created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (key_id, tenant, hash_token(token), label, rate_per_minute, now),
            )
        return ApiKey(key_id, tenant, label, rate_per_minute, now, None), token

    def verify(self, token: str) -> ApiKey | None:
        """The active key whose token this is, or None."""
        if not token.startswith(_TOKEN_PREFIX) or len(token) > 200:
            return None
        rows = self._store.read(
            f"SELECT {_COLS} FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL",
            (hash_token(token),),
        )
        return _key(rows[0]) if rows else None

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """Every key, oldest first."""
        sql = f"SELECT {_COLS} FROM api_keys"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        return [_key(r) for r in self._store.read(sql + " ORDER BY created_at, key_id")]

    def active_count(self) -> int:
        """Keys not revoked."""
        rows = self._store.read("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL")
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
