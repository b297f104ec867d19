"""Single-flight of identical asks: questions in flight at the same time are answered once.

Eight clients asking the same new question at once would otherwise all miss the answer cache
and each pay the full search and LLM call. Here the first becomes the *leader*: its work runs in
its own task; the others join it, receive the progress events already sent (then the live ones)
and the same result. The key is (tenant, settings fingerprint, normalised question, sources,
cache use, session): a different tenant never joins another's flight.

The work runs in a task shielded from its callers: a client that disconnects does not cancel
the answer the others are waiting for (and the answer still reaches the cache).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from medlit.progress import ProgressEvent, ProgressSink, progress_scope

__all__ = ["AskFlights", "Flights", "question_key"]

T = TypeVar("T")


def question_key(question: str) -> str:
    """The question as single-flight compares it: whitespace collapsed, case folded."""
    return " ".join(question.split()).casefold()


class _Flight(Generic[T]):
    __slots__ = ("events", "sinks", "task")

    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []
        self.sinks: list[ProgressSink] = []
        self.task: asyncio.Task[T] | None = None

    def publish(self, event: ProgressEvent) -> None:
        self.events.append(event)
        for sink in list(self.sinks):
            try:
                sink(event)
            except Exception:  # one broken watcher must not stop the others
                self.sinks.remove(sink)


class Flights(Generic[T]):
    """Runs work once per key while it is in flight."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight[T]] = {}
        self.joined = 0

    def __len__(self) -> int:
        return len(self._flights)

    async def run(
        self,
        key: Hashable,
        work: Callable[[], Awaitable[T]],
        *,
        sink: ProgressSink | None = None,
        tokens: bool = False,
    ) -> tuple[T, bool]:
        """The result of ``work`` (or of the identical work already running), and whether it
        was shared.

        Args:
            key: what makes two calls identical.
            work: the work, started only when no identical work is in flight.
            sink: receives the work's progress events (those already sent first).
            tokens: whether the work, if started here, should stream answer tokens.
        """
        flight = self._flights.get(key)
        shared = flight is not None
        if flight is None:
            flight = _Flight()
            self._flights[key] = flight
            flight.task = asyncio.create_task(self._drive(key, flight, work, tokens))
            flight.task.add_done_callback(_retrieve)
        else:
            self.joined += 1
        if sink is not None:
            for event in list(flight.events):
                sink(event)
            flight.sinks.append(sink)
        assert flight.task is not None
        try:
            return await asyncio.shield(flight.task), shared
        finally:
            if sink is not None and sink in flight.sinks:
                flight.sinks.remove(sink)

    async def _drive(
        self, key: Hashable, flight: _Flight[T], work: Callable[[], Awaitable[T]], tokens: bool
    ) -> T:
        try:
            with progress_scope(flight.publish, tokens=tokens):
                return await work()
        finally:
            if self._flights.get(key) is flight:
                del self._flights[key]


def _retrieve(task: asyncio.Task[object]) -> None:
    # Every waiter may have gone: read the exception so asyncio does not log it as lost.
    if not task.cancelled():
        task.exception()


AskFlights = Flights
"""Single-flight of asks (results are :class:`~medlit.assistant.AskResult`)."""
