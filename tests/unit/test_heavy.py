"""The heavy lane: one thread, one call at a time, and (in a server) a lower CPU priority that
the embedding model's own threads inherit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from medlit.heavy import LaneEmbedder, lower_thread_priority, run_heavy_sync

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread CPU priorities are Linux's"
)


def test_heavy_calls_run_one_at_a_time_in_one_thread() -> None:
    running, overlaps, threads = [0], [0], set()
    guard = threading.Lock()

    def work(n: int) -> int:
        with guard:
            running[0] += 1
            overlaps[0] = max(overlaps[0], running[0])
            threads.add(threading.current_thread().name)
        time.sleep(0.02)
        with guard:
            running[0] -= 1
        return n * n

    results: dict[int, int] = {}

    def caller(n: int) -> None:
        results[n] = run_heavy_sync(work, n)

    callers = [threading.Thread(target=caller, args=(n,)) for n in range(6)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join()
    assert results == {n: n * n for n in range(6)}
    assert overlaps[0] == 1
    assert len(threads) == 1 and threads.pop().startswith("medlit-heavy")


def test_a_heavy_call_from_inside_the_lane_runs_inline() -> None:
    assert run_heavy_sync(lambda: run_heavy_sync(lambda: 5)) == 5  # no self-deadlock


def test_an_error_in_the_lane_reaches_the_caller() -> None:
    def fail() -> None:
        raise ValueError("bad page")

    with pytest.raises(ValueError, match="bad page"):
        run_heavy_sync(fail)


class _Model:
    model_id, dim = "fake", 2

    def __init__(self) -> None:
        self.threads: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.threads.append(threading.current_thread().name)
        return np.ones((len(texts), 2), dtype=np.float32)


def test_batches_are_embedded_in_the_lane_and_a_question_in_place() -> None:
    model = _Model()
    lane = LaneEmbedder(model, inline_max=2)  # type: ignore[arg-type]
    assert lane.embed(["q"]).shape == (1, 2)
    assert lane.embed(["a", "b", "c"]).shape == (3, 2)
    assert model.threads[0] == threading.current_thread().name
    assert model.threads[1].startswith("medlit-heavy")
    assert (lane.model_id, lane.dim) == ("fake", 2)


@linux_only
def test_a_lowered_thread_and_the_threads_it_starts_run_below_the_rest() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen: dict[str, int | None] = {}

    def lowered() -> None:
        seen["self"] = lower_thread_priority(3)
        seen["again"] = lower_thread_priority(3, base=base)  # already that low: unchanged

        def child() -> None:
            seen["child"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

        worker = threading.Thread(target=child)
        worker.start()
        worker.join()

    thread = threading.Thread(target=lowered)
    thread.start()
    thread.join()
    expected = min(19, base + 3)
    assert seen == {"self": expected, "again": expected, "child": expected}
    assert os.getpriority(os.PRIO_PROCESS, 0) == base  # the caller's thread is untouched
    assert lower_thread_priority(0) is None


@linux_only
def test_the_embedding_model_loaded_in_a_lowered_lane_computes_at_its_priority() -> None:
    # A fresh interpreter: a lane's priority lasts as long as its process.
    script = textwrap.dedent(
        """
        import json, os, threading
        from medlit.embeddings.onnx import OnnxEmbedder
        from medlit.heavy import LaneEmbedder, lane_nice, lower_priority, run_heavy_sync

        base = os.getpriority(os.PRIO_PROCESS, 0)
        lane = lower_priority(5)
        lane_id = run_heavy_sync(threading.get_native_id)
        before = set(os.listdir("/proc/self/task"))
        embedder = LaneEmbedder(OnnxEmbedder(threads=2))
        embedder.load()  # as the service's warm-up loads it
        embedder.embed(["a page of chunks"] * 8)  # a batch: computed in the lane
        new = set(os.listdir("/proc/self/task")) - before - {str(lane_id)}
        print(json.dumps({
            "base": base, "lane": lane, "lane_now": lane_nice(),
            "lane_thread": os.getpriority(os.PRIO_PROCESS, lane_id),
            "model_threads": sorted(os.getpriority(os.PRIO_PROCESS, int(t)) for t in new),
            "cpus": len(os.sched_getaffinity(0)),
        }))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    expected = min(19, seen["base"] + 5)
    assert seen["lane"] == seen["lane_now"] == seen["lane_thread"] == expected
    if not seen["model_threads"]:
        # onnxruntime decides whether to start a pool; on one CI machine it started none.
        pytest.skip(f"onnxruntime started no threads of its own here ({seen['cpus']} CPUs usable)")
    # Every thread the model started (its intra-op pool) runs at the lane's priority.
    assert set(seen["model_threads"]) == {expected}
