"""What a miss's passages cost the ONNX embedder with its idle threads spinning or sleeping.

::

    python benchmarks/embed_spin.py                 # 40 PubMedQA abstracts, 6 turns
    python benchmarks/embed_spin.py --busy 0        # no other work on the machine

onnxruntime's intra-op threads busy-wait ("spin") for the next piece of work by default. A miss
embeds its passages in small batches (about 27 passages, in 4s), and between batches and between
misses the spinning threads burn CPU that the service's event loop, or an LLM server on the
same machine, needs. This embeds the passages of ``--articles`` PubMedQA abstracts
(``../shared/data``; generated text when that is absent) miss by miss (``--per-miss`` passages,
then ``--gap`` seconds idle, as a miss waits on PubMed and the LLM) with spinning on and off, in
turns (``--reps``), while ``--busy`` other processes keep cores busy (a stand-in for the event
loop serving hits). Reports the median CPU (this process: the embedder's threads) and wall
milliseconds per passage, and what the busy processes got done meanwhile (loop iterations per
second: the work the spinning takes from them). The vectors are the same either way (checked).
Last line: ``cpu_ms_spin=... cpu_ms_sleep=... cpu_saved_pct=... wall_ms_spin=...
wall_ms_sleep=... busy_rate_ratio=...``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from embed_batch import articles  # noqa: E402
from medlit.cache.chunking import chunk_article  # noqa: E402
from medlit.embeddings.onnx import OnnxEmbedder  # noqa: E402


def _busy(counter: Any, stop: Any) -> None:
    """Spin a loop, counting its iterations (the work another process gets done)."""
    n = 0
    while not stop.is_set():
        for _ in range(10_000):
            n += 1
        with counter.get_lock():
            counter.value += 10_000


def _turn(
    model: OnnxEmbedder, passages: list[str], per_miss: int, gap: float
) -> tuple[float, float]:
    """CPU and wall seconds to embed ``passages`` miss by miss (gaps not counted in wall)."""
    cpu = wall = 0.0
    for start in range(0, len(passages), per_miss):
        c0, w0 = time.process_time(), time.perf_counter()
        model.embed(passages[start : start + per_miss])
        wall += time.perf_counter() - w0
        time.sleep(gap)  # the idle threads spin (or sleep) through this too
        cpu += time.process_time() - c0
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=40, help="PubMedQA abstracts embedded.")
    parser.add_argument("--per-miss", type=int, default=27, help="Passages a miss embeds.")
    parser.add_argument("--gap", type=float, default=0.05, help="Idle seconds after a miss.")
    parser.add_argument("--reps", type=int, default=6, help="Turns of each setting.")
    parser.add_argument("--busy", type=int, default=1, help="Busy processes beside.")
    args = parser.parse_args()

    found, corpus = articles(args.articles)
    passages = [chunk.text for article in found for chunk in chunk_article(article)]
    models = {spin: OnnxEmbedder(spin=spin) for spin in (True, False)}
    vectors = {spin: np.asarray(model.embed(passages[:8])) for spin, model in models.items()}
    assert np.allclose(vectors[True], vectors[False]), "spinning changed the vectors"

    ctx = multiprocessing.get_context("spawn")
    counter, stop = ctx.Value("q", 0), ctx.Event()
    workers = [ctx.Process(target=_busy, args=(counter, stop)) for _ in range(args.busy)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    cpu: dict[bool, list[float]] = {True: [], False: []}
    wall: dict[bool, list[float]] = {True: [], False: []}
    busy: dict[bool, list[float]] = {True: [], False: []}
    try:
        for _ in range(args.reps):
            for spin, model in models.items():
                before, began = counter.value, time.perf_counter()
                c, w = _turn(model, passages, args.per_miss, args.gap)
                busy[spin].append((counter.value - before) / (time.perf_counter() - began))
                cpu[spin].append(c * 1e3 / len(passages))
                wall[spin].append(w * 1e3 / len(passages))
    finally:
        stop.set()
        for worker in workers:
            worker.join()

    print(f"{corpus}: {len(passages)} passages, {args.per_miss} a miss, {args.gap} s apart, "
          f"{args.busy} busy process(es) beside, {args.reps} turns")  # fmt: skip
    print(
        f"{'idle threads':<12} {'cpu ms/passage':>15} {'wall ms/passage':>16} {'busy loops/s':>13}"
    )
    for spin in (True, False):
        print(
            f"{'spin' if spin else 'sleep':<12} {statistics.median(cpu[spin]):>15.1f} "
            f"{statistics.median(wall[spin]):>16.1f} {statistics.median(busy[spin]):>13.3g}"
        )
    c_spin, c_sleep = statistics.median(cpu[True]), statistics.median(cpu[False])
    ratio = statistics.median(busy[False]) / statistics.median(busy[True]) if args.busy else 1.0
    print(
        f"cpu_ms_spin={c_spin:.1f} cpu_ms_sleep={c_sleep:.1f} "
        f"cpu_saved_pct={100 * (1 - c_sleep / c_spin):.0f} "
        f"wall_ms_spin={statistics.median(wall[True]):.1f} "
        f"wall_ms_sleep={statistics.median(wall[False]):.1f} busy_rate_ratio={ratio:.2f}"
    )


if __name__ == "__main__":
    main()
