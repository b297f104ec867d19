"""A tenant's tier-1 lookup does not depend on another tenant's answers (time, rows, recall).

::

    python benchmarks/tier1_tenants.py                       # both backends, 20,000 others
    python benchmarks/tier1_tenants.py --backend sqlite --others 100000

Fills tier 1 with one *large* tenant (``--others`` answers, all near the queries) and one small
tenant (``--own`` answers, one of them the right answer, farther from the query than the large
tenant's), then measures the small tenant's ``search_answers`` through the store: p50 latency,
the rows or candidates it examined (the store's ``answer_candidates`` counter) and whether it
found its own answer, first with the large tenant empty and then full. On PostgreSQL it also
measures the shared HNSW plan (``answer_exact_scan_max=0``) that a namespace above the
threshold uses, for comparison.

Last line: ``<backend>_own_p50_ms=... <backend>_examined=... <backend>_found=...`` with the
large tenant full.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from medlit.config import CacheSettings  # noqa: E402
from medlit.storage.base import Store  # noqa: E402
from pg_bench import pg_server  # noqa: E402

DIM = 384


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def near(base: np.ndarray, noise: float, rng: np.random.Generator, n: int) -> np.ndarray:
    out = base[None, :] + noise * unit(rng, n)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def bulk_insert(store: Store, namespace: str, vectors: np.ndarray, start: int) -> None:
    """Rows through the store's own table (portable SQL), in one transaction."""
    now = time.time()
    sqlite = type(store).__name__ == "SqliteStore"
    lru = ", lru" if sqlite else ""  # PostgreSQL takes it from a sequence
    rows = [
        (namespace, f"q{i}", f"h{namespace}{i}", vec.tobytes() if sqlite else vec, now, now)
        + ((i + 1,) if sqlite else ())
        for i, vec in enumerate(vectors, start=start)
    ]
    marks = ", ?" if sqlite else ""
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO answers (namespace, fingerprint, question, question_hash, payload, "
            f"retrieval_score, embedding, created_at, last_used_at{lru}) "
            f"VALUES (?, 'fp', ?, ?, '{{}}', 0.7, ?, ?, ?{marks})",
            rows,
        )


def measure(store: Store, queries: np.ndarray, own_id_question: str) -> tuple[float, float, float]:
    """(p50 ms, rows examined per lookup, share of lookups that found the own answer)."""
    store.search_answers(queries[0], min_similarity=0.8, namespace="small")  # open, warm
    before = int(getattr(store, "answer_candidates", 0))
    times, found = [], 0
    for q in queries:
        t = time.perf_counter()
        rows = store.search_answers(q, min_similarity=0.8, namespace="small", limit=5)
        times.append(time.perf_counter() - t)
        found += any(r.question == own_id_question for r, _ in rows)
    examined = (int(getattr(store, "answer_candidates", 0)) - before) / len(queries)
    return float(np.median(times) * 1000), examined, found / len(queries)


def run(backend: str, args: argparse.Namespace, work: Path) -> list[tuple[str, Any]]:
    rng = np.random.default_rng(7)
    base = unit(rng, 1)[0]
    queries = near(base, 0.02, rng, args.queries)
    own_answer = near(base, 0.3, rng, 1)  # similar enough, but farther than the others'
    own_rest = unit(rng, args.own - 1)
    others = near(base, 0.1, rng, args.others)
    results: list[tuple[str, Any]] = []

    def open_store(cache: CacheSettings) -> Any:
        if backend == "sqlite":
            from medlit.storage.sqlite import SqliteStore

            return SqliteStore(work / "t1.sqlite3", dim=DIM, cache=cache)
        from medlit.storage.postgres import PostgresStore

        return PostgresStore(url, dim=DIM, cache=cache, pool_size=2)

    server = pg_server(args.database_url, work) if backend == "postgres" else nullcontext("")
    with server as url:
        store = open_store(CacheSettings())
        try:
            bulk_insert(store, "small", own_answer, 0)
            bulk_insert(store, "small", own_rest, 1)
            empty = measure(store, queries, "q0")
            bulk_insert(store, "big", others, 0)
            if backend == "sqlite":
                store.answer_index("big")  # built now, not inside the timings
            full = measure(store, queries, "q0")
        finally:
            store.close()
        rows = [("others empty", empty), (f"others {args.others}", full)]
        if backend == "postgres":
            store = open_store(CacheSettings(answer_exact_scan_max=0))
            try:
                rows.append((f"others {args.others}, shared HNSW", measure(store, queries, "q0")))
            finally:
                store.close()
    for label, (p50, examined, found) in rows:
        results.append((f"{backend}: {label}", f"{p50:.2f} ms, {examined:.0f} rows, {found:.2f}"))
    results.append(("_last", full))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="sqlite,postgres", help="sqlite, postgres or both.")
    parser.add_argument("--others", type=int, default=20_000, help="The large tenant's answers.")
    parser.add_argument("--own", type=int, default=1_000, help="The small tenant's answers.")
    parser.add_argument("--queries", type=int, default=200, help="Lookups measured.")
    parser.add_argument("--database-url", help="PostgreSQL (default: a pgserver).")
    args = parser.parse_args()
    figures = []
    print(f"{'small tenant lookup':<40}  p50, rows examined a lookup, own answer found")
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backend.split(","):
            work = Path(tmp) / backend
            work.mkdir()
            for label, value in run(backend, args, work):
                if label == "_last":
                    p50, examined, found = value
                    figures.append(
                        f"{backend}_own_p50_ms={p50:.2f} {backend}_examined={examined:.0f} "
                        f"{backend}_found={found:.2f}"
                    )
                else:
                    print(f"{label:<40}  {value}")
    print(" ".join(figures))


if __name__ == "__main__":
    main()
