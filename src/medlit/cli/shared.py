"""What every command shares, without Typer: the consoles, the settings, one-line errors and
JSON output. A cached ``medlit ask`` runs on these alone (:mod:`medlit.cli.ask_run`), so they
import neither Typer nor the settings' model until used."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console

from medlit.errors import ConfigError, MedlitError

if TYPE_CHECKING:
    from medlit.config import Settings

__all__ = [
    "WIDE_TABLE_MIN",
    "build_settings",
    "console",
    "detail_cell",
    "err_console",
    "joined",
    "print_error",
    "print_json",
    "printable",
    "report_bug",
    "run_async",
]

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)

#: Below this terminal width a table keeps its long text (a title, a question) in one column
#: with the short facts on a line under it: as columns of their own they left the long text
#: sixteen characters a line in 80 columns, a word or two per line.
WIDE_TABLE_MIN = 120


def detail_cell(text: str, *details: str) -> str:
    """A table cell in Rich markup: ``text``, then each non-empty detail dim on a line under
    it (both escaped): the long text keeps its column's room in a narrow terminal."""
    from rich.markup import escape

    return escape(text) + "".join(f"\n[dim]{escape(d)}[/]" for d in details if d)


def joined(words: list[str]) -> str:
    """The words of a free-text argument (``medlit ask does aspirin work``) as one text."""
    return " ".join(words)


def build_settings(**overrides: Any) -> Settings:
    """Settings from the environment; a bad value becomes a one-line ConfigError."""
    import os

    from pydantic import ValidationError as PydanticValidationError

    from medlit.log import configure_logging

    for name, value in os.environ.items():
        if name.upper().startswith("MEDLIT_") and not value.isprintable():
            from medlit.text import require_clean_text

            try:
                require_clean_text(value, name)
            except MedlitError as exc:
                raise ConfigError(f"invalid setting: {exc}") from None
    from medlit.config import Settings

    try:
        settings = Settings(**overrides)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"invalid setting {where}: {message}") from None
    except Exception as exc:
        from pydantic_settings import SettingsError  # here: loaded only when one is raised

        if not isinstance(exc, SettingsError):
            raise
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

    from medlit.config import Settings

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
