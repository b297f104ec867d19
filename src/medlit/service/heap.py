"""Keep the service's long-lived heap out of the garbage collector's full collections.

A full (generation-2) collection walks every container object the process holds: the modules,
classes and functions of FastAPI, pydantic, the embedder, LangGraph and the LLM SDK, hundreds of
thousands of objects that live as long as the process. Under load, requests allocate enough for
one to run about every second, and each stopped the event loop for 110-230 ms (measured with
``gc.callbacks`` under ``benchmarks/serve_load.py``): every request in flight waited, and those
pauses were the service's whole p99.

So once the service has loaded what it serves with (:meth:`Runtime.warm_up`), it collects once
and freezes what is left (:func:`gc.freeze`, made for this): full collections then walk only
what was allocated since, and stay short. Frozen objects are never collected, which is what
these are for: they are loaded once, for the process's life. Objects freed by reference counting
(nearly all of a request's) are freed as before.
"""

from __future__ import annotations

import asyncio
import gc
import time

from medlit.log import get_logger
from medlit.runtime import Runtime

__all__ = ["freeze_heap", "unfreeze_heap", "warm_and_freeze"]

log = get_logger("service.heap")


def freeze_heap() -> int:
    """Collect, then move every object still alive to the permanent generation; the number of
    objects frozen so far."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def unfreeze_heap() -> None:
    """Give the frozen objects back to the collector (the app stopped; in a process that goes
    on, e.g. a test session, they may be garbage now)."""
    gc.unfreeze()


async def warm_and_freeze(runtime: Runtime) -> None:
    """Warm the runtime in a thread, then freeze the heap (on the loop: a full collection is a
    one-off pause of a fraction of a second, at start rather than under load)."""
    began = time.perf_counter()
    try:
        await asyncio.to_thread(runtime.warm_up)
    except Exception as exc:  # warming is an optimisation: requests report real failures
        log.warning("service_warm_up_failed", error=str(exc))
    frozen = freeze_heap()
    log.info("service_heap_frozen", objects=frozen, seconds=round(time.perf_counter() - began, 2))
