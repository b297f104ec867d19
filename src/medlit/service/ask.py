"""``POST /v1/ask``: one cited answer, as JSON or as a live SSE stream.

With ``Accept: text/event-stream`` the answer streams: ``stage`` events as each graph node
starts (cache check, search, scoring, writing), ``token`` events while the LLM writes (where the
provider streams), then one ``result`` (the :class:`~medlit.assistant.AskResult`) or one
``error`` (a problem+json object). Identical asks in flight share one answer: in this process
(:mod:`medlit.service.flights`), and across replicas over one store, where a miss waits for
the same ask's lease (:mod:`medlit.service.leases`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from pydantic import ValidationError as PydanticValidationError
from sse_starlette import EventSourceResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from medlit.assistant import SESSION_ID_PATTERN, AskResult
from medlit.errors import MedlitError
from medlit.log import get_logger
from medlit.progress import ProgressEvent
from medlit.service.asgi import header, read_body, replay_body
from medlit.service.auth import CurrentTenant, Tenant, bearer_token, resolve_tenant
from medlit.service.deps import ServiceState, get_state
from medlit.service.flights import question_key
from medlit.service.problems import (
    PROBLEM_RESPONSES,
    UNEXPECTED,
    ProblemError,
    error_response,
    medlit_problem,
    problem_body,
    unexpected_response,
)

__all__ = ["AskFastPath", "AskRequest", "answer", "router"]

log = get_logger("service")

router = APIRouter(tags=["ask"])


class AskRequest(BaseModel):
    """A question for ``POST /v1/ask`` (the options of ``medlit ask``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1, max_length=20000, description="The question, in plain language."
    )
    session_id: str | None = Field(
        None,
        pattern=SESSION_ID_PATTERN,
        description="Chat session id (your tenant's own): follow-ups use its memory.",
    )
    source: Literal["pubmed", "europepmc", "local", "all"] | None = Field(
        None, description="Where to search (default: the server's default source)."
    )
    no_cache: StrictBool = Field(
        False, description="Answer from a fresh search; read no cache (true or false only)."
    )


def wants_events(request: Request) -> bool:
    """Whether the client asked for an SSE stream."""
    return "text/event-stream" in request.headers.get("accept", "")


_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The answer (JSON), or with `Accept: text/event-stream` a stream of "
        "`stage`, `token`, then `result` or `error` events.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


@router.post(
    "/v1/ask",
    response_model=AskResult,
    responses={**PROBLEM_RESPONSES, **_SSE_DOC},
    summary="Answer a question with citations",
)
async def ask(
    body: AskRequest,
    request: Request,
    tenant: CurrentTenant,
) -> Any:
    """Answer a biomedical question from the literature, citing the PMIDs it used."""
    state = get_state(request)  # not a dependency: FastAPI resolves each one on every request
    return await answer(state, tenant, body, events=wants_events(request))


async def answer(
    state: ServiceState, tenant: Tenant, body: AskRequest, *, events: bool = False
) -> Response:
    """The response to ``body`` from ``tenant``: the :class:`AskResult` as JSON, or (``events``)
    its SSE stream. Identical asks in flight share one answer.

    Raises:
        MedlitError: bad input (before any work), or the work failed (JSON only: a stream
            reports it as an ``error`` event).
    """
    assistant = state.assistant
    checked = assistant.check(body.question, body.session_id, body.source)  # once: ask reuses it
    key = (
        tenant.name,
        checked.fingerprint,
        question_key(checked.text),
        checked.sources,
        body.no_cache,
        checked.session_id,
    )

    async def work() -> AskResult:
        result = await assistant.ask(
            checked,
            use_cache=not body.no_cache,
            namespace=tenant.name,
            miss_lease=lambda: state.leases.hold(key),
        )
        state.metrics.observe_lookup(
            tenant.name, result.cache.tier1 == "hit", result.cache.miss_reason
        )
        return result

    if events:
        return EventSourceResponse(_events(state, key, work), ping=15)
    result, shared = await state.flights.run(key, work)
    headers = {}
    if shared:
        state.metrics.single_flight.inc()
        headers["X-Medlit-Shared"] = "1"
    # Serialised once, here: FastAPI would validate the model again before dumping it.
    return Response(result.model_dump_json(), media_type="application/json", headers=headers)


async def _events(state: ServiceState, key: Any, work: Any) -> AsyncIterator[dict[str, str]]:
    queue: asyncio.Queue[ProgressEvent | None] = asyncio.Queue()
    task = asyncio.create_task(state.flights.run(key, work, sink=queue.put_nowait, tokens=True))
    task.add_done_callback(lambda _t: queue.put_nowait(None))
    n = 0
    try:
        while (event := await queue.get()) is not None:
            n += 1
            yield {"event": event.kind, "id": str(n), "data": event.model_dump_json()}
        try:
            result, shared = task.result()
            if shared:
                state.metrics.single_flight.inc()
            yield {"event": "result", "id": str(n + 1), "data": result.model_dump_json()}
        except MedlitError as exc:
            status, detail, _ = medlit_problem(exc)
            body = problem_body(status, detail, "/v1/ask")
            yield {"event": "error", "id": str(n + 1), "data": json.dumps(body)}
        except Exception:
            log.exception("ask_stream_failed")
            body = problem_body(500, UNEXPECTED, "/v1/ask")
            yield {"event": "error", "id": str(n + 1), "data": json.dumps(body)}
    finally:
        if not task.done():
            task.cancel()  # only this waiter: the shared work goes on for the others


class AskFastPath:
    """``POST /v1/ask`` for JSON, answered straight from ASGI: the same :func:`answer` as the
    route, without the router, the dependency solver and the request objects around it.

    A cached answer costs the event loop about a millisecond, and FastAPI's machinery around it
    as much again, under load most of the service's hit time on its one GIL. So the common
    request (a JSON body that is a valid :class:`AskRequest`, no event stream) is answered
    here, with the route's auth (:func:`resolve_tenant`) and its problem responses
    (:func:`error_response`); anything else (a stream, another media type, a body the model
    refuses) goes on to the route untouched, which answers it as before. Sits inside the
    metrics and body-limit middlewares, which therefore see every request, and outside
    FastAPI's own stack (:class:`~medlit.service.app.MedlitApp`): an unexpected error here
    gets the problem 500 FastAPI's error middleware would give.

    Args:
        app: FastAPI's own application (its middlewares and the router).
        state: the service's state.
    """

    def __init__(self, app: ASGIApp, state: ServiceState) -> None:
        self.app = app
        self.state = state
        # The route's own object: the metrics name requests by its path template.
        self.route = next(r for r in router.routes if getattr(r, "path", None) == "/v1/ask")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _is_plain_json_ask(scope):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive)
        if raw is None:  # the client left
            return
        try:
            body = AskRequest.model_validate_json(raw)
        except PydanticValidationError:  # the route words the 400 (and checks the key first)
            await self.app(scope, replay_body(raw, receive), send)
            return
        scope["route"] = self.route
        authorization = header(scope, b"authorization")
        token = bearer_token(authorization.decode("latin-1") if authorization else None)
        try:
            client = scope.get("client")
            host = header(scope, b"host")
            tenant = await resolve_tenant(
                self.state,
                token,
                peer=client[0] if client else None,
                host=host.decode("latin-1") if host is not None else None,
            )
            response = await answer(self.state, tenant, body)
        except (MedlitError, ProblemError) as exc:
            response = error_response(exc, scope["path"])
        except Exception as exc:  # outside FastAPI's error middleware: the same problem 500
            response = unexpected_response(exc, scope["path"])
        await response(scope, receive, send)


def _is_plain_json_ask(scope: Scope) -> bool:
    """A JSON ``POST /v1/ask`` that wants JSON back (no event stream)."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return False
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if path != "/v1/ask":
        return False
    accept = header(scope, b"accept") or b""
    if b"text/event-stream" in accept:
        return False
    media = (header(scope, b"content-type") or b"application/json").split(b";")[0]
    return media.strip().lower() == b"application/json"
