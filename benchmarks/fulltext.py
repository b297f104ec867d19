"""Cost of reading full text: parse, chunk and embed per article, and the work added per answer.

    python benchmarks/fulltext.py                      # the eight PMC articles of ../shared/data
    python benchmarks/fulltext.py --repeat 3 --threads 1

Over the eight real JATS articles of ``../shared/data/pmc_oa`` (PMC open-access subset), per
article: :func:`medlit.sources.jats.parse_jats` (ms), chunking by section
(:func:`medlit.cache.chunking.chunk_article`, ms, and the chunks made) and embedding those chunks
with the default ONNX MiniLM on ``--threads`` intra-op threads (1: one core), best of
``--repeat`` runs each. The target is parse + chunk + embed <= 1 s per article on one core.

Added latency per answer: what ``read_full_text`` adds to an answer in this process for the
``fulltext.max_per_answer`` best articles (3 by default): their parse, chunk and embed, the
tier-2 upsert into a real SQLite store and the chunk search over them, measured here on the three
costliest articles (the worst case); the network time of ``efetch db=pmc`` is not in it (one
request per article under the shared E-utilities limit: at 3/s, at least 0.33 s apart, on
NCBI's own response time).

The machine's load average is printed: on a shared machine every figure scales with it.

Wall time moves with the machine's load; the CPU time of this process (one embedding thread:
what one core spends) is printed beside it and is the figure the target is read on.

Last line: ``parse_ms_mean=... chunk_ms_mean=... embed_ms_mean=... per_article_ms_max=...
chunks_mean=... per_article_cpu_ms_mean=... per_article_cpu_ms_max=... answer_added_ms=...
load=...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from medlit.cache import EvidenceCache
from medlit.cache.chunking import chunk_article
from medlit.config import CacheSettings
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.sources.jats import parse_jats
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pmc_oa"


def _best(fn, repeat: int):  # type: ignore[no-untyped-def]
    """(best wall ms, best CPU ms of this process, result) over ``repeat`` runs."""
    best, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best * 1000.0, best_cpu * 1000.0, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of .nxml files")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measure (best kept)")
    parser.add_argument("--threads", type=int, default=1, help="embedding intra-op threads")
    parser.add_argument("--per-answer", type=int, default=3, help="full texts one answer reads")
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("*.nxml"))
    if not files:
        sys.exit(f"no .nxml files in {args.data} (needs ../shared/data/pmc_oa)")
    embedder = OnnxEmbedder(threads=args.threads)
    embedder.embed(["warm up the model"])  # the model load is not an article's cost
    rows = []
    print(
        f"{'article':<24} {'KB':>5} {'parse ms':>9} {'chunks':>7} {'chunk ms':>9} "
        f"{'embed ms':>9} {'embed cpu':>10} {'total ms':>9} {'total cpu':>10}"
    )
    articles: list[Article] = []
    for path in files:
        data = path.read_bytes()
        parse_ms, parse_cpu, full = _best(lambda data=data: parse_jats(data), args.repeat)
        article = Article(
            pmid=path.stem,
            title=path.stem,
            abstract=[AbstractSection(label="RESULTS", text="See the full text.")],
            full_text=full,
        )
        articles.append(article)
        chunk_ms, chunk_cpu, chunks = _best(
            lambda article=article: chunk_article(article), args.repeat
        )
        body = [c.text for c in chunks if c.from_full_text]
        embed_ms, embed_cpu, _ = _best(lambda body=body: embedder.embed(body), args.repeat)
        total = parse_ms + chunk_ms + embed_ms
        cpu = parse_cpu + chunk_cpu + embed_cpu
        rows.append((path.name, len(data), parse_ms, len(body), chunk_ms, embed_ms, total, cpu))
        print(
            f"{path.name:<24} {len(data) // 1024:>5} {parse_ms:>9.1f} {len(body):>7} "
            f"{chunk_ms:>9.1f} {embed_ms:>9.1f} {embed_cpu:>10.1f} {total:>9.1f} {cpu:>10.1f}"
        )

    # The work one answer adds: its (worst) articles read, stored, searched.
    worst = sorted(range(len(rows)), key=lambda i: -rows[i][6])[: args.per_answer]
    with tempfile.TemporaryDirectory() as tmp, SqliteStore(Path(tmp) / "b.sqlite3") as store:
        cache = EvidenceCache(store, CacheSettings())
        query = np.asarray(embedder.embed(["what did the study find?"])[0], dtype=np.float32)
        start = time.perf_counter()
        read = [
            articles[i].model_copy(update={"full_text": parse_jats(files[i].read_bytes())})
            for i in worst
        ]
        cache.add_articles(read, embedder)
        cache.search_chunks(query, 60)
        added_ms = (time.perf_counter() - start) * 1000.0
    load = os.getloadavg()[0]
    n = len(rows)
    parse_mean = sum(r[2] for r in rows) / n
    chunk_mean = sum(r[4] for r in rows) / n
    embed_mean = sum(r[5] for r in rows) / n
    per_article_max = max(r[6] for r in rows)
    cpu_mean = sum(r[7] for r in rows) / n
    cpu_max = max(r[7] for r in rows)
    chunks_mean = sum(r[3] for r in rows) / n
    print(
        f"\n{n} articles; embedding on {args.threads} thread(s); load average {load:.1f} "
        f"on {os.cpu_count()} cores"
    )
    print(
        f"answer reading {args.per_answer} full texts adds {added_ms:.0f} ms in-process "
        "(parse, chunk, embed, store, search; network not included)"
    )
    print(
        f"parse_ms_mean={parse_mean:.1f} chunk_ms_mean={chunk_mean:.1f} "
        f"embed_ms_mean={embed_mean:.0f} per_article_ms_max={per_article_max:.0f} "
        f"chunks_mean={chunks_mean:.1f} per_article_cpu_ms_mean={cpu_mean:.0f} "
        f"per_article_cpu_ms_max={cpu_max:.0f} answer_added_ms={added_ms:.0f} load={load:.1f}"
    )


if __name__ == "__main__":
    main()
