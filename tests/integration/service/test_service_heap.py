"""The service warms its runtime and freezes what it loaded out of the collector's full
collections (the gen-2 pauses that were the service's p99 under load)."""

from __future__ import annotations

import asyncio
import gc

from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.heap import warm_and_freeze


def test_warm_up_loads_the_embedder_then_the_heap_is_frozen(settings: Settings) -> None:
    async def main() -> tuple[bool, int, int]:
        async with Runtime(settings) as runtime:
            gc.unfreeze()
            before = gc.get_freeze_count()
            await warm_and_freeze(runtime)
            return runtime.loaded_embedder is not None, before, gc.get_freeze_count()

    try:
        loaded, before, frozen = asyncio.run(main())
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
    assert loaded
    assert before == 0
    # Everything alive after warming: the imported modules, the embedder's objects...
    assert frozen > 50_000
