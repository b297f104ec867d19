"""Command-line interface: ``medlit ask | search | corpus | cache | research | serve | keys | mcp``.

Command modules import heavy dependencies inside the command functions, so that a cached
``medlit ask`` starts fast.
"""

from __future__ import annotations

from medlit.cli import ask as _ask  # noqa: F401  (registers commands)
from medlit.cli import cache as _cache  # noqa: F401
from medlit.cli import config as _config  # noqa: F401
from medlit.cli import corpus as _corpus  # noqa: F401
from medlit.cli import mcp as _mcp  # noqa: F401
from medlit.cli import research as _research  # noqa: F401
from medlit.cli import search as _search  # noqa: F401
from medlit.cli import serve as _serve  # noqa: F401
from medlit.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app()
