"""The service's HTTP protocol sends a response written in one go in one write, and a stream
as it is written: uvicorn's own httptools protocol, driven by real HTTP bytes over a transport
that records what reaches the socket."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from medlit.service.http_protocol import CorkedHttpToolsProtocol, CorkedTransport

REQUEST = b"POST /v1/ask HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}"


class RecordingTransport(asyncio.Transport):
    """A socket's transport that keeps each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def json_app(scope: Any, receive: Any, send: Any) -> None:
    """A JSON reply sent as ASGI apps send one: start, then the whole body."""
    await receive()
    body = b'{"answer": "yes"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"17")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def stream_app(first_sent: asyncio.Event, go_on: asyncio.Event) -> Any:
    """An event stream: the first event, then (once ``go_on`` is set) two more; ``first_sent``
    is set once the first is sent."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for n in range(3):
            event = b"data: %d\n\n" % n
            await send({"type": "http.response.body", "body": event, "more_body": True})
            first_sent.set()
            await go_on.wait()
        await send({"type": "http.response.body", "body": b""})

    return app


def connect(
    app: Any, protocol_class: type = CorkedHttpToolsProtocol
) -> tuple[RecordingTransport, Any]:
    """A connection through ``protocol_class`` that has received one request."""
    config = Config(app=app, lifespan="off", log_level="warning")
    protocol = protocol_class(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    transport = RecordingTransport()
    protocol.connection_made(transport)
    protocol.data_received(REQUEST)
    return transport, protocol


async def until_complete(protocol: Any) -> None:
    """Until the response is complete and its last writes are flushed."""
    for _ in range(500):
        if protocol.cycle is not None and protocol.cycle.response_complete:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0)  # the flush scheduled by the last write


async def serve_one(
    app: Any, protocol_class: type = CorkedHttpToolsProtocol
) -> tuple[RecordingTransport, Any]:
    """One request through ``protocol_class``, answered; the transport and the protocol."""
    transport, protocol = connect(app, protocol_class)
    await until_complete(protocol)
    return transport, protocol


async def test_a_json_reply_leaves_in_one_write() -> None:
    transport, _ = await serve_one(json_app)

    assert len(transport.writes) == 1, transport.writes
    head, _, body = transport.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"content-length: 17" in head
    assert body == b'{"answer": "yes"}'


async def test_uvicorns_own_protocol_writes_head_and_body_apart() -> None:
    """What the corked protocol saves: the plain one writes twice for the same reply."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    transport, _ = await serve_one(json_app, HttpToolsProtocol)

    assert len(transport.writes) == 2


async def test_a_stream_leaves_as_it_is_written() -> None:
    first_sent, go_on = asyncio.Event(), asyncio.Event()
    transport, protocol = connect(stream_app(first_sent, go_on))
    await asyncio.wait_for(first_sent.wait(), 5)
    await asyncio.sleep(0)  # a loop turn: the first event is out while the stream goes on

    sent = b"".join(transport.writes)
    assert b"text/event-stream" in sent and b"data: 0" in sent
    assert b"data: 1" not in sent

    go_on.set()
    await until_complete(protocol)
    sent = b"".join(transport.writes)
    assert all(b"data: %d" % n in sent for n in range(3))
    assert sent.endswith(b"0\r\n\r\n")  # the chunked stream's end


async def test_close_sends_what_is_held_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    closing = RecordingTransport()
    corked = CorkedTransport(closing, loop)
    corked.write(b"head")
    corked.write(b"body")
    corked.close()
    assert closing.writes == [b"headbody"] and closing.closed

    aborting = RecordingTransport()
    corked = CorkedTransport(aborting, loop)
    corked.write(b"head")
    corked.abort()
    await asyncio.sleep(0)  # the flush that was scheduled finds nothing
    assert aborting.writes == [] and aborting.aborted


async def test_writes_in_separate_turns_leave_separately() -> None:
    loop = asyncio.get_running_loop()
    inner = RecordingTransport()
    corked = CorkedTransport(inner, loop)
    corked.write(b"one")
    await asyncio.sleep(0)
    corked.write(b"two")
    corked.write(b"")
    await asyncio.sleep(0)
    assert inner.writes == [b"one", b"two"]
    assert corked.get_extra_info("peername") == ("127.0.0.1", 5000)  # the rest is the socket's
