"""Small pieces of raw ASGI shared by the service's middlewares."""

from __future__ import annotations

from starlette.types import Message, Receive, Scope

__all__ = ["BodyTooLarge", "header", "read_body", "replay_body"]


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of the request header ``name`` (lower-case bytes), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


class BodyTooLarge(Exception):
    """The request body grew past the limit :func:`read_body` was given."""


async def read_body(receive: Receive, max_bytes: int | None = None) -> bytes | None:
    """The request body, read whole; None if the client disconnected first.

    Raises:
        BodyTooLarge: the body grew past ``max_bytes`` (reading stops there).
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` (already read whole) as the request's one message,
    then whatever ``receive`` gives (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
