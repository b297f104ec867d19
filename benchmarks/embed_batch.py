"""What a passage costs the embedder, by batch size and threads: the evidence a miss embeds.

::

    python benchmarks/embed_batch.py                        # onnx, batches 1..32, 1 and 2 threads
    python benchmarks/embed_batch.py --backend sentence-transformers --articles 40

A miss stores every article it fetched in tier 2: each is cut into passages
(:func:`~medlit.cache.chunking.chunk_article`, ~100 words) and each passage embedded, about
110 passages for a first question. That is most of a miss's CPU. This embeds the passages of
``--articles`` PubMedQA abstracts (``../shared/data``; generated text when that is absent)
with each batch size, in turns (``--reps`` of them, every size once a turn, so that all see
the same stretch of a noisy machine), and reports the median wall and CPU milliseconds per
passage. The vectors do not depend on the batch size (padding is masked out); the run checks
that too. Last line: ``backend=... threads=... best_batch=... ms_per_passage_best=...
ms_per_passage_32=... speedup_vs_32=...`` (for the first ``--threads`` value).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from medlit.cache.chunking import chunk_article  # noqa: E402
from medlit.embeddings.base import Embedder, load_model  # noqa: E402
from medlit.sources.pubmed_xml import parse_pubmed_xml  # noqa: E402
from medlit.types import Article  # noqa: E402

PQAL = ROOT.parent / "shared" / "data" / "pubmedqa"
BATCHES = (1, 2, 4, 8, 16, 32)


def articles(n: int) -> tuple[list[Article], str]:
    """``n`` articles: PubMedQA's abstracts, or generated ones where ../shared/data is absent."""
    xml = PQAL / "pqal_dev_pubmed.xml"
    if xml.exists():
        return parse_pubmed_xml(xml.read_bytes())[:n], "PubMedQA abstracts"
    sys.path.insert(0, str(ROOT))
    from tests.integration.test_ask_flow import corpus

    return corpus()[:n], "generated articles (../shared/data absent)"


def embedder(backend: str, batch_size: int, threads: int) -> Embedder:
    """The backend's embedder, loaded."""
    model: Embedder
    if backend == "onnx":
        from medlit.embeddings.onnx import OnnxEmbedder

        model = OnnxEmbedder(batch_size=batch_size, threads=threads)
    else:
        from medlit.embeddings.sentence_transformers import SentenceTransformerEmbedder

        model = SentenceTransformerEmbedder(batch_size=batch_size, threads=threads)
    load_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["onnx", "sentence-transformers"], default="onnx")
    parser.add_argument("--articles", type=int, default=60, help="Abstracts embedded.")
    parser.add_argument("--reps", type=int, default=3, help="Turns over the batch sizes.")
    parser.add_argument(
        "--threads", type=int, nargs="+", default=[1, 2], help="Intra-op thread counts."
    )
    args = parser.parse_args()

    arts, corpus = articles(args.articles)
    passages = [chunk.text for article in arts for chunk in chunk_article(article)]
    words = statistics.mean(len(p.split()) for p in passages)
    print(f"{corpus}: {len(arts)} articles, {len(passages)} passages, {words:.0f} words each")
    print(f"{'threads':>7} {'batch':>5} {'wall ms/passage':>16} {'cpu ms/passage':>15}")
    figures: dict[int, dict[int, float]] = {}
    for threads in args.threads:
        models = {bs: embedder(args.backend, bs, threads) for bs in BATCHES}
        reference = None
        for model in models.values():
            vectors = model.embed(passages[:16])
            if reference is None:
                reference = vectors
            elif not np.allclose(vectors, reference, atol=1e-5):
                raise SystemExit("vectors differ by batch size: the padding is not masked")
        wall: dict[int, list[float]] = {bs: [] for bs in BATCHES}
        cpu: dict[int, list[float]] = {bs: [] for bs in BATCHES}
        for _ in range(args.reps):
            for bs, model in models.items():
                began, used = time.perf_counter(), time.process_time()
                model.embed(passages)
                wall[bs].append((time.perf_counter() - began) * 1000 / len(passages))
                cpu[bs].append((time.process_time() - used) * 1000 / len(passages))
        figures[threads] = {bs: statistics.median(wall[bs]) for bs in BATCHES}
        for bs in BATCHES:
            print(
                f"{threads:>7} {bs:>5} {statistics.median(wall[bs]):>16.1f} "
                f"{statistics.median(cpu[bs]):>15.1f}"
            )
    threads = args.threads[0]
    best = min(figures[threads], key=figures[threads].__getitem__)
    line = {
        "backend": args.backend,
        "threads": threads,
        "best_batch": best,
        "ms_per_passage_best": f"{figures[threads][best]:.1f}",
        "ms_per_passage_32": f"{figures[threads][32]:.1f}",
        "speedup_vs_32": f"{figures[threads][32] / figures[threads][best]:.2f}",
    }
    print(" ".join(f"{k}={v}" for k, v in line.items()))


if __name__ == "__main__":
    main()
