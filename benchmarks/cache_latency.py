"""Latency, recall and size of the two-tier cache on synthetic data.

    python benchmarks/cache_latency.py --entries 100000
    python benchmarks/cache_latency.py --tier1-entries 100000 --tier2-chunks 1000000
    python benchmarks/cache_latency.py ... --dir DIR --keep     # then, same sizes: --reuse
    python benchmarks/cache_latency.py --backend postgres,sqlite --tier1-entries 100000 ...

Fills tier 1 with N answers and tier 2 with M chunks (10 per article) whose vectors are
perturbed clusters of unit vectors (like real embeddings: many near neighbours), through the
store's own tables (bulk) so that the ANN indexes are built by the real change-log path; then
measures, through the public cache API with default settings:

* tier-1 ``AnswerCache.search_query`` p50/p99 (half near-duplicates that hit, half misses;
  embedding excluded; includes the guard and the hit/miss counters written to SQLite);
* tier-2 ``EvidenceCache.search_chunks(k=10)`` p50/p99 (includes the articles' LRU update);
* both after the process's first ``--cold-queries`` lookups of that tier, which are reported
  apart: a process that has just opened the memory-mapped indexes pages them in as it goes;
* recall@10 of each ANN index against exact search over the same vectors;
* single inserts per second through ``add_query`` / ``upsert_article`` (embedding excluded);
* the embedding time of one query (ONNX model load reported separately);
* the cold start of a new process: open the store and do one tier-1 lookup;
* size on disk.

``--backend`` names the store(s): ``sqlite`` (default), ``postgres`` (PostgreSQL + pgvector at
``--database-url``, or a pgserver started in the work dir), or both (``postgres,sqlite``: the
same data and queries, each backend's table, then the ratio). On PostgreSQL the fill is a bulk
``COPY`` with the HNSW indexes dropped and rebuilt after (with the store's own m and
ef_construction), as one would load a large cache; the lookups go through the same cache API.

Last line: ``lookup_p99_ms=... recall_at_10=... chunk_search_p99_ms=...`` (recall_at_10 is
the tier-2 index's, the harder of the two), prefixed ``<backend>_`` when several are measured.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from medlit.cache import AnswerCache, EvidenceCache
from medlit.config import CacheSettings
from medlit.log import configure_logging
from medlit.storage.base import Store
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article

DIM = 384
CHUNKS_PER_ARTICLE = 10


def clustered(n: int, rng: np.random.Generator, *, per_cluster: int = 50) -> np.ndarray:
    """Unit vectors in clusters of about ``per_cluster`` (intra-cluster cosine ~0.5-0.8)."""
    centers = rng.standard_normal((max(1, n // per_cluster), DIM), dtype=np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        which = rng.integers(0, len(centers), stop - start)
        noise = rng.standard_normal((stop - start, DIM), dtype=np.float32) * 0.04
        block = centers[which] + noise
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def perturb(vectors: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    out = vectors + rng.standard_normal(vectors.shape, dtype=np.float32) * scale
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def payload(i: int) -> str:
    cites = [{"pmid": str(10_000_000 + i * 5 + j), "title": f"Trial {i}-{j}"} for j in range(5)]
    return json.dumps(
        {
            "answer": "Lorem ipsum dolor sit amet [1]. " * 25,
            "citations": cites,
            "retrieval_score": 0.7,
            "doc_scores": {c["pmid"]: 0.6 for c in cites},
        }
    )


def fill_answers(store: SqliteStore, vectors: np.ndarray) -> float:
    t0 = time.perf_counter()
    for start in range(0, len(vectors), 20_000):
        rows = [
            (
                "bench",
                "fp",
                f"question {i}",
                f"h{i}",
                payload(i),
                0.7,
                vectors[i].tobytes(),
                time.time(),
                time.time(),
                i + 1,
            )
            for i in range(start, min(len(vectors), start + 20_000))
        ]
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO answers (namespace, fingerprint, question, question_hash, payload, "
                "retrieval_score, embedding, created_at, last_used_at, lru) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
    store._index("answers")  # the change-log replay builds the index
    return time.perf_counter() - t0


def synthetic_article(a: int) -> Article:
    """An article with a PubMed-sized record (structured abstract ~1,600 chars, 6 authors)."""
    sentence = f"In study {a}, outcome measures were compared between the two groups. "
    return Article(
        pmid=str(a),
        title=f"Article {a}: a randomised trial of an intervention in adults",
        year=1990 + a % 35,
        journal="Journal of Synthetic Medicine",
        authors=[f"Author{a % 97}{j} AB" for j in range(6)],
        publication_types=["Journal Article", "Randomized Controlled Trial"],
        abstract=[
            AbstractSection(label=label, text=sentence * 5)
            for label in ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")
        ],
    )


def fill_chunks(store: SqliteStore, vectors: np.ndarray) -> float:
    t0 = time.perf_counter()
    n_articles = len(vectors) // CHUNKS_PER_ARTICLE
    for start in range(0, n_articles, 10_000):
        arts, chunks = [], []
        for a in range(start, min(n_articles, start + 10_000)):
            art = synthetic_article(a)
            arts.append(
                (
                    art.key,
                    art.pmid,
                    None,
                    art.year,
                    0,
                    art.model_dump_json(),
                    "h",
                    time.time(),
                    time.time(),
                    CHUNKS_PER_ARTICLE,
                    a + 1,
                )
            )
            for o in range(CHUNKS_PER_ARTICLE):
                i = a * CHUNKS_PER_ARTICLE + o
                chunks.append(
                    (
                        f"{art.key}#{o}",
                        art.key,
                        o,
                        "RESULTS",
                        f"Chunk {o} of article {a}: some findings. " * 8,
                        0,
                        vectors[i].tobytes(),
                    )
                )
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO articles (key, pmid, doi, year, study_type, data, content_hash, "
                "fetched_at, last_used_at, chunk_count, lru) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                arts,
            )
            conn.executemany(
                "INSERT INTO chunks (chunk_id, article_key, ordinal, section, text, "
                "is_conclusion, embedding) VALUES (?,?,?,?,?,?,?)",
                chunks,
            )
        print(
            f"  tier 2: {min(n_articles, start + 10_000) * CHUNKS_PER_ARTICLE:,} chunks stored",
            file=sys.stderr,
        )
    store._index("chunks")
    return time.perf_counter() - t0


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 16):
        sims = queries[start : start + 16] @ vectors.T
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        out[start : start + 16] = top
    return out


def search_widths(cfg: CacheSettings, backend: str) -> tuple[int, int]:
    """The HNSW search widths (tier 1, tier 2) the backend uses: PostgreSQL has its own."""
    if backend == "postgres":
        return cfg.pg_ef_search_answers, cfg.pg_ef_search_chunks
    return cfg.ann_expansion_search_answers, cfg.ann_expansion_search


def recall_at_10(
    store: Store, name: str, vectors: np.ndarray, queries: np.ndarray, key_offset: int
) -> float:
    """Recall@10 of the raw ANN index (no filter, no re-rank) at the tier's search width."""
    truth = exact_top(vectors, queries, 10)
    hits = 0
    for q, expected in zip(queries, truth, strict=True):
        if isinstance(store, SqliteStore):
            keys = store._index(name).search(q, 10)[0].astype(np.int64).tolist()
        else:
            from pg_bench import raw_top

            answers_ef, chunks_ef = search_widths(store._cfg, "postgres")  # type: ignore[attr-defined]
            ef = chunks_ef if name == "chunks" else answers_ef
            keys = raw_top(store, name, q, 10, ef)  # type: ignore[arg-type]
        hits += len({k - key_offset for k in keys} & set(expected.tolist()))
    return hits / (10 * len(queries))


def product_recall_at_10(
    evidence: EvidenceCache, vectors: np.ndarray, queries: np.ndarray
) -> float:
    """Recall@10 of what the product returns (ANN candidates, exactly re-ranked)."""
    truth = exact_top(vectors, queries, 10)
    hits = 0
    for q, expected in zip(queries, truth, strict=True):
        got = set()
        for ev in evidence.search_chunks(q, 10):
            key, _, ordinal = ev.chunk.id.rpartition("#")  # "pmid:{a}#{o}" is vector a*10+o
            got.add(int(key.removeprefix("pmid:")) * CHUNKS_PER_ARTICLE + int(ordinal))
        hits += len(got & set(expected.tolist()))
    return hits / (10 * len(queries))


def percentiles(samples: list[float]) -> tuple[float, float]:
    arr = np.array(samples) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))


def open_store_for(backend: str, db: Path, url: str | None, cfg: CacheSettings) -> Store:
    if backend == "sqlite":
        return SqliteStore(db, cache=cfg)
    from medlit.storage.postgres import PostgresStore

    return PostgresStore(str(url), cache=cfg, pool_size=2)


def fill(store: Store, v1: np.ndarray, v2: np.ndarray, cfg: CacheSettings) -> list[tuple[str, str]]:
    n1, n2 = len(v1), len(v2)
    if isinstance(store, SqliteStore):
        build1 = fill_answers(store, v1)
        build2 = fill_chunks(store, v2)
        return [
            ("tier-1 entries", f"{n1:,} (bulk load + index {build1:.1f} s)"),
            ("tier-2 chunks", f"{n2:,} (bulk load + index {build2:.1f} s)"),
        ]
    from pg_bench import fill_answers_pg, fill_chunks_pg

    load1, index1 = fill_answers_pg(store, v1, payload, cfg)  # type: ignore[arg-type]
    print(f"  tier 1: {n1:,} answers, COPY {load1:.0f} s, HNSW {index1:.0f} s", file=sys.stderr)
    load2, index2 = fill_chunks_pg(
        store,  # type: ignore[arg-type]
        v2,
        synthetic_article,
        CHUNKS_PER_ARTICLE,
        cfg,
    )
    return [
        ("tier-1 entries", f"{n1:,} (COPY {load1:.1f} s + HNSW build {index1:.1f} s)"),
        ("tier-2 chunks", f"{n2:,} (COPY {load2:.1f} s + HNSW build {index2:.1f} s)"),
    ]


def measure(
    backend: str,
    args: argparse.Namespace,
    v1: np.ndarray,
    v2: np.ndarray,
    work: Path,
    url: str | None,
) -> tuple[list[tuple[str, str]], dict[str, float]]:
    """Fill one backend with ``v1``/``v2`` and measure it; returns (table rows, figures)."""
    n1, n2 = len(v1), len(v2)
    db = work / "medlit.sqlite3"
    rng = np.random.default_rng(11)  # the same queries for every backend
    widths = {
        name: value
        for name, value in (
            ("ann_expansion_search_answers", args.ef_answers),
            ("ann_expansion_search", args.ef_chunks),
            ("pg_ef_search_answers", args.ef_answers),
            ("pg_ef_search_chunks", args.ef_chunks),
        )
        if value
    }
    cfg = CacheSettings(
        answer_capacity=max(n1 + 10_000, 1), evidence_capacity=n2 + 100_000, **widths
    )
    rows: list[tuple[str, str]] = []
    store = open_store_for(backend, db, url, cfg)
    held = (store.count_answers(), store.count_chunks()) if args.reuse else (0, 0)
    if args.reuse and held != (0, 0):
        if held != (n1, n2):
            sys.exit(f"--reuse: the {backend} store holds {held[0]} / {held[1]}, not {n1} / {n2}")
        t = time.perf_counter()
        if isinstance(store, SqliteStore):
            store._index("answers"), store._index("chunks")
        rows += [
            ("tier-1 entries", f"{n1:,} (reused; open {time.perf_counter() - t:.1f} s)"),
            ("tier-2 chunks", f"{n2:,} (reused)"),
        ]
    else:
        rows += fill(store, v1, v2, cfg)

    ef1, ef2 = search_widths(cfg, backend)
    rows.append(("HNSW search width tier 1 / tier 2", f"{ef1} / {ef2}"))
    answers = AnswerCache(store, cfg)
    evidence = EvidenceCache(store, cfg)
    # A process that has just opened the memory-mapped indexes pages them in on its first
    # lookups (page faults): those are reported apart from the steady state that follows.
    cold = args.cold_queries
    total = cold + args.queries
    picks = rng.integers(0, n1, total)
    near = perturb(v1[picks], 0.01, rng)  # paraphrase-like: cosine ~0.98
    far = clustered(total, rng)
    times, hits = [], 0
    for i in range(total):
        vec, question = (near[i], f"question {picks[i]}") if i % 2 == 0 else (far[i], "other")
        t = time.perf_counter()
        res = answers.search_query(question, vec, namespace="bench", fingerprint="fp")
        times.append(time.perf_counter() - t)
        hits += res.hit and i >= cold
    p50_1, p99_1 = percentiles(times[cold:])
    rows.append(("tier-1 lookup p50 / p99", f"{p50_1:.3f} / {p99_1:.3f} ms ({hits} hits)"))
    if cold:
        c50, c99 = percentiles(times[:cold])
        rows.append((f"  first {cold} lookups of the process", f"{c50:.3f} / {c99:.3f} ms"))

    qs = perturb(v2[rng.integers(0, n2, cold + args.queries)], 0.03, rng)
    times = []
    for q in qs:
        t = time.perf_counter()
        evidence.search_chunks(q, 10)
        times.append(time.perf_counter() - t)
    p50_2, p99_2 = percentiles(times[cold:])
    rows.append(("tier-2 search (k=10) p50 / p99", f"{p50_2:.3f} / {p99_2:.3f} ms"))
    if cold:
        c50, c99 = percentiles(times[:cold])
        rows.append((f"  first {cold} searches of the process", f"{c50:.3f} / {c99:.3f} ms"))

    rq = args.recall_queries
    r1 = recall_at_10(store, "answers", v1, perturb(v1[rng.integers(0, n1, rq)], 0.03, rng), 1)
    r2 = recall_at_10(store, "chunks", v2, perturb(v2[rng.integers(0, n2, rq)], 0.03, rng), 1)
    rows.append(("recall@10 tier 1 / tier 2 (raw index)", f"{r1:.3f} / {r2:.3f}"))
    rp = product_recall_at_10(evidence, v2, perturb(v2[rng.integers(0, n2, rq)], 0.03, rng))
    rows.append(("recall@10 tier 2 (search_chunks)", f"{rp:.3f}"))

    extra = clustered(1000, rng)
    t = time.perf_counter()
    for i, vec in enumerate(extra):
        answers.add_query(
            f"new question {i}",
            vec,
            json.loads(payload(i)),
            namespace="bench-inserts",
            fingerprint="fp",
        )
    rate1 = len(extra) / (time.perf_counter() - t)
    from medlit.cache.chunking import chunk_article

    t = time.perf_counter()
    for a in range(200):
        art = Article(
            pmid=f"x{a}",
            title="New article",
            abstract=[
                AbstractSection(label=f"S{j}", text=f"Part {j}.")
                for j in range(CHUNKS_PER_ARTICLE - 1)
            ],
        )
        store.upsert_article(
            art,
            content_hash="h",
            chunks=chunk_article(art),
            embeddings=clustered(CHUNKS_PER_ARTICLE, rng),
            now=time.time(),
        )
    rate2 = 200 / (time.perf_counter() - t)
    # Leave the database as filled, so that --keep / --reuse measure the same sizes.
    answers.clear(namespace="bench-inserts")
    with store.transaction() as conn:
        conn.execute("DELETE FROM articles WHERE key LIKE 'pmid:x%'")
    if isinstance(store, SqliteStore):
        store._index("answers"), store._index("chunks")  # saved in step by close()
    rows.append(
        (
            "inserts/s tier 1 / tier 2",
            f"{rate1:,.0f} answers / {rate2:,.0f} "
            f"articles ({rate2 * CHUNKS_PER_ARTICLE:,.0f} chunks)",
        )
    )
    sizes = store.size_on_disk()
    t = time.perf_counter()
    store.close()
    rows.append(("close (save indexes)", f"{time.perf_counter() - t:.1f} s"))

    if backend == "sqlite":
        opener = (
            "from medlit.storage.sqlite import SqliteStore;"
            f"s=SqliteStore({str(db)!r}, cache=CacheSettings(answer_capacity={n1 + 10_000}));"
        )
    else:
        opener = (
            "from medlit.storage.postgres import PostgresStore;"
            f"s=PostgresStore({url!r}, cache=CacheSettings(answer_capacity={n1 + 10_000}));"
        )
    probe = (
        "import time, numpy as np; t=time.perf_counter();"
        "from medlit.cache import AnswerCache;"
        "from medlit.config import CacheSettings; from medlit.log import configure_logging;"
        f"configure_logging('warning');{opener}"
        "q=s.read('SELECT question FROM answers WHERE id = 1')[0][0];"
        "r=AnswerCache(s, s._cfg).search_query(q, V, namespace='bench', fingerprint='fp');"
        "print(time.perf_counter()-t, r.hit)"
    ).replace("V,", f"np.array({v1[0].tolist()!r}, dtype=np.float32),")
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    wall = time.perf_counter() - t
    rows.append(
        (
            "cold process: import+open+lookup",
            f"{float(out[0]) * 1000:.0f} ms (hit={out[1]}; whole process {wall:.2f} s)",
        )
    )
    size = sum(sizes.values())
    detail = ", ".join(f"{k} {v / 2**20:.0f} MB" for k, v in sizes.items() if v > 2**20)
    rows.append(("size on disk", f"{size / 2**20:,.0f} MB ({detail})"))
    figures = {
        "lookup_p99_ms": p99_1,
        "recall_at_10": r2,
        "chunk_search_p99_ms": p99_2,
        "product_recall_at_10": rp,
    }
    return rows, figures


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print(f"{title:<{width}}  value")
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="N for both tiers.")
    parser.add_argument("--tier1-entries", type=int, help="Tier-1 answers (default: --entries).")
    parser.add_argument("--tier2-chunks", type=int, help="Tier-2 chunks (default: --entries).")
    parser.add_argument("--queries", type=int, default=1000, help="Timed lookups per tier.")
    parser.add_argument(
        "--cold-queries",
        type=int,
        default=200,
        help="Lookups per tier timed apart, before the --queries ones (indexes paging in).",
    )
    parser.add_argument("--recall-queries", type=int, default=500)
    parser.add_argument(
        "--backend",
        default="sqlite",
        help="sqlite, postgres, or both comma-separated (same data and queries; ratio shown).",
    )
    parser.add_argument(
        "--database-url",
        help="PostgreSQL for --backend postgres (default: a pgserver started in the work dir; "
        "the benchmark fills its tables, so give it an empty database or schema).",
    )
    parser.add_argument("--dir", type=Path, help="Where to build (default: a temp dir).")
    parser.add_argument("--keep", action="store_true", help="Keep the database afterwards.")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="With --dir: measure the databases an earlier run of the same sizes kept there "
        "(SQLite, and the pgserver PostgreSQL), skipping the fill (~20 min at a million chunks "
        "on SQLite, ~10 min at 200,000 on PostgreSQL).",
    )
    parser.add_argument(
        "--ef-answers", type=int, help="Tier-1 HNSW search width (default: the setting's)."
    )
    parser.add_argument(
        "--ef-chunks", type=int, help="Tier-2 HNSW search width (default: the setting's)."
    )
    args = parser.parse_args()
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    if not backends or set(backends) - {"sqlite", "postgres"}:
        sys.exit("--backend: sqlite, postgres or postgres,sqlite")
    configure_logging("warning")
    n1 = args.tier1_entries or args.entries
    n2 = max(CHUNKS_PER_ARTICLE, args.tier2_chunks or args.entries)
    work = args.dir or Path(tempfile.mkdtemp(prefix="medlit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    results: dict[str, tuple[list[tuple[str, str]], dict[str, float]]] = {}
    try:
        v1, v2 = clustered(n1, rng), clustered(n2, rng)
        for backend in backends:
            if backend == "postgres":
                from pg_bench import pg_server

                with pg_server(args.database_url, work, reuse=args.reuse) as url:
                    results[backend] = measure(backend, args, v1, v2, work, url)
            else:
                results[backend] = measure(backend, args, v1, v2, work, None)

        from medlit.embeddings.onnx import OnnxEmbedder

        emb = OnnxEmbedder()
        t = time.perf_counter()
        emb.embed(["warm up the model"])
        load = time.perf_counter() - t
        q_times = []
        for i in range(50):
            t = time.perf_counter()
            emb.embed([f"Does drug {i} reduce blood pressure in older adults with diabetes?"])
            q_times.append(time.perf_counter() - t)
        e50, e99 = percentiles(q_times)
        embed_row = ("embed one query p50 / p99", f"{e50:.1f} / {e99:.1f} ms (load {load:.2f} s)")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(work, ignore_errors=True)

    for backend, (rows, _) in results.items():
        print_table(f"{backend} measure", [*rows, embed_row])
        print()
    if len(results) == 2:
        pg, lite = results["postgres"][1], results["sqlite"][1]
        print_table(
            "postgres / sqlite",
            [
                (name, f"{pg[name]:.3f} / {lite[name]:.3f} = {pg[name] / lite[name]:.2f}x")
                for name in ("lookup_p99_ms", "chunk_search_p99_ms")
                if lite[name] > 0
            ],
        )
    prefix = len(results) > 1
    print(
        " ".join(
            f"{backend + '_' if prefix else ''}{name}={value:.3f}"
            for backend, (_, figures) in results.items()
            for name, value in figures.items()
        )
    )


if __name__ == "__main__":
    main()
