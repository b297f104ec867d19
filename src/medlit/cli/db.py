"""``medlit db migrate | copy``: prepare the shared PostgreSQL store and move a cache into it.

Command lines::

    medlit db migrate                       # the configured store: every component's tables
    medlit db copy --from sqlite --to postgresql://...   [--json]

``copy`` reads the embedded SQLite store (``--from sqlite`` is the one under ``MEDLIT_HOME``;
a path names another file) and writes into PostgreSQL (``--to``, default
``MEDLIT_DATABASE_URL``). It is idempotent: run it again and nothing changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from medlit.cli.app import app, build_settings, console, err_console, print_json, run
from medlit.errors import ValidationError

if TYPE_CHECKING:
    from medlit.storage.base import Store

__all__ = ["db_app"]

db_app = typer.Typer(
    help="The store's database: apply migrations, copy SQLite into PostgreSQL.",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")


def migrate_components(store: Store) -> dict[str, int]:
    """Apply every component's migrations to ``store``; returns how many ran per component.

    The core tables are migrated when a store opens; the components' tables (research jobs,
    chat sessions, API keys, remembered cache verdicts) are created here, so a new database is
    complete before any replica starts.
    """
    from medlit.agent.memory import MIGRATIONS as MEMORY_MIGRATIONS
    from medlit.cache.verify import MIGRATIONS as VERIFY_MIGRATIONS
    from medlit.research.jobs import MIGRATIONS as JOB_MIGRATIONS
    from medlit.service.keys import MIGRATIONS as KEY_MIGRATIONS

    return {
        "research": store.apply_migrations("research", JOB_MIGRATIONS),
        "memory": store.apply_migrations("memory", MEMORY_MIGRATIONS),
        "keys": store.apply_migrations("keys", KEY_MIGRATIONS),
        "verify": store.apply_migrations("verify", VERIFY_MIGRATIONS),
    }


@db_app.command("migrate")
@run
def migrate(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Create or upgrade every table of the configured store (safe to run at any time)."""
    from medlit.storage import open_store

    settings = build_settings()
    with open_store(settings) as store:
        applied = migrate_components(store)
    data: dict[str, Any] = {"database": settings.database_label, "applied": applied}
    if as_json:
        print_json(data)
        return
    ran = sum(applied.values())
    console.print(f"{settings.database_label}: up to date ({ran} migrations applied now)")


@db_app.command("copy")
@run
def copy(
    source: Annotated[
        str,
        typer.Option("--from", help="sqlite (the store under MEDLIT_HOME) or a SQLite file."),
    ] = "sqlite",
    target: Annotated[
        str | None,
        typer.Option("--to", help="PostgreSQL URL (default: MEDLIT_DATABASE_URL)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Copy answers, evidence, memo, counters, sessions and jobs from SQLite into PostgreSQL."""
    from medlit.config import mask_url
    from medlit.storage.sqlite import SqliteStore

    settings = build_settings()
    url = target or (
        settings.database_url.get_secret_value() if settings.database_url is not None else None
    )
    if not url:
        raise ValidationError("give --to postgresql://... or set MEDLIT_DATABASE_URL")
    if url.split(":", 1)[0] not in ("postgresql", "postgres"):
        raise ValidationError(f"--to must be a postgresql:// URL, not {mask_url(url)!r}")
    path = settings.db_path if source == "sqlite" else Path(source).expanduser()
    if not path.is_file():
        raise ValidationError(f"no SQLite store at {path}")
    try:
        from medlit.storage.copy import copy_store
        from medlit.storage.postgres import PostgresStore
    except ImportError as exc:
        from medlit.errors import ConfigError

        raise ConfigError(
            "copying needs the PostgreSQL driver: pip install 'medlit[postgres]'"
        ) from exc

    def progress(table: str, n: int) -> None:
        if not as_json:
            err_console.print(f"  {table}: {n:,} rows read", highlight=False)

    with (
        SqliteStore(path, cache=settings.cache) as src,
        PostgresStore(url, cache=settings.cache, pool_size=2) as dst,
    ):
        migrate_components(src)  # an old file may lack a component's newest columns
        migrate_components(dst)
        report = copy_store(src, dst, progress=progress)
    data = {
        "from": str(path),
        "to": mask_url(url),
        "read": report.read,
        "inserted": report.inserted,
    }
    if as_json:
        print_json(data)
        return
    from rich.table import Table

    table = Table(title=f"{path} → {mask_url(url)}")
    table.add_column("table")
    table.add_column("read", justify="right")
    table.add_column("inserted", justify="right")
    for name, n in report.read.items():
        table.add_row(name, f"{n:,}", f"{report.inserted.get(name, 0):,}")
    console.print(table)
    console.print("[dim]Rows already in PostgreSQL were kept; running the copy again is safe.[/]")
