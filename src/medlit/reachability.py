"""Whether a failed connection can recover by trying again.

A host name that does not resolve (no network, a typo in a base URL) or a server that refuses
connections (nothing listens on the port) will not answer a retry half a second later: medlit
fails at once and says which host, instead of spending its retries on it. Timeouts, resets and
5xx answers are still retried by their callers.

:func:`unreachable_reason` reads the exception and its causes (httpx wraps httpcore's error,
which wraps the socket's; the openai SDK wraps httpx's), by type first and by the resolver's
words where only the message survives.
"""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

__all__ = [
    "DOES_NOT_RESOLVE",
    "REFUSES_CONNECTIONS",
    "connect_failure",
    "host_of",
    "unreachable_reason",
]

DOES_NOT_RESOLVE = "does not resolve"
REFUSES_CONNECTIONS = "refuses connections"

# What getaddrinfo's errors say on Linux (glibc, musl), macOS and Windows.
_DNS_WORDS = (
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname provided",
    "no address associated with hostname",
    "getaddrinfo failed",
    "name does not resolve",
)
_REFUSED_WORDS = ("connection refused", "errno 111", "winerror 10061")


def unreachable_reason(exc: BaseException) -> str | None:
    """:data:`DOES_NOT_RESOLVE`, :data:`REFUSES_CONNECTIONS`, or None when ``exc`` (or an
    exception it was raised from) is neither, so a retry may help."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return DOES_NOT_RESOLVE
        if isinstance(current, ConnectionRefusedError):
            return REFUSES_CONNECTIONS
        text = str(current).lower()
        if any(words in text for words in _DNS_WORDS):
            return DOES_NOT_RESOLVE
        if any(words in text for words in _REFUSED_WORDS):
            return REFUSES_CONNECTIONS
        current = current.__cause__ or current.__context__
    return None


def host_of(url: str | None) -> str:
    """The host (and port, when given) of ``url``, as a person would name it."""
    if not url:
        return "?"
    parts = urlsplit(url if "//" in url else f"//{url}")
    host = parts.hostname or url
    return f"{host}:{parts.port}" if parts.port else host


async def connect_failure(url: str, timeout_s: float = 1.0) -> str | None:
    """:data:`DOES_NOT_RESOLVE` or :data:`REFUSES_CONNECTIONS` when a TCP connection to
    ``url``'s host cannot be opened for one of those reasons; None when it opens, or when the
    answer is not known within ``timeout_s`` (a slow network is not an unreachable host)."""
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(parts.hostname, port)
    except TimeoutError:
        return None
    except OSError as exc:
        return unreachable_reason(exc)
    writer.close()
    return None
