"""The thin ``medlit ask`` entry reads what the Typer command reads, and leaves the rest to it."""

from __future__ import annotations

import pytest

from medlit.cli import _typer_app
from medlit.cli.ask import SourceOption
from medlit.cli.ask_run import OPTIONS, SOURCES, AskLine, read_command_line


def test_the_thin_entry_knows_the_options_of_the_typer_command() -> None:
    import typer.main

    command = typer.main.get_command(_typer_app()).commands["ask"]  # type: ignore[attr-defined]
    declared = {
        name: (param.name, not getattr(param, "is_flag", False))
        for param in command.params
        if param.param_type_name == "option"
        for name in param.opts
    }
    assert declared == OPTIONS
    assert tuple(SourceOption) == SOURCES


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["does", "aspirin", "work"], AskLine(("does", "aspirin", "work"))),
        (
            ["q?", "--source", "local", "--json", "-s", "s1"],
            AskLine(("q?",), session="s1", source="local", as_json=True),
        ),
        (
            ["--no-cache", "q?", "-v", "--session=s2"],
            AskLine(("q?",), "s2", None, True, False, True),
        ),
    ],
)
def test_a_plain_ask_is_read(args: list[str], line: AskLine) -> None:
    assert read_command_line(args) == line


@pytest.mark.parametrize(
    "args",
    [
        [],  # no question: Typer says so
        ["--help"],
        ["q?", "-h"],
        ["q?", "--source", "medline"],  # not a source
        ["q?", "--session"],  # no value
        ["q?", "--session", "--json"],
        ["q?", "--session="],
        ["q?", "-s=s1"],
        ["q?", "--json=yes"],
        ["q?", "--json", "--json"],  # given twice
        ["q?", "-vs", "s1"],  # short options run together
        ["q?", "--", "-v"],
        ["q?", "-"],
        ["q?", "--sources", "local"],
    ],
)
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert read_command_line(args) is None
