"""The lookup lane: blocking reads leave the event loop through long-lived threads."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from medlit.lookups import LookupLane, run_lookup

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


async def test_calls_run_in_the_lane_with_the_callers_context() -> None:
    lane = LookupLane(1, name="test-lane")
    request_id.set("r-42")

    def where(n: int) -> tuple[str, str, int]:
        return threading.current_thread().name, request_id.get(), n * 2

    results = await asyncio.gather(*(lane.run(where, n) for n in range(20)))
    assert {name for name, _, _ in results} == {"test-lane-0"}  # one long-lived thread
    assert {rid for _, rid, _ in results} == {"r-42"}
    assert [n for _, _, n in results] == [n * 2 for n in range(20)]


async def test_an_error_reaches_the_caller_and_the_lane_goes_on() -> None:
    lane = LookupLane(1)

    def boom() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        await lane.run(boom)
    assert await lane.run(lambda: "still serving") == "still serving"


async def test_one_thread_runs_calls_one_at_a_time_and_more_threads_overlap() -> None:
    running, most = [0], [0]
    guard = threading.Lock()

    def work() -> None:
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with guard:
            running[0] -= 1

    one = LookupLane(1)
    await asyncio.gather(*(one.run(work) for _ in range(6)))
    assert most[0] == 1
    most[0] = 0
    three = LookupLane(3)
    await asyncio.gather(*(three.run(work) for _ in range(6)))
    assert most[0] == 3


async def test_a_cancelled_caller_abandons_the_result_not_the_lane() -> None:
    lane = LookupLane(1)
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(5)
        return "late"

    task = asyncio.create_task(lane.run(slow))
    await asyncio.to_thread(started.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    assert await lane.run(lambda: "next") == "next"  # the late result went nowhere, quietly


def test_one_lane_serves_several_event_loops() -> None:
    lane = LookupLane(1)
    seen: dict[int, list[int]] = {}

    def loop_in_thread(k: int) -> None:
        async def main() -> list[int]:
            return list(await asyncio.gather(*(lane.run(lambda n=n: n + k) for n in range(5))))

        seen[k] = asyncio.run(main())

    threads = [threading.Thread(target=loop_in_thread, args=(k * 100,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {k * 100: [n + k * 100 for n in range(5)] for k in range(3)}


async def test_run_lookup_keeps_one_lane_per_size() -> None:
    names = {await run_lookup(1, threading.get_ident) for _ in range(5)}
    assert len(names) == 1
    wide = {await run_lookup(4, threading.get_ident) for _ in range(5)}
    assert wide.isdisjoint(names)


def test_a_lane_needs_a_thread() -> None:
    with pytest.raises(ValueError):
        LookupLane(0)
