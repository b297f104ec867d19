"""The Typer application object and what every command shares: settings, consoles, errors."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
import typer.core

from medlit.cli.shared import (
    WIDE_TABLE_MIN,
    build_settings,
    console,
    detail_cell,
    err_console,
    joined,
    print_error,
    print_json,
    printable,
    report_bug,
    run_async,
)
from medlit.errors import MedlitError

__all__ = [
    "CLI_EXCEPTIONS",
    "WIDE_TABLE_MIN",
    "app",
    "build_settings",
    "console",
    "detail_cell",
    "err_console",
    "joined",
    "print_error",
    "print_json",
    "printable",
    "report_bug",
    "run",
    "run_async",
    "words_argument",
]

T = TypeVar("T")

# Typer's own exceptions (an exit code, a usage error); older Typer raises Click's, and then
# has imported it (a Typer that vendors Click does not: importing it would cost every command).
CLI_EXCEPTIONS: tuple[type[Exception], ...] = (typer.Exit, typer.Abort, typer.TyperException)
if (_click := sys.modules.get("click")) is not None:  # pragma: no cover - Typer before 0.2x
    CLI_EXCEPTIONS += (_click.exceptions.Exit, _click.exceptions.Abort, _click.ClickException)

# Help's type column in words, not Python's type names: a flag shows none ("--json", not
# "--json <bool>"), an argument its name alone ("QUESTION...", not "<list[str]>"), a value its
# kind ("--limit INTEGER"), a choice its values ("pubmed|europepmc|local|all").
_TYPE_WORDS = {"int": "INTEGER", "float": "NUMBER", "str": "TEXT", "path": "PATH", "Path": "PATH"}


def _plain_type(original: Callable[..., str | None]) -> Callable[..., str | None]:
    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if self.param_type_name == "argument":  # its name says it
            return None
        if self.metavar is not None:
            return str(self.metavar)
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        shown = original(self, ctx)
        if not shown:
            return shown
        many = shown.endswith("...")
        label = shown.removesuffix("...").strip("<>")
        label = _TYPE_WORDS.get(label, label)
        return f"{label}..." if many else label

    return display_type_rich


for _param in (typer.core.TyperOption, typer.core.TyperArgument):
    _param.display_type_rich = _plain_type(_param.display_type_rich)  # type: ignore[method-assign]


def reflowed(text: str) -> str:
    """Help prose as paragraphs that wrap at the terminal's width: the line breaks of a
    docstring's source are spaces, blank lines stay paragraph breaks, and a paragraph marked
    ``\\b`` (Click's "keep as written") and whatever follows ``\\f`` are left alone."""
    shown, cut, hidden = inspect.cleandoc(text).partition("\f")
    paragraphs = [
        part if part.startswith("\b") else " ".join(part.split()) for part in shown.split("\n\n")
    ]
    return "\n\n".join(paragraphs) + cut + hidden


def _reflowing(original: Callable[..., None]) -> Callable[..., None]:
    # Typer keeps a docstring's single line breaks, so a command's help broke where its
    # source did ("...and the time" / "("3 PubMed calls...")" mid-phrase) and again at the
    # terminal's width; reflowed, it wraps only where the terminal needs it.
    def format_help(self: Any, ctx: Any, formatter: Any) -> None:
        if self.help:
            self.help = reflowed(self.help)
        original(self, ctx, formatter)

    return format_help


for _command in (typer.core.TyperCommand, typer.core.TyperGroup):
    _command.format_help = _reflowing(_command.format_help)  # type: ignore[method-assign]

app = typer.Typer(
    name="medlit",
    help="Biomedical literature answers from PubMed, with real citations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        from medlit import __version__

        sys.stdout.write(f"medlit {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_show_version,
            help="Print medlit's version and exit.",
        ),
    ] = False,
) -> None:
    """Biomedical literature answers from PubMed, with real citations."""


def default_source_help() -> str:
    """The default of ``--source`` as help shows it: the setting's default value and the
    variable that changes it (help is built before the settings are read)."""
    from medlit.config import SearchSettings

    default = SearchSettings.model_fields["default_source"].default
    return f"{default}; MEDLIT_SEARCH_DEFAULT_SOURCE changes it"


def words_argument(help: str, name: str = "QUESTION") -> Any:
    """A free-text argument given in quotes or as bare words (``medlit ask does aspirin
    work`` asks "does aspirin work"): join what it receives with :func:`joined`."""
    return typer.Argument(help=f"{help} Quotes are optional.", metavar=name)


def run(func: Callable[..., T]) -> Callable[..., T]:
    """Decorate a command so MedlitErrors become one line on stderr and an exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return func(*args, **kwargs)
        except MedlitError as exc:
            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise typer.Exit(130) from None
        except CLI_EXCEPTIONS:
            raise  # typer's own ways out (an exit code, a usage error)
        except Exception as exc:
            report_bug(exc)
            raise typer.Exit(1) from None

    return wrapper
