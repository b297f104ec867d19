"""Command-line interface: ``medlit ask | search | corpus | cache | research | serve | keys | mcp
| doctor``.

Command modules import heavy dependencies inside the command functions, so that a cached
``medlit ask`` starts fast.
"""

from __future__ import annotations

from medlit.cli import ask as _ask  # noqa: F401  (registers commands)
from medlit.cli import cache as _cache  # noqa: F401
from medlit.cli import config as _config  # noqa: F401
from medlit.cli import corpus as _corpus  # noqa: F401
from medlit.cli import db as _db  # noqa: F401
from medlit.cli import doctor as _doctor  # noqa: F401
from medlit.cli import mcp as _mcp  # noqa: F401
from medlit.cli import research as _research  # noqa: F401
from medlit.cli import search as _search  # noqa: F401
from medlit.cli import serve as _serve  # noqa: F401
from medlit.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point: a usage error is one line on stderr too (exit 2), and so is
    a bug met before a command runs (exit 1)."""
    import sys

    from medlit.cli.app import CLI_EXCEPTIONS, err_console, print_error, report_bug

    try:
        code = app(standalone_mode=False)
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
