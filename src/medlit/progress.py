"""Progress of one piece of work, reported to whoever is watching (a terminal, an SSE stream).

The engine calls :func:`emit` where something worth showing happens (a graph node starts,
PubMed is searched, a token of the answer arrives); a front end that wants to show progress
opens :func:`progress_scope` with a sink around the call::

    events: list[ProgressEvent] = []
    with progress_scope(events.append):
        result = await assistant.ask("Does aspirin prevent stroke?")

Like :func:`medlit.usage.usage_scope`, the sink lives in a context variable: tasks started inside
the scope (LangGraph's nodes among them) report to it, and two questions answered at once in one
process never see each other's events. Without a scope, :func:`emit` does nothing and costs a
context-variable read. A sink must be quick and must not raise; one that raises is dropped for
the rest of the scope (progress must never sink an answer).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel, Field

from medlit.log import get_logger

__all__ = ["ProgressEvent", "ProgressSink", "emit", "progress_scope", "streaming_wanted"]

log = get_logger("progress")

EventKind = Literal["stage", "token", "warning"]


class ProgressEvent(BaseModel):
    """One step of progress.

    Attributes:
        kind: ``stage`` (a step started: cache check, search, scoring, writing), ``token`` (a
            piece of the answer as the model writes it) or ``warning`` (a problem survived).
        stage: the step's machine name (a graph node: ``query_cache``, ``fetch_pubmed``...).
        message: what a person is shown ("searching PubMed", the token text...).
        data: small JSON-ready details (counts, the query sent).
        t: seconds since the scope opened.
    """

    kind: EventKind
    stage: str
    message: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    t: float = 0.0


ProgressSink = Callable[[ProgressEvent], None]


class _Scope:
    __slots__ = ("sink", "start", "tokens")

    def __init__(self, sink: ProgressSink, tokens: bool) -> None:
        self.sink: ProgressSink | None = sink
        self.start = time.perf_counter()
        self.tokens = tokens


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "medlit_progress", default=None
)


@contextmanager
def progress_scope(sink: ProgressSink, *, tokens: bool = True) -> Iterator[None]:
    """Send the progress of the work done inside the block to ``sink``.

    Args:
        sink: called with every event, in order, on the event loop's thread.
        tokens: whether the answer should be streamed token by token (a provider that can
            stream is then asked to; see :func:`streaming_wanted`).
    """
    token = _SCOPE.set(_Scope(sink, tokens))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def streaming_wanted() -> bool:
    """Whether someone is watching for answer tokens (the LLM call should stream)."""
    scope = _SCOPE.get()
    return scope is not None and scope.sink is not None and scope.tokens


def emit(kind: EventKind, stage: str, message: str = "", **data: Any) -> None:
    """Report one event to the current scope's sink (nothing happens outside a scope)."""
    scope = _SCOPE.get()
    if scope is None or scope.sink is None:
        return
    event = ProgressEvent(
        kind=kind,
        stage=stage,
        message=message,
        data=data,
        t=round(time.perf_counter() - scope.start, 4),
    )
    try:
        scope.sink(event)
    except Exception:  # a broken watcher must not break the work
        log.warning("progress_sink_failed", stage=stage)  # no traceback for the user
        log.debug("progress_sink_failed_traceback", stage=stage, exc_info=True)
        scope.sink = None
