"""The FastAPI application: :func:`create_app` over one :class:`~medlit.runtime.Runtime`.

::

    runtime = Runtime.open(settings)
    app = create_app(runtime)            # routes under /v1, OpenAPI at /openapi.json, docs at /docs
    uvicorn.Server(uvicorn_config(app, host="127.0.0.1", port=8000)).run()  # service.server

Routes are thin: validate, call the engine, map errors to problem+json
(:mod:`medlit.service.problems`). The runtime belongs to the caller; the app closes only what it
opened itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from medlit import __version__
from medlit.assistant import Assistant
from medlit.heavy import lower_priority
from medlit.log import get_logger
from medlit.runtime import Runtime
from medlit.service import ask, health, research_routes, search
from medlit.service.asgi import BodyTooLarge, header, read_body, replay_body
from medlit.service.auth import KeyVerifier
from medlit.service.deps import ServiceState
from medlit.service.flights import AskFlights
from medlit.service.heap import unfreeze_heap, warm_and_freeze
from medlit.service.keys import KeyStore
from medlit.service.leases import AskLeases
from medlit.service.limits import KeyRateLimiter
from medlit.service.metrics import MetricsMiddleware, ServiceMetrics
from medlit.service.problems import install_problem_handlers, problem_body
from medlit.service.recheck import recheck_periodically
from medlit.web import MAX_RENDER_BODY_BYTES, mount_web

__all__ = ["MedlitApp", "create_app"]

log = get_logger("service")


def create_app(
    runtime: Runtime, *, require_keys: bool | None = None, close_runtime: bool = False
) -> MedlitApp:
    """The medlit HTTP service over ``runtime``.

    Args:
        runtime: the composition root (store, caches, sources, LLM); it stays open after the
            app stops (its owner closes it).
        require_keys: True: every request needs an API key; False: requests without a key run
            as tenant ``default`` (from loopback, naming a loopback host; a key, when sent,
            still picks its tenant); None (default): keys are required once any key was ever
            created (:mod:`medlit.service.auth`).
        close_runtime: close ``runtime`` when the app shuts down (``medlit serve`` hands it
            over: uvicorn ends the process on SIGTERM right after the shutdown).
    """
    settings = runtime.settings
    keys = KeyStore(runtime.store)
    metrics = ServiceMetrics(count_jobs=lambda: _count_jobs(runtime))
    state = ServiceState(
        runtime=runtime,
        assistant=Assistant(
            runtime=runtime, max_concurrent_misses=settings.service.ask_concurrency
        ),
        keys=keys,
        require_keys=require_keys,
        metrics=metrics,
        limiter=KeyRateLimiter(
            runtime.store,
            settings.service.rate_limit_per_minute,
            settings.service.rate_limit_burst,
        ),
        flights=AskFlights(),
        leases=AskLeases(runtime.store),
    )
    state.extras["verifier"] = KeyVerifier(keys, settings.service.key_cache_s)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        log.info("service_started", db=str(settings.db_path))
        # Before the warm-up: the embedding model it loads in the heavy lane inherits this.
        lower_priority(settings.service.background_nice)
        warming = asyncio.create_task(warm_and_freeze(runtime), name="medlit-warm-up")
        background = [warming]
        if settings.service.recheck_interval_s > 0:
            checking = recheck_periodically(state.assistant, settings.service.recheck_interval_s)
            background.append(asyncio.create_task(checking, name="medlit-recheck"))
        try:
            async with research_routes.research_workers(state):
                yield
        finally:
            for task in background:
                task.cancel()
            for task in background:
                with suppress(asyncio.CancelledError):
                    await task
            unfreeze_heap()
            await state.assistant.aclose()  # a no-op for the runtime's parts: it owns them
            if close_runtime:
                await runtime.aclose()
            else:
                runtime.answers.flush()

    app = MedlitApp(
        title="medlit",
        version=__version__,
        summary="Cited answers from the biomedical literature, behind a safe semantic cache.",
        lifespan=lifespan,
        openapi_url="/openapi.json",
        docs_url=None,  # served below from medlit's own copy of Swagger UI
        redoc_url=None,
        # medlit's metrics are Prometheus (/metrics). FastAPI's own OpenTelemetry hooks only
        # act once an OTel provider is configured, yet ask on every request whether one is
        # (os.environ lookups: 9 % of the event loop's time under load).
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.medlit = state
    install_problem_handlers(app)
    app.include_router(ask.router)
    app.include_router(search.router)
    app.include_router(research_routes.router)
    app.include_router(health.router)
    mount_web(app)  # the web page at /
    _document(app, runtime)
    mount_docs(app)
    app.front = MetricsMiddleware(
        BodyLimitMiddleware(
            ask.AskFastPath(app.stack, state),
            settings.service.max_body_bytes,
            # A research report to render may be larger than any API request.
            {"/web/render": max(MAX_RENDER_BODY_BYTES, settings.service.max_body_bytes)},
        ),
        metrics,
    )
    return app


class MedlitApp(FastAPI):
    """FastAPI behind medlit's front door: every HTTP request first passes the metrics and
    body-limit middlewares (so they see all of them), then :class:`~medlit.service.ask.AskFastPath`,
    which answers a plain JSON ask itself; everything else goes on to FastAPI's own stack
    (its error, telemetry and exception middlewares, the router).

    A cached answer costs the event loop about a millisecond; FastAPI's middlewares around it
    (each a coroutine call and a wrapped ``send``) cost a tenth of that again. Outside FastAPI's
    error middleware, the fast path answers an unexpected error with the same problem 500.
    """

    front: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.front is not None and scope["type"] == "http":
            await self.front(scope, receive, send)
        else:
            await self.stack(scope, receive, send)

    async def stack(self, scope: Scope, receive: Receive, send: Send) -> None:
        """FastAPI's own application (middlewares and router).

        An unexpected error ends here once answered: FastAPI's error middleware has logged it
        (through the problem handler) and sent the problem 500, then raised it again, upon
        which uvicorn would log it a second time and drop the client's connection.
        """
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await super().__call__(scope, receive, watch if scope["type"] == "http" else send)
        except Exception:
            if not started:
                raise


def mount_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI over ``/openapi.json``, its script and style sheet served from
    the installed ``swagger-ui-bundle-v2`` package (FastAPI's own page loads them from a CDN,
    and is blank on a machine without internet)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]

    assets = "/docs/assets"

    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="medlit API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon-32x32.png",
        )

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
    app.mount(assets, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")


def _document(app: FastAPI, runtime: Runtime) -> None:
    """Make the app's OpenAPI document say what the service does (schemathesis checks it):

    - a malformed request is a 400 problem (FastAPI would document a 422 it never sends);
    - the API key is optional in the document: without keys ever created, no request needs
      one; once one was, a request without a key gets the documented 401;
    - a question is refused without a word (two letters or digits in a row) and over the
      server's ``max_question_chars``, as the routes refuse it.
    """
    settings = runtime.settings
    limits = {
        "AskRequest": settings.agent.max_question_chars,
        "ResearchRequest": settings.research.max_question_chars,
    }
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = build()
        for operations in doc.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses.setdefault("400", PROBLEM_DOC)
                if operation.get("security"):
                    operation["security"] = [*operation["security"], {}]
        schemas = doc.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        for name, limit in limits.items():
            question = schemas.get(name, {}).get("properties", {}).get("question")
            if question is not None:
                question["maxLength"] = limit
                question["pattern"] = WORD_PATTERN
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]


#: A word, as :func:`medlit.text.require_words` wants one (for the OpenAPI document).
WORD_PATTERN = r"[^\W_]{2,}"

PROBLEM_DOC: dict[str, Any] = {
    "description": "Bad Request",
    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
}


def _count_jobs(runtime: Runtime) -> dict[str, int]:
    rows = runtime.store.read("SELECT status, count(*) FROM research_jobs GROUP BY status")
    return {str(status): int(n) for status, n in rows}


class BodyLimitMiddleware:
    """Refuses a request body over ``max_bytes`` (or the limit ``paths`` gives its path) with
    a 413 problem (whether or not it announces its length), before any route reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int, paths: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.paths = paths or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        limit = self.paths.get(scope["path"], self.max_bytes)
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, send, limit)
            return
        try:
            body = await read_body(receive, limit)
        except BodyTooLarge:
            await self._refuse(scope, send, limit)
            return
        if body is not None:
            await self.app(scope, replay_body(body, receive), send)

    async def _refuse(self, scope: Scope, send: Send, limit: int) -> None:
        import json

        detail = f"the request body is larger than {limit} bytes"
        payload = json.dumps(problem_body(413, detail, scope.get("path"))).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
