"""``medlit config``: the settings in force, where data lives, and what is configured."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from medlit.cli.app import app, build_settings, console, print_json, run

__all__ = ["config_command"]


def _describe(settings: Any) -> dict[str, Any]:
    from medlit.llm import LLMClient, LLMTask

    llm = LLMClient(settings.llm)
    return {
        "home": str(settings.home),
        "database": settings.database_label,
        "pubmed": {
            "base_url": settings.pubmed.base_url,
            "api_key": "set" if settings.pubmed.api_key else "not set",
            "email": settings.pubmed.email or "not set",
            "requests_per_second": settings.pubmed.rate,
        },
        "europepmc": {"base_url": settings.europepmc.base_url},
        "default_source": settings.search.default_source,
        "llm": {task.value: (llm.model_for(task) or "not configured") for task in LLMTask},
    }


@app.command("config")
@run
def config_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every setting as JSON (secrets masked).")
    ] = False,
) -> None:
    """Show the settings in force (from MEDLIT_* variables), with secrets masked."""
    settings = build_settings()
    if as_json:
        print_json(settings.model_dump(mode="json"))
        return
    from rich.table import Table

    summary = _describe(settings)
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for key, value in summary.items():
        if isinstance(value, dict):
            for sub, item in value.items():
                table.add_row(f"{key}.{sub}", str(item))
        else:
            table.add_row(key, str(value))
    console.print(table)
    console.print(
        "[dim]Every setting: medlit config --json. Set them with MEDLIT_<SECTION>_<FIELD>, "
        "e.g. MEDLIT_PUBMED_API_KEY.[/]"
    )
