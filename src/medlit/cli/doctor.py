"""``medlit doctor``: whether this set-up can answer, one line per thing checked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from medlit.cli.app import app, build_settings, console, print_json, printable, run, run_async

if TYPE_CHECKING:
    from medlit.doctor import DoctorItem

__all__ = ["doctor_command"]

_MARKS = {"ok": "[green]ok  [/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]", "skip": "skip"}


def _line(item: DoctorItem) -> str:
    from rich.markup import escape

    text = f"{_MARKS[item.status]} {item.area:<9} {escape(printable(item.name))}"
    if item.detail:
        text += f": {escape(printable(item.detail))}"
    if item.fix and item.status != "ok":
        text += f"\n               [dim]→ {escape(printable(item.fix))}[/]"
    return text


@app.command("doctor")
@run
def doctor_command(
    self_test: Annotated[
        bool,
        typer.Option(
            "--self-test",
            help="Also answer five questions of the bundled sample corpus end to end and "
            "score them against their labels (a few minutes on a local model).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Check the set-up: sources, the LLM of each task, the store and the embedder.

    Exits 1 when something medlit needs is unusable.
    """
    from medlit.doctor import run_doctor

    report = run_async(run_doctor(build_settings(), self_test=self_test))
    if as_json:
        print_json({"usable": report.usable, "items": report.model_dump(mode="json")["items"]})
    else:
        for item in report.items:
            console.print(_line(item), highlight=False)
        console.print(
            "usable" if report.usable else "[red]not usable[/]: fix the FAIL lines above",
            highlight=False,
        )
    if not report.usable:
        raise typer.Exit(1)
