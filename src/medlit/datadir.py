"""The data directory (``MEDLIT_HOME``): checked once, with one clear error when it is unusable.

Everything medlit keeps lives under ``settings.home``: the cache database and its indexes, the
local corpus, research jobs, chat sessions, the rate-limit state. Each component that opens a
file there calls :func:`require_data_dir` first, so a home that is a regular file, ``/dev/null``,
read-only or impossible to create gives one :class:`~medlit.errors.StorageError` (exit 7) that
names the directory and says why, instead of an ``OSError`` deep inside sqlite3.
"""

from __future__ import annotations

import os
from pathlib import Path

from medlit.errors import StorageError

__all__ = ["require_data_dir"]


def require_data_dir(home: Path) -> Path:
    """``home``, created if missing, once it is known to be a writable directory.

    Raises:
        StorageError: ``home`` is not a directory, cannot be created, or is read-only.
    """
    where = f"the data directory {home} (MEDLIT_HOME)"
    if home.exists() and not home.is_dir():
        raise StorageError(f"{where} is not a directory; point MEDLIT_HOME at a directory")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"{where} cannot be created: {exc.strerror or exc}") from None
    if not os.access(home, os.W_OK | os.X_OK):
        raise StorageError(
            f"{where} is read-only; medlit keeps its caches, jobs and rate-limit state there "
            "and needs to write them: point MEDLIT_HOME at a writable directory"
        )
    return home
