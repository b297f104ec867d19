"""A small SSE reader for the tests: ``(id, event, data)`` triples from an httpx stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

__all__ = ["read_events"]


def read_events(response: httpx.Response, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Parse ``text/event-stream`` lines into dicts with ``id``, ``event`` and ``data``
    (decoded JSON); comments (pings) are skipped. Stops after ``limit`` events."""
    fields: dict[str, str] = {}
    data: list[str] = []
    count = 0
    for line in response.iter_lines():
        if not line:
            if data:
                yield {"id": fields.get("id"), "event": fields.get("event", "message"),
                       "data": json.loads("\n".join(data))}  # fmt: skip
                count += 1
                if limit is not None and count >= limit:
                    return
            fields, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        else:
            fields[name] = value
