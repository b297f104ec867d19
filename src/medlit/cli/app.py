"""The Typer application object and what every command shares: settings, consoles, errors."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

from medlit.config import Settings
from medlit.errors import ConfigError, MedlitError

__all__ = ["app", "build_settings", "console", "err_console", "print_json", "run"]

T = TypeVar("T")

app = typer.Typer(
    name="medlit",
    help="Biomedical literature answers from PubMed, with real citations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


def build_settings(**overrides: Any) -> Settings:
    """Settings from the environment; a bad value becomes a one-line ConfigError."""
    from pydantic import ValidationError as PydanticValidationError

    from medlit.log import configure_logging

    try:
        settings = Settings(**overrides)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"invalid setting {where}: {first['msg']}") from None
    configure_logging(settings.log_level)
    return settings


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
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from a synchronous command."""
    return asyncio.run(coro)
