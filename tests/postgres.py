"""A real PostgreSQL 16 with pgvector for the tests, from the ``pgserver`` wheel.

One server per test session (started in a temporary directory in about 3 s, stopped at the
end); each test gets a fresh schema of its own (``pg_url``), so tests stay independent and
nothing is left behind. Tests that need PostgreSQL skip, with the reason, only when no server
can be started.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest

__all__ = ["fresh_schema", "pg_module_url", "pg_server", "pg_url", "schema_url"]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a session-wide PostgreSQL server with the ``vector`` extension installed."""
    pytest.importorskip("psycopg", reason="needs psycopg (pip install '.[postgres]')")
    try:
        with warnings.catch_warnings():
            # pgserver's import asks platformdirs for a runtime dir (warns when XDG's is unset).
            warnings.simplefilter("ignore")
            import pgserver
    except ImportError:
        pytest.skip("needs the pgserver wheel for a test PostgreSQL (pip install pgserver)")
    # Not under pytest's basetemp: other pytest runs of the same user prune old basetemps,
    # which would pull the data directory from under a running server.
    data = Path(tempfile.mkdtemp(prefix="medlit-pg-"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(data, cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as exc:  # any failure to start means: no PostgreSQL here
        pytest.skip(f"no PostgreSQL could be started with pgserver: {exc}")
    try:
        yield server.get_uri()
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server.cleanup()
        shutil.rmtree(data, ignore_errors=True)


def schema_url(base: str, schema: str) -> str:
    """``base`` with ``search_path`` set to ``schema`` (then ``public``, where pgvector is)."""
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-csearch_path={schema},public')}"


@contextmanager
def fresh_schema(server: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema (dropped on exit)."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(server, schema)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema (dropped after the test)."""
    with fresh_schema(pg_server) as url:
        yield url


@pytest.fixture(scope="module")
def pg_module_url(pg_server: str) -> Iterator[str]:
    """Like ``pg_url``, one schema for a whole module (e.g. service processes it shares)."""
    with fresh_schema(pg_server) as url:
        yield url
