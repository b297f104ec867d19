"""The Typer application object and what every command shares: settings, consoles, errors."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, TypeVar

import typer
import typer.core
from rich.console import Console

from medlit.config import Settings
from medlit.errors import ConfigError, MedlitError

__all__ = [
    "CLI_EXCEPTIONS",
    "app",
    "build_settings",
    "console",
    "err_console",
    "joined",
    "print_error",
    "print_json",
    "printable",
    "run",
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
console = Console()
err_console = Console(stderr=True)


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


#: Below this terminal width a table keeps its long text (a title, a question) in one column
#: with the short facts on a line under it: as columns of their own they left the long text
#: sixteen characters a line in 80 columns, a word or two per line.
WIDE_TABLE_MIN = 120


def detail_cell(text: str, *details: str) -> str:
    """A table cell in Rich markup: ``text``, then each non-empty detail dim on a line under
    it (both escaped): the long text keeps its column's room in a narrow terminal."""
    from rich.markup import escape

    return escape(text) + "".join(f"\n[dim]{escape(d)}[/]" for d in details if d)


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


def joined(words: list[str]) -> str:
    """The words of a :func:`words_argument` as one text."""
    return " ".join(words)


def build_settings(**overrides: Any) -> Settings:
    """Settings from the environment; a bad value becomes a one-line ConfigError."""
    import os

    from pydantic import ValidationError as PydanticValidationError
    from pydantic_settings import SettingsError

    from medlit.log import configure_logging

    for name, value in os.environ.items():
        if name.upper().startswith("MEDLIT_") and not value.isprintable():
            from medlit.text import require_clean_text

            try:
                require_clean_text(value, name)
            except MedlitError as exc:
                raise ConfigError(f"invalid setting: {exc}") from None
    try:
        settings = Settings(**overrides)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"invalid setting {where}: {message}") from None
    except SettingsError as exc:
        # A complex field (MEDLIT_LLM_TASKS, MEDLIT_LLM_PRICES, ...) that is not JSON at all.
        raise ConfigError(_settings_error_line(exc)) from None
    configure_logging(settings.log_level)
    return settings


def _settings_error_line(exc: Exception) -> str:
    """Name the variable whose JSON pydantic-settings could not parse (it names only the
    section, e.g. ``llm``)."""
    import os
    from typing import get_origin

    from pydantic import BaseModel

    text = str(exc)
    section = text.split('"')[1] if text.count('"') >= 2 else ""
    info = Settings.model_fields.get(section)
    fields = getattr(info.annotation, "model_fields", {}) if info is not None else {}
    prefix = f"MEDLIT_{section.upper()}_"
    for name, value in sorted(os.environ.items()):
        sub = fields.get(name.upper().removeprefix(prefix).lower())
        if not name.upper().startswith(prefix) or sub is None:
            continue
        kind = sub.annotation
        if get_origin(kind) in (dict, list) or (
            isinstance(kind, type) and issubclass(kind, BaseModel)
        ):
            try:
                json.loads(value)
            except ValueError as error:
                return f"invalid setting {name}: not valid JSON ({error})"
    return (
        f"invalid setting {section or '?'}: a MEDLIT_{section.upper()}_... value is not valid JSON"
    )


def printable(message: object) -> str:
    """``message`` safe for a terminal: undecodable bytes and control characters (other than
    the line breaks of a message written on several lines on purpose) shown as escapes."""
    text = str(message)
    try:  # bytes that were not UTF-8 (surrogate-escaped) are shown as \xNN
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that was never a byte
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(ch if ch.isprintable() or ch == "\n" else repr(ch)[1:-1] for ch in text)


def print_error(message: object) -> None:
    """One ``error:`` line on stderr (markup in the message is printed as is)."""
    from rich.markup import escape

    err_console.print(f"[bold red]error:[/] {escape(printable(message))}", highlight=False,
                      soft_wrap=True)  # fmt: skip


def print_json(data: Any) -> None:
    """Machine output: JSON on stdout, nothing else."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


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


def report_bug(exc: Exception) -> None:
    """A bug: the user still gets one line (the traceback goes to the debug log)."""
    from medlit.log import get_logger

    get_logger("cli").debug("unexpected_error", exc_info=exc)
    print_error(
        f"unexpected {type(exc).__name__}: {exc} (a bug in medlit; "
        "MEDLIT_LOG_LEVEL=debug shows where)"
    )


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from a synchronous command."""
    return asyncio.run(coro)
