"""Answer-cache lookups leave the event loop through long-lived threads: the lookup lane.

A cached answer's lookup (the ANN search, one SQL read, the guard) takes a few hundred
microseconds and must not run on a server's event loop, where a slow read would stall every
request. Handing it to a thread pool per call costs the loop more than the lookup: anyio's pool
wakes an idle worker through a Python condition for every call, and under load the woken worker
preempts the loop while it holds the GIL (a fifth of the loop's time in a profile of 32
clients). The lane is one thread fed by a :class:`queue.SimpleQueue`: a put wakes it only when
it sleeps, so under load, when it is busy, a lookup costs the loop an append; its result comes
back through ``call_soon_threadsafe``. One thread loses nothing on SQLite, whose reads share one
connection and one lock; a store that reads over the network (PostgreSQL) gets a thread per
pooled connection (``Store.read_concurrency``)::

    judgement = await run_lookup(store.read_concurrency, verdicts.get, entry_id, question, model)

Hand-written: asyncio's and anyio's executors offer neither a long-lived thread fed without a
wake-up per call nor a result delivered without a concurrent future per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["LookupLane", "run_lookup"]

T = TypeVar("T")

_Item = tuple[
    asyncio.AbstractEventLoop, "asyncio.Future[Any]", contextvars.Context, Callable[[], Any]
]


class LookupLane:
    """``threads`` long-lived daemon threads that run blocking calls for event loops.

    Args:
        threads: how many calls may run at once (1 for a store that serialises its reads).
        name: the threads' name.
    """

    def __init__(self, threads: int = 1, name: str = "medlit-lookup") -> None:
        if threads < 1:
            raise ValueError("a lane needs at least one thread")
        self.threads = threads
        self.name = name
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._started: list[threading.Thread] = []
        self._lock = threading.Lock()

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` run in the lane (with the caller's context variables); its result,
        or its exception, in the calling coroutine. Cancelling the caller abandons the result,
        not the call."""
        if len(self._started) < self.threads:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        context = contextvars.copy_context()
        self._queue.put((loop, future, context, lambda: func(*args)))
        return await future

    def _start(self) -> None:
        with self._lock:
            while len(self._started) < self.threads:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._started)}", daemon=True
                )
                thread.start()
                self._started.append(thread)

    def _work(self) -> None:
        while True:
            loop, future, context, call = self._queue.get()
            try:
                result = context.run(call)
            except BaseException as exc:  # the caller's to handle, like any exception
                _deliver(loop, _settle_error, future, exc)
            else:
                _deliver(loop, _settle, future, result)
            del loop, future, context, call  # do not keep the last call's objects alive


def _deliver(loop: asyncio.AbstractEventLoop, settle: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
        loop.call_soon_threadsafe(settle, *args)


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # the caller was cancelled
        future.set_result(result)


def _settle_error(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


_lanes: dict[int, LookupLane] = {}
_lanes_lock = threading.Lock()


async def run_lookup(threads: int, func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in this process's lookup lane of ``threads`` threads (one lane per
    size, started on first use and kept for the process: see the module docstring)."""
    lane = _lanes.get(threads)
    if lane is None:
        with _lanes_lock:
            lane = _lanes.setdefault(threads, LookupLane(threads))
    return await lane.run(func, *args)
