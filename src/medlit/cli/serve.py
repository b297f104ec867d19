"""``medlit serve`` (the HTTP service) and ``medlit keys create | list | revoke``."""

from __future__ import annotations

from typing import Annotated

import typer

from medlit.cli.app import app, build_settings, console, err_console, print_json, run

__all__ = ["keys_app", "serve_command"]

keys_app = typer.Typer(help="API keys of the HTTP service (one tenant per key).")
app.add_typer(keys_app, name="keys", no_args_is_help=True)


@app.command("serve")
@run
def serve_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on.", min=0, max=65535)
    ] = 8000,
    workers_research: Annotated[
        int | None,
        typer.Option("--workers-research", min=1, max=32, help="Research jobs run at once."),
    ] = None,
) -> None:
    """Serve medlit over HTTP: the web page at /, the API under /v1 (docs at /docs)."""
    from medlit.service.server import serve

    settings = build_settings()
    serve(
        settings,
        host=host,
        port=port,
        research_workers=workers_research,
        notify=lambda line: err_console.print(line, highlight=False, soft_wrap=True),
    )


@keys_app.command("create")
@run
def keys_create(
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant the key acts for.")],
    label: Annotated[str, typer.Option("--label", help="A note: who holds the key.")] = "",
    rate_limit: Annotated[
        int | None,
        typer.Option("--rate-limit", min=0, help="Requests a minute (0: none; default: settings)."),
    ] = None,
    expires_in: Annotated[
        str | None,
        typer.Option(
            "--expires-in", help="The key stops working after this long: 90m, 12h, 30d, 2w."
        ),
    ] = None,
    expires_at: Annotated[
        str | None,
        typer.Option(
            "--expires-at",
            help="The key stops working at this ISO date or date-time (UTC unless it says).",
        ),
    ] = None,
) -> None:
    """Create an API key; it is printed once and stored only hashed."""
    import time

    from medlit.errors import ValidationError
    from medlit.service.keys import KeyStore, parse_duration, parse_expiry
    from medlit.storage import open_store

    if expires_in is not None and expires_at is not None:
        raise ValidationError("give --expires-in or --expires-at, not both")
    expiry = None
    if expires_in is not None:
        expiry = time.time() + parse_duration(expires_in)
    elif expires_at is not None:
        expiry = parse_expiry(expires_at)
    with open_store(build_settings()) as store:
        key, token = KeyStore(store).create(
            tenant, label=label, rate_per_minute=rate_limit, expires_at=expiry
        )
    until = "" if key.expires_at is None else f", expires {_when(key.expires_at)} UTC"
    err_console.print(
        f"key {key.key_id} for tenant {key.tenant!r}{until} (shown once; store it now):",
        highlight=False,
    )
    print(token)


def _when(t: float | None) -> str:
    import datetime as dt

    return "" if t is None else dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M")


@keys_app.command("list")
@run
def keys_list(
    include_revoked: Annotated[bool, typer.Option("--all", help="Show revoked keys too.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List API keys (ids and tenants; never the keys themselves)."""
    from medlit.service.keys import KeyStore
    from medlit.storage import open_store

    with open_store(build_settings()) as store:
        key_store = KeyStore(store)
        keys = key_store.list(include_revoked=include_revoked)
        ever = key_store.ever_created()
    if as_json:
        print_json([k.__dict__ for k in keys])
        return
    if not keys:
        if ever:
            err_console.print(
                "no active API keys: keys were created here, so the service answers every "
                "request with 401 until you create one (medlit keys create --tenant NAME)"
            )
        else:
            err_console.print("no API keys: the service runs as tenant 'default' on loopback only")
        return
    from rich.table import Table

    table = Table(header_style="bold")
    for column in ("key id", "tenant", "label", "rate/min", "created", "expires", "revoked"):
        table.add_column(column)
    for k in keys:
        rate = "default" if k.rate_per_minute is None else str(k.rate_per_minute)
        expires = _when(k.expires_at) + (" (expired)" if k.expired() else "")
        table.add_row(
            k.key_id,
            k.tenant,
            k.label,
            rate,
            _when(k.created_at),
            expires,
            _when(k.revoked_at),
        )
    console.print(table)


@keys_app.command("revoke")
@run
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (from keys list).")],
) -> None:
    """Revoke an API key (a running server stops accepting it within seconds)."""
    from medlit.service.keys import KeyStore
    from medlit.storage import open_store

    with open_store(build_settings()) as store:
        key = KeyStore(store).revoke(key_id)
    console.print(f"revoked key {key.key_id} of tenant {key.tenant!r}")
