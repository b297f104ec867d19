"""A fake OpenAI-compatible chat-completions server on loopback, for tests.

It speaks the real wire format (``POST /v1/chat/completions``, ``GET /v1/models``), so the
official ``openai`` SDK and ``huggingface_hub``'s ``AsyncInferenceClient`` talk to it exactly as
they would to vLLM, Ollama or OpenAI. Use it instead of mocks::

    from tests.fakes.llm_server import FakeLLMServer, Reply

    with FakeLLMServer() as server:               # starts on 127.0.0.1, a free port
        settings.llm.base_url = server.base_url   # "http://127.0.0.1:PORT/v1"
        settings.llm.model = "fake-model"

        server.enqueue("plain text reply")                      # scripted replies, in order
        server.enqueue(Reply.rate_limited(retry_after="0.2"))   # 429 + Retry-After
        server.enqueue(Reply.server_error())                    # 500
        server.enqueue(Reply.slow(2.0, "late"))                 # answers after 2 s (timeouts)
        server.enqueue(Reply.held(gate, "late"))                # answers once gate.set()
        server.enqueue(Reply.reject_response_format())          # 400 on response_format
        server.enqueue(Reply('{"a": 1}', prompt_tokens=7, completion_tokens=3))
        server.enqueue(Reply.streamed("word by word", chunk_delay_s=0.05))  # to stream: true
        server.enqueue(Reply.scored({"SAME": 0.9, "DIFF": 0.08}))  # with token logprobs

        ... run the code under test ...

        server.history[0].json["messages"]    # what the client sent
        server.history[0].json["model"]
        server.history[0].response_format     # dict or None
        server.history[0].status              # what the fake answered (200, 429...)

When the queue is empty the server asks ``server.responder(request_json)`` for the reply text
(or a :class:`Reply`). Agent and research tests plug a function there that answers according to
the prompt (e.g. valid JSON for the schema in ``request_json["response_format"]``)::

    server.responder = lambda req: '{"queries": ["aspirin stroke"]}'

Helpers for responders: ``json_schema_of(req)`` (the schema the client asked for, from
``response_format`` or, when the server refused it, from the system prompt), ``schema_name_of(req)``
and ``last_user_message(req)``.

The default responder answers 500 with the message ``"fake LLM server: no scripted reply and no
responder"``, so a test that forgot to script a reply fails loudly rather than hanging.

Token logprobs: a reply built with ``Reply.scored({token: probability, ...})`` answers with its
most likely token, and a request that asks for ``logprobs``/``top_logprobs`` gets them in the
OpenAI format (``choices[0].logprobs.content[0].top_logprobs``, at most ``top_logprobs``
alternatives). ``server.supports_logprobs = False`` makes the server ignore the request and send
``"logprobs": null``, like providers that do not offer them.

``server.streams = False`` makes the server ignore ``stream: true`` and answer with the whole
completion as one JSON body (``application/json``), as some servers and proxies do.

``server.unsupported_response_formats = {"json_schema"}`` makes the server behave like one that
does not support structured output: every request with that ``response_format`` type gets a 400
(without consuming the queue).

Model names: ``GET /v1/models`` lists ``models`` (``["fake-model"]`` unless given) and, by
default, a completion asked under any name is served, as llama.cpp's server does (it lists its
one model by the file path it was loaded from, e.g.
``FakeLLMServer(models=["/models/qwen2.5-0.5b-instruct-q4_k_m.gguf"])``, and answers whatever
name the request gives). ``server.serves_any_model = False`` makes it serve only the names it
lists, refusing any other with a 404 ``model_not_found`` in OpenAI's shape, as OpenAI, vLLM and
Ollama do (without consuming the queue).

``FakeLLMServer(flavour=...)`` (or ``server.flavour = ...``) reproduces how a real local server
answers a ``response_format`` it cannot take, with that server's status and body (without
consuming the queue):

- ``"llama_cpp"``: llama-cpp-python's server (0.3.x) refuses ``json_schema`` with a **500** whose
  body is the pydantic validation error ("Input should be 'text' or 'json_object'"), the body
  measured on the real server; ``json_object`` is taken, with or without a ``schema`` member.
- ``"ollama"``: Ollama's ``/v1`` refuses a ``json_schema`` it cannot turn into a grammar
  (``$ref``/``$defs``) with a 500 ``invalid JSON schema in format``; ``json_object`` is taken.
- ``"vllm"``: vLLM (xgrammar backend) refuses a ``json_schema`` using keywords xgrammar does not
  support (``minLength``, ``pattern``, ``maxItems``...) with a 400 in vLLM's own error shape
  (``{"object": "error", "message": ..., "code": 400}``); other schemas and ``json_object`` are
  taken.
- ``"fastapi"``: a server whose request model only allows ``text``/``json_object``, answering
  with FastAPI's default 422 ``{"detail": [...]}``.
"""

from __future__ import annotations

import json
import math
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "json_schema_of",
    "last_user_message",
    "schema_name_of",
]


@dataclass
class Reply:
    """One scripted reply: ``Reply("content")`` is a 200; the class methods build the faults."""

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    error_body: dict[str, Any] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    chunk_delay_s: float = 0.0
    stall_after: int | None = None
    stall_s: float = 0.0
    cut_after: int | None = None
    #: Answer only once this event is set (or the server stops, or the client hangs up).
    hold: threading.Event | None = None

    @classmethod
    def held(cls, gate: threading.Event, text: str = "held reply") -> Reply:
        """A 200 sent only once ``gate`` is set: a reply the test holds back for as long as it
        needs (e.g. to kill the client while it waits), however loaded the machine is.

        The handler also gives up, answering nothing, when the server stops or the client's
        connection is gone, so a held reply never outlives its client or blocks a teardown.
        """
        return cls(text=text, hold=gate)

    @classmethod
    def streamed(
        cls,
        text: str,
        *,
        chunk_delay_s: float = 0.0,
        stall_after: int | None = None,
        stall_s: float = 0.0,
    ) -> Reply:
        """A reply that, to a ``stream: true`` request, comes as one chunk per word.

        Args:
            chunk_delay_s: pause before each chunk.
            stall_after: after this many content chunks, go silent for ``stall_s`` seconds
                (an idle-timeout test); the rest follows if the client is still there.

        Set ``cut_after`` on the result to close the stream after that many content chunks,
        with no finish_reason (what llama-cpp-python does to a stream another request
        interrupts).
        """
        return cls(text=text, chunk_delay_s=chunk_delay_s, stall_after=stall_after, stall_s=stall_s)

    top_tokens: dict[str, float] | None = None

    @classmethod
    def scored(cls, probabilities: dict[str, float], *, delay_s: float = 0.0) -> Reply:
        """A one-token reply: the most likely of ``probabilities`` (token -> probability), with
        the distribution as its logprobs when the request asks for them."""
        best = max(probabilities, key=lambda t: probabilities[t])
        return cls(text=best, top_tokens=dict(probabilities), delay_s=delay_s)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1") -> Reply:
        """A 429; ``retry_after`` is the Retry-After header (seconds or an HTTP date)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(
            status=429,
            headers=headers,
            error_body=_error("Rate limit reached, please retry later.", "rate_limit_exceeded"),
        )

    @classmethod
    def server_error(cls, status: int = 500, message: str = "internal server error") -> Reply:
        """A 5xx with an OpenAI-style error body."""
        return cls(status=status, error_body=_error(message, "server_error"))

    @classmethod
    def error(cls, status: int, message: str, code: str = "invalid_request_error") -> Reply:
        """Any error status with an OpenAI-style error body (401, 404...)."""
        return cls(status=status, error_body=_error(message, code))

    @classmethod
    def slow(cls, delay_s: float, text: str = "slow reply") -> Reply:
        """A 200 sent only after ``delay_s`` seconds (to make the client time out)."""
        return cls(text=text, delay_s=delay_s)

    @classmethod
    def reject_response_format(cls) -> Reply:
        """A 400 saying the ``response_format`` is not supported."""
        return cls(
            status=400,
            error_body=_error(
                "response_format of type json_schema is not supported by this server",
                "invalid_request_error",
                param="response_format",
            ),
        )


Responder = Callable[[dict[str, Any]], "str | Reply"]


@dataclass
class RecordedRequest:
    """A request the server received, and the status it answered."""

    method: str
    path: str
    headers: dict[str, str]
    json: dict[str, Any]
    received_at: float
    status: int = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a completions request."""
        return list(self.json.get("messages", []))

    @property
    def model(self) -> str | None:
        """The requested model."""
        return self.json.get("model")

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The requested response_format, if any."""
        return self.json.get("response_format")


def json_schema_of(request_json: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for: from ``response_format``, else from the prompt."""
    fmt = request_json.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return dict(fmt.get("json_schema", {}).get("schema") or {}) or None
    for message in request_json.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str) and "schema:" in content:
            try:
                return dict(json.loads(content.split("schema:", 1)[1].strip()))
            except json.JSONDecodeError:
                return None
    return None


def schema_name_of(request_json: dict[str, Any]) -> str | None:
    """The schema's name (``QueryPlan``...) when sent as ``json_schema`` or in the prompt."""
    fmt = request_json.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        name = fmt.get("json_schema", {}).get("name")
        return str(name) if name else None
    schema = json_schema_of(request_json)
    return str(schema["title"]) if schema and "title" in schema else None


def last_user_message(request_json: dict[str, Any]) -> str:
    """The content of the last user message (what the caller asked)."""
    for message in reversed(request_json.get("messages", [])):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


_LLAMA_CPP_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': '%s', 'ctx': {'expected': "
    "\"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, in "
    "create_chat_completion\n    POST /v1/chat/completions"
)
_XGRAMMAR_UNSUPPORTED = {
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
}


def _schema_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        keys = set(node)
        for value in node.values():
            keys |= _schema_keys(value)
        return keys
    if isinstance(node, list):
        return set().union(*(_schema_keys(v) for v in node)) if node else set()
    return set()


def _flavour_refusal(flavour: str | None, fmt: dict[str, Any]) -> Reply | None:
    """How a real server of that flavour refuses this response_format (None: it takes it)."""
    kind = fmt.get("type")
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    if flavour == "llama_cpp" and kind not in ("text", "json_object"):
        body = {
            "error": {
                "message": _LLAMA_CPP_500 % kind,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        }
        return Reply(status=500, error_body=body)
    if flavour == "ollama" and kind == "json_schema" and _schema_keys(schema) & {"$ref", "$defs"}:
        body = {
            "error": {
                "message": "invalid JSON schema in format",
                "type": "api_error",
                "param": None,
                "code": None,
            }
        }
        return Reply(status=500, error_body=body)
    if flavour == "vllm" and kind == "json_schema" and _schema_keys(schema) & _XGRAMMAR_UNSUPPORTED:
        body = {
            "object": "error",
            "message": "The provided JSON schema contains features not supported by xgrammar.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
        return Reply(status=400, error_body=body)
    if flavour == "fastapi" and kind not in ("text", "json_object"):
        detail = {
            "type": "literal_error",
            "loc": ["body", "response_format", "type"],
            "msg": "Input should be 'text' or 'json_object'",
            "input": kind,
        }
        return Reply(status=422, error_body={"detail": [detail]})
    return None


def _error(message: str, code: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "param": param, "code": code}}


def _count_tokens(text: str) -> int:
    # A deterministic stand-in for a tokenizer: about one token per word.
    return len(text.split())


def _no_responder(request_json: dict[str, Any]) -> Reply:
    return Reply.server_error(message="fake LLM server: no scripted reply and no responder")


class FakeLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 with scripted replies and a request history."""

    def __init__(
        self,
        responder: Responder | None = None,
        models: list[str] | None = None,
        *,
        flavour: str | None = None,
    ) -> None:
        self.responder: Responder = responder or _no_responder
        self.models = models or ["fake-model"]
        self.history: list[RecordedRequest] = []
        self.unsupported_response_formats: set[str] = set()
        self.flavour = flavour
        self.supports_logprobs = True
        self.streams = True
        self.serves_any_model = True
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Start serving in a background thread on a free loopback port."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        # A client that keeps its keep-alive connection open must not hang stop().
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow replies still sleeping are cut short."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ending in ``/v1``."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT`` (for clients that append ``/v1/...`` themselves)."""
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting ---------------------------------------------------------------------------

    def enqueue(self, *replies: str | Reply) -> None:
        """Queue replies (plain strings become 200 completions), served first in, first out."""
        with self._lock:
            for reply in replies:
                self._queue.append(Reply(text=reply) if isinstance(reply, str) else reply)

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self._queue)

    @property
    def completions(self) -> list[RecordedRequest]:
        """The chat-completions requests received, in order."""
        return [r for r in self.history if r.path.endswith("/chat/completions")]

    def clear(self) -> None:
        """Forget the history and the queued replies."""
        with self._lock:
            self._queue.clear()
            self.history.clear()

    # -- serving (called from the handler threads) -------------------------------------------

    def _next_reply(self, record: RecordedRequest) -> Reply:
        if not self.serves_any_model and record.model not in self.models:
            return Reply.error(
                404,
                f"The model `{record.model}` does not exist or you do not have access to it.",
                "model_not_found",
            )
        fmt = record.response_format
        if fmt and fmt.get("type") in self.unsupported_response_formats:
            return Reply.reject_response_format()
        refusal = _flavour_refusal(self.flavour, fmt) if fmt else None
        if refusal is not None:
            return refusal
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        answer = self.responder(record.json)
        return Reply(text=answer) if isinstance(answer, str) else answer

    def _completion_body(self, record: RecordedRequest, reply: Reply) -> dict[str, Any]:
        prompt_text = " ".join(
            m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in record.messages
        )
        prompt_tokens = (
            reply.prompt_tokens if reply.prompt_tokens is not None else _count_tokens(prompt_text)
        )
        completion_tokens = (
            reply.completion_tokens
            if reply.completion_tokens is not None
            else _count_tokens(reply.text)
        )
        return {
            "id": f"chatcmpl-fake{len(self.history)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": record.model or self.models[0],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "logprobs": self._logprobs(record, reply),
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _logprobs(self, record: RecordedRequest, reply: Reply) -> dict[str, Any] | None:
        if not (self.supports_logprobs and record.json.get("logprobs") and reply.top_tokens):
            return None
        ranked = sorted(reply.top_tokens.items(), key=lambda kv: -kv[1])
        top = ranked[: int(record.json.get("top_logprobs") or 0)]

        def entry(token: str, p: float) -> dict[str, Any]:
            return {"token": token, "logprob": math.log(p), "bytes": list(token.encode())}

        first = {**entry(*ranked[0]), "top_logprobs": [entry(t, p) for t, p in top]}
        return {"content": [first], "refusal": None}

    def _models_body(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models
            ],
        }


def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def _record(self, body: dict[str, Any]) -> RecordedRequest:
            record = RecordedRequest(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                json=body,
                received_at=time.monotonic(),
            )
            with server._lock:
                server.history.append(record)
            return record

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout under test): nothing left to answer.
                self.close_connection = True

        def _stream(self, record: RecordedRequest, reply: Reply) -> None:
            """Server-sent events, one chunk per word, as OpenAI-compatible servers stream."""
            whole = server._completion_body(record, reply)
            base = {k: whole[k] for k in ("id", "created", "model")}
            base["object"] = "chat.completion.chunk"

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                return {**base, "choices": [choice]}

            events = [chunk({"role": "assistant"})]
            events += [chunk({"content": piece}) for piece in re.findall(r"\S+\s*|\s+", reply.text)]
            events.append(chunk({}, reply.finish_reason))
            options = record.json.get("stream_options") or {}
            if options.get("include_usage") and server.flavour != "llama_cpp":
                events.append({**base, "choices": [], "usage": whole["usage"]})
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for number, event in enumerate(events):
                    content_chunks = number - 1
                    if reply.cut_after is not None and content_chunks == reply.cut_after:
                        return  # the connection closes: no finish_reason, no [DONE]
                    stall = reply.stall_after is not None and content_chunks == reply.stall_after
                    if stall and server._stopping.wait(reply.stall_s):
                        return
                    if reply.chunk_delay_s and server._stopping.wait(reply.chunk_delay_s):
                        return
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return

        def _wait_for(self, gate: threading.Event) -> bool:
            """Wait until ``gate`` is set; False if the server stops or the client hangs up."""
            while not gate.wait(0.05):
                if server._stopping.is_set() or self._client_gone():
                    self.close_connection = True
                    return False
            return True

        def _client_gone(self) -> bool:
            # A closed connection is readable and reads b"" (a reset raises): nothing else can
            # arrive on it while the client waits for this reply.
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return bool(readable) and not self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                return True

        def do_GET(self) -> None:
            record = self._record({})
            if self.path.rstrip("/").endswith("/models"):
                record.status = 200
                self._send(200, server._models_body(), {})
            else:
                record.status = 404
                self._send(404, _error(f"no route {self.path}", "not_found"), {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                record = self._record({"_raw": raw.decode("utf-8", "replace")})
                record.status = 400
                self._send(400, _error("body is not JSON", "invalid_request_error"), {})
                return
            record = self._record(body)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                record.status = 404
                self._send(404, _error(f"no route {self.path}", "not_found"), {})
                return
            reply = server._next_reply(record)
            record.status = reply.status
            if reply.delay_s and server._stopping.wait(reply.delay_s):
                return
            if reply.hold is not None and not self._wait_for(reply.hold):
                return
            if body.get("stream") and reply.status == 200 and server.streams:
                self._stream(record, reply)
            elif reply.status != 200:
                self._send(
                    reply.status, reply.error_body or _error("error", "error"), reply.headers
                )
            else:
                self._send(200, server._completion_body(record, reply), reply.headers)

    return Handler
