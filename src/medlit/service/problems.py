"""Errors as RFC 9457 problem details (``application/problem+json``).

Every error the service returns has the same shape::

    {"type": "about:blank", "title": "Bad Request", "status": 400,
     "detail": "the question is empty", "instance": "/v1/ask"}

Bad input is always a 4xx with the reason in ``detail``; a failing literature source or LLM is
a 502/503/504 with the same one-line reason the CLI prints; anything unexpected is a 500 whose
body says only that (the traceback goes to the log, never to the client).
"""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from medlit import errors
from medlit.log import get_logger

__all__ = [
    "PROBLEM_RESPONSES",
    "UNEXPECTED",
    "Problem",
    "ProblemError",
    "error_response",
    "install_problem_handlers",
    "problem_response",
    "status_for",
    "unexpected_response",
]

log = get_logger("service")

MEDIA_TYPE = "application/problem+json"

UNEXPECTED = "an unexpected error occurred; it has been logged"  # the detail of every 500


class Problem(BaseModel):
    """An RFC 9457 problem detail."""

    type: str = Field("about:blank", description="A URI naming the kind of problem.")
    title: str = Field(description="Short summary of the kind of problem (the HTTP reason).")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field("", description="What went wrong with this request, in one line.")
    instance: str | None = Field(None, description="The path of the request.")


_HEADERS: dict[int, dict[str, Any]] = {
    401: {
        "WWW-Authenticate": {
            "description": "Bearer: send 'Authorization: Bearer <key>'.",
            "schema": {"type": "string"},
        }
    },
    429: {
        "Retry-After": {
            "description": "Seconds to wait before trying again.",
            "schema": {"type": "string", "pattern": "^[0-9]+$"},
        }
    },
}

#: The error responses every route may give, for the OpenAPI document.
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {
        "model": Problem,
        "description": HTTPStatus(code).phrase,
        "content": {MEDIA_TYPE: {}},
        **({"headers": _HEADERS[code]} if code in _HEADERS else {}),
    }
    for code in (400, 401, 403, 404, 413, 429, 502, 503, 504)
}


class ProblemError(Exception):
    """Raise inside a route to answer with a problem (e.g. 401 with WWW-Authenticate).

    Args:
        status: the HTTP status.
        detail: the one-line reason.
        headers: extra response headers (``Retry-After``, ``WWW-Authenticate``).
    """

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


# Most specific first: the first class the error is an instance of decides.
_STATUS: list[tuple[type[errors.MedlitError], int]] = [
    (errors.ValidationError, 400),
    (errors.NotFoundError, 404),
    (errors.JobBusy, 409),
    (errors.RateLimited, 503),
    (errors.SourceUnavailable, 503),
    (errors.SourceResponseError, 502),
    (errors.SourceError, 502),
    (errors.LLMConfigError, 503),
    (errors.LLMTimeout, 504),
    (errors.LLMRateLimited, 503),
    (errors.LLMError, 502),
    (errors.ConfigError, 503),
    (errors.StorageError, 503),
    (errors.PlanningError, 502),
    (errors.ResearchError, 500),
]


def status_for(exc: errors.MedlitError) -> int:
    """The HTTP status of a medlit error."""
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def problem_body(status: int, detail: str, instance: str | None = None) -> dict[str, Any]:
    """The problem JSON for ``status`` (also sent as an SSE ``error`` event)."""
    return Problem(
        title=HTTPStatus(status).phrase, status=status, detail=detail, instance=instance
    ).model_dump()


def problem_response(
    status: int,
    detail: str,
    *,
    instance: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A problem+json response."""
    return JSONResponse(
        problem_body(status, detail, instance),
        status_code=status,
        media_type=MEDIA_TYPE,
        headers=headers,
    )


def medlit_problem(exc: errors.MedlitError) -> tuple[int, str, dict[str, str]]:
    """Status, detail and headers of a medlit error (the detail is what the CLI prints)."""
    status = status_for(exc)
    headers: dict[str, str] = {}
    retry_after = getattr(exc, "retry_after", None)
    if status in (429, 503) and isinstance(retry_after, int | float) and retry_after > 0:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    if status >= 500 and status != 500:
        log.warning("request_failed", status=status, error=str(exc), kind=type(exc).__name__)
    return status, str(exc) or type(exc).__name__, headers


def error_response(exc: errors.MedlitError | ProblemError, path: str) -> JSONResponse:
    """The problem response of a medlit error or a :class:`ProblemError` raised for a request
    to ``path`` (what the app's handlers answer)."""
    if isinstance(exc, ProblemError):
        return problem_response(exc.status, exc.detail, instance=path, headers=exc.headers)
    status, detail, headers = medlit_problem(exc)
    if status == 500:
        log.error("request_error", path=path, error=str(exc))
    return problem_response(status, detail, instance=path, headers=headers)


def unexpected_response(exc: Exception, path: str) -> JSONResponse:
    """The problem 500 of an unexpected error in a request to ``path``, logged with its
    traceback (call it from the ``except`` block); the client sees no detail of it."""
    log.exception("unexpected_error", path=path, kind=type(exc).__name__)
    return problem_response(500, UNEXPECTED, instance=path)


def _validation_detail(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts) if parts else "invalid request"


def _allowed_methods(request: Request) -> str:
    """The ``Allow`` header of a path: every method of every route on it (Starlette names
    only the first route's), and OPTIONS."""
    from starlette.routing import Match

    def routes(found: list[Any]) -> Iterator[Any]:
        for route in found:
            inner = getattr(route, "original_router", None)  # an included router
            yield from routes(inner.routes) if inner is not None else (route,)

    methods = {"OPTIONS"}
    for route in routes(request.app.router.routes):
        methods_of = getattr(route, "methods", None)
        if methods_of and route.matches(request.scope)[0] is not Match.NONE:
            methods |= set(methods_of)
    return ", ".join(sorted(methods))


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` with problem+json."""

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, errors.MedlitError | ProblemError)
        return error_response(exc, request.url.path)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return problem_response(400, _validation_detail(exc), instance=request.url.path)

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no such route: {request.method} {request.url.path}"
        elif exc.status_code == 405:
            allowed = _allowed_methods(request)
            if request.method == "OPTIONS":  # what may be done here: the answer, not an error
                return Response(status_code=204, headers={"Allow": allowed})
            detail = f"method {request.method} is not allowed on {request.url.path}"
            return problem_response(
                405, detail, instance=request.url.path, headers={"Allow": allowed}
            )
        return problem_response(
            exc.status_code,
            detail,
            instance=request.url.path,
            headers=dict(exc.headers or {}),
        )

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        return unexpected_response(exc, request.url.path)

    app.add_exception_handler(errors.MedlitError, on_error)
    app.add_exception_handler(ProblemError, on_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)
