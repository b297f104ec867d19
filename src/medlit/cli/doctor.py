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
        first, *more = item.fix.splitlines()
        text += f"\n               [dim]→ {escape(printable(first))}[/]"
        for line in more:  # a fix of several lines (what to set, with examples), all of it
            text += f"\n                 [dim]{escape(printable(line))}[/]"
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

    Exits 1 when something medlit needs is unusable (0 when only the online sources are out
    of reach and the local corpus has documents: usable offline).
    """
    from medlit.doctor import run_doctor

    report = run_async(run_doctor(build_settings(), self_test=self_test))
    if as_json:
        print_json(
            {
                "usable": report.usable,
                "offline": report.offline,
                "items": report.model_dump(mode="json")["items"],
            }
        )
    else:
        for item in report.items:
            console.print(_line(item), highlight=False)
        if report.offline:
            verdict = "[yellow]usable offline[/]: ask with --source local"
        elif report.usable:
            verdict = "usable"
        else:
            verdict = "[red]not usable[/]: fix the FAIL lines above"
        console.print(verdict, highlight=False)
    if not report.usable:
        raise typer.Exit(1)
