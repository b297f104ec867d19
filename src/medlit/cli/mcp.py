"""``medlit mcp``: the MCP server on stdin/stdout (for assistant apps)."""

from __future__ import annotations

from typing import Annotated

import typer

from medlit.cli.app import app, build_settings, run

__all__ = ["mcp_command"]


@app.command("mcp")
@run
def mcp_command(
    tenant: Annotated[
        str, typer.Option("--tenant", help="Whose answers, sessions and jobs these are.")
    ] = "default",
    workers_research: Annotated[
        int, typer.Option("--workers-research", min=1, max=32, help="Research jobs run at once.")
    ] = 1,
) -> None:
    """Serve medlit's tools over MCP on stdio, for assistant apps.

    Tools: search_literature, ask, start_research, research_status.
    """
    from medlit.mcp_server import run_stdio
    from medlit.service.keys import valid_tenant_name

    valid_tenant_name(tenant)
    run_stdio(build_settings(), tenant=tenant, research_workers=workers_research)
