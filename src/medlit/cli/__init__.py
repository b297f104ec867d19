"""Command-line interface: ``medlit ask | search | corpus | cache | research | serve | keys | mcp
| doctor``.

Command modules import heavy dependencies inside the command functions, so that a cached
``medlit ask`` starts fast; and a process that is ``medlit ask ...`` itself registers the ask
command alone (:func:`_commands_to_load`): Typer builds every registered command before it
runs one (20-30 ms for all of them). Before Typer, :func:`main` tries the thin entry of
:mod:`medlit.cli.ask_run`, which answers a plain ``medlit ask`` without loading Typer at all;
the Typer application (:data:`app`) is built when first asked for.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medlit.cli.app import app

__all__ = ["app", "main"]

#: The command modules, each registering its commands on :data:`app`, in the order of help.
COMMAND_MODULES = (
    "ask",
    "cache",
    "config",
    "corpus",
    "db",
    "doctor",
    "mcp",
    "research",
    "search",
    "serve",
)


def _commands_to_load(argv: list[str]) -> tuple[str, ...]:
    """Every command module, except in a process that is the CLI itself (the ``medlit``
    console script or ``python -m medlit``) running ``medlit ask``: the ask command alone then
    (its help and errors are the same; ``medlit --help`` still lists them all)."""
    entry = os.path.basename(argv[0]) if argv else ""
    is_cli = entry in ("medlit", "medlit.exe") or (
        entry == "__main__.py" and os.path.basename(os.path.dirname(argv[0])) == "medlit"
    )
    if is_cli and len(argv) > 1 and argv[1] == "ask":
        return ("ask",)
    return COMMAND_MODULES


def _typer_app() -> Any:
    """The Typer application with its commands registered (on the first call)."""
    from medlit.cli.app import app

    for name in _commands_to_load(sys.argv):
        importlib.import_module(f"medlit.cli.{name}")  # registers its commands (once)
    # Importing the module medlit.cli.app made it this package's ``app``: the application is.
    globals()["app"] = app
    return app


def _thin(argv: list[str]) -> bool:
    """Whether this process may be a plain ``medlit ask`` (:func:`main` tries it first)."""
    return len(argv) > 1 and argv[1] == "ask"


def __getattr__(name: str) -> Any:
    if name == "app":
        return _typer_app()
    raise AttributeError(f"module 'medlit.cli' has no attribute {name!r}")


if not _thin(sys.argv):
    _typer_app()  # as before: ``medlit.cli.app`` is the application, commands registered


def main() -> None:
    """Console-script entry point: a plain ``medlit ask`` without Typer, else Typer; a usage
    error is one line on stderr too (exit 2), and so is a bug met before a command runs
    (exit 1)."""
    if _thin(sys.argv):
        from medlit.cli.ask_run import thin_main

        if (thin := thin_main(sys.argv)) is not None:
            sys.exit(thin)
    from medlit.cli.app import CLI_EXCEPTIONS, err_console, print_error, report_bug

    try:
        code = _typer_app()(standalone_mode=False)
    except CLI_EXCEPTIONS as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is already shown
            sys.exit(2)
        if not hasattr(exc, "format_message"):  # Abort
            err_console.print("aborted")
            sys.exit(1)
        ctx = getattr(exc, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        print_error(f"{exc.format_message()}{where}")
        sys.exit(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:  # outside a command (its own handler prints the same)
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # a bug outside a command (reading the command line): one line
        report_bug(exc)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
