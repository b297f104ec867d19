"""uvicorn's HTTP/1.1 protocol (httptools), with a response's writes sent as one.

uvicorn writes a response's status line and headers to the socket as soon as the app sends
``http.response.start``, and the body when it sends ``http.response.body``: two ``send``
system calls for one cached answer, and on the client's side two wake-ups and two reads. Here
the connection's transport holds what is written in one turn of the event loop and sends it
together at the end of that turn (as Node's ``socket.cork`` does until ``process.nextTick``):
a response the app sends in one go (every JSON reply) leaves in one system call, and a stream
(an SSE event, a page of a report) still leaves as soon as each part is written, a loop turn
later at most. Closing the connection first sends what is held.

Hand-written: uvicorn has no option for it. The subclass only wraps the transport it is given,
so uvicorn's parsing, keep-alive, flow control and error handling are its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["CorkedHttpToolsProtocol", "CorkedTransport"]


class CorkedTransport:
    """``transport``, whose writes in one turn of ``loop`` leave together at its end.

    Everything but :meth:`write`, :meth:`writelines`, :meth:`close`, :meth:`write_eof` and
    :meth:`abort` is the transport's own (flow control, ``is_closing``, extra info).
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(bytes(data))

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CorkedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol over a :class:`CorkedTransport`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CorkedTransport(transport, self.loop))  # type: ignore[arg-type]
