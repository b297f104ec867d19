"""What the LLM client learnt about a server, kept for the next process.

Today one fact: a server that answers a streamed request with the whole completion in one body
(it does not stream). The next ask then asks it without streaming, rather than opening a
stream it will not get. Notes are keyed by provider, base URL and model, and expire after
:data:`NOTE_TTL_S`, so a server upgraded meanwhile is tried again. The file is small JSON under
the data directory; a file that cannot be read or written costs only the note (logged).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from medlit.log import get_logger

if TYPE_CHECKING:
    from medlit.llm.tasks import Route

__all__ = ["NOTE_TTL_S", "SERVER_NOTES_FILE", "ServerNotes", "server_key"]

SERVER_NOTES_FILE = "llm-servers.json"
NOTE_TTL_S = 7 * 24 * 3600.0

log = get_logger("llm")


def server_key(route: Route) -> str:
    """``provider base_url model``: one server and model."""
    return f"{route.provider} {route.base_url or '-'} {route.model or '-'}"


class ServerNotes:
    """Servers known not to stream, by :func:`server_key`, in memory and in ``path``."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._no_stream: dict[str, float] | None = None

    def _load(self) -> dict[str, float]:
        if self._no_stream is None:
            self._no_stream = {}
            if self.path is not None and self.path.exists():
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    notes = data.get("no_stream", {}) if isinstance(data, dict) else {}
                    self._no_stream = {
                        str(k): float(v) for k, v in notes.items() if isinstance(v, int | float)
                    }
                except (OSError, ValueError, AttributeError) as exc:
                    log.warning("llm_server_notes_unreadable", path=str(self.path), error=str(exc))
        return self._no_stream

    def streams(self, route: Route) -> bool:
        """False when the server was seen not to stream within :data:`NOTE_TTL_S`."""
        noted = self._load().get(server_key(route))
        return noted is None or time.time() - noted > NOTE_TTL_S

    def no_stream(self, route: Route) -> None:
        """Note that the server does not stream (and keep the note in the file)."""
        notes = self._load()
        key = server_key(route)
        fresh = key not in notes
        notes[key] = time.time()
        if fresh:
            log.info("llm_server_does_not_stream", route=route.label)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".llm-servers.")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"no_stream": notes}, out, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("llm_server_notes_unwritable", path=str(self.path), error=str(exc))
