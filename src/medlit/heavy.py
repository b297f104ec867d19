"""Heavy model computation runs in one thread per process: the heavy lane.

Embedding a page of new articles takes tens to hundreds of milliseconds of CPU. Run one at a
time, such calls cannot take every core from the cheap work beside them; a server also lowers
the lane's CPU priority (:func:`lower_priority`, the ``service.background_nice`` setting), so
that a core shared with a cached answer goes to the cached answer first and the heavy work
takes what is left::

    embedder = LaneEmbedder(model)        # its batches go to the lane by themselves
    run_heavy_sync(model.embed, texts)    # or by hand, from any thread (it blocks that thread)

Only work that runs without the GIL belongs here (onnxruntime, the tokenizer, numpy): a
low-priority thread that held the GIL would make the event loop wait for it while it waits
for a core. Python-heavy work (chunking, the digest's sentences) runs at normal priority.

The priority is the thread's own (Linux keeps a nice value per thread), and threads inherit it
when they are created: an onnxruntime session created in the lane (:meth:`LaneEmbedder.load`,
which the service's warm-up calls) runs its intra-op threads at the lane's priority too.
Raising a priority back needs privileges, so the lane only ever lowers it. On systems without
per-thread priorities the lane still serialises the work, at normal priority.

Hand-written: the standard library's executors and anyio's thread pool offer neither one
long-lived thread nor a per-thread priority.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from medlit.log import get_logger

if TYPE_CHECKING:
    from collections.abc import Sequence

    from medlit.embeddings.base import Embedder, Vectors

__all__ = [
    "LaneEmbedder",
    "lane_nice",
    "lower_priority",
    "lower_thread_priority",
    "run_heavy_sync",
]

log = get_logger("heavy")

T = TypeVar("T")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_thread_id: int | None = None


def _lane() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="medlit-heavy", initializer=_record_thread
            )
        return _executor


def _record_thread() -> None:
    global _thread_id
    _thread_id = threading.get_native_id()


def run_heavy_sync(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``func(*args, **kwargs)`` in the heavy lane, after the calls queued before it, and
    return its result (or raise its error) in the calling thread, which waits. Called from the
    lane itself, it runs ``func`` in place."""
    if threading.get_native_id() == _thread_id:
        return func(*args, **kwargs)
    return _lane().submit(functools.partial(func, *args, **kwargs)).result()


def _per_thread_priority() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "setpriority")


def lower_thread_priority(increment: int, *, base: int | None = None) -> int | None:
    """Lower the calling thread's CPU priority to ``increment`` nice levels above ``base``
    (default: its own nice value), capped at 19; threads it starts afterwards inherit it.

    Returns the thread's nice value after, or ``None`` where threads have no priority of their
    own (or the system refused). A thread already lower stays as it is.
    """
    if increment <= 0 or not _per_thread_priority():
        return None
    me = threading.get_native_id()
    target = min(19, (os.getpriority(os.PRIO_PROCESS, me) if base is None else base) + increment)
    try:
        if os.getpriority(os.PRIO_PROCESS, me) < target:
            os.setpriority(os.PRIO_PROCESS, me, target)
        return os.getpriority(os.PRIO_PROCESS, me)
    except OSError as exc:  # a sandbox may forbid even lowering
        log.warning("thread_priority_unchanged", error=str(exc))
        return None


def lower_priority(increment: int) -> int | None:
    """Run the heavy lane ``increment`` nice levels below the calling thread (capped at 19);
    the lane's nice value after, or ``None`` where threads have no priority of their own.

    Call it before the lane creates the threads that must inherit the priority (an embedding
    model's, see :meth:`medlit.runtime.Runtime.warm_up`).
    """
    if increment <= 0 or not _per_thread_priority():
        return None
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    nice = run_heavy_sync(lower_thread_priority, increment, base=base)
    log.debug("heavy_lane_priority", nice=nice)
    return nice


def lane_nice() -> int | None:
    """The lane thread's nice value (``None`` before it started or without per-thread
    priorities): for tests and diagnostics."""
    if _thread_id is None or not _per_thread_priority():
        return None
    return os.getpriority(os.PRIO_PROCESS, _thread_id)


class LaneEmbedder:
    """An embedder whose batches are computed in the heavy lane.

    A call with more than ``inline_max`` texts (a page of chunks, a digest's sentences) runs in
    the lane; a shorter one (a question) runs in the calling thread, so that a new question is
    never queued behind a page of articles.

    Args:
        inner: the model (any :class:`~medlit.embeddings.base.Embedder`).
        inline_max: the most texts embedded in the calling thread.
    """

    def __init__(self, inner: Embedder, *, inline_max: int = 4) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.inline_max = inline_max

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; see :meth:`medlit.embeddings.base.Embedder.embed`."""
        if len(texts) > self.inline_max:
            return run_heavy_sync(self.inner.embed, texts)
        return self.inner.embed(texts)

    def load(self) -> None:
        """Load the model now, in the lane (its threads then inherit the lane's priority)."""
        from medlit.embeddings.base import load_model

        run_heavy_sync(load_model, self.inner)
