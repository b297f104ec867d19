"""Small pieces of raw ASGI shared by the service's middlewares."""

from __future__ import annotations

from starlette.types import Message, Receive, Scope

__all__ = ["header", "replay_body"]


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of the request header ``name`` (lower-case bytes), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


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
