"""Tier-1 answer-cache quality on labelled question pairs (precision, recall, wrong hits).

Usage::

    python benchmarks/cache_pairs.py ../shared/data/mqp/mqp_dev.csv [--cv 11] [--limit N]

PAIRS.csv has no header: ``id, question_1, question_2, label`` (1 = the same question reworded,
0 = a different question). For each row an answer is cached under question_1 in a fresh cache,
then question_2 is looked up with the default settings through the real
:class:`medlit.cache.AnswerCache` on a temporary SQLite store: label 1 and a hit is a correct
hit, label 0 and a hit is a wrong hit (a wrong medical answer served).

"Fresh cache": every row gets its own namespace and the namespace is cleared after the row, so
the store never holds more than the one entry a row put there (same isolation as a new store,
without reopening SQLite and the ANN index 1,500 times).

The tau sweep runs the same real lookups once with tau at the bottom of the sweep (guard on, and
guard off for the plain-cosine baseline); with a single entry per cache, the outcome at a higher
tau is exactly "hit at the low tau and similarity >= tau". ``--cv K`` reports grouped K-fold
results (groups = the id column): tau is chosen on the other folds by the rule used for the
default (the lowest tau whose precision reaches ``--target-precision``) and scored on the
held-out fold. The last line is ``precision=... recall=... wrong_hit_rate=...`` for the
default settings on the whole file.

``--verify`` adds the verified band (:mod:`medlit.cache.verify`) through the configured LLM
(``MEDLIT_LLM_*``, task ``verify_cache_hit``): every pair whose similarity is in
``[--band-lower, tau)`` and that passed the guard is scored by the verifier (P("Yes"), both
orders, the lower; the second order is not asked when the first is below 0.5). Scores are kept
in ``--scores FILE`` (default under /tmp, per model) so reruns cost no call. It reports, for the
whole file and in grouped CV by doctor (threshold chosen on the other folds: the lowest whose
band precision reaches ``--target-precision``), precision, recall, wrong-hit rate and
verification calls per verified hit. ``--calibrate`` prints the threshold the whole file
gives for the configured model (what to ship, or to set as
``MEDLIT_CACHE_VERIFY_BAND='{"threshold": T}'``).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from medlit.cache import AnswerCache, CachedAnswer
from medlit.config import CacheSettings, LLMSettings, Settings
from medlit.embeddings import load_embedder
from medlit.log import configure_logging
from medlit.storage.sqlite import SqliteStore
from medlit.types import Citation

SWEEP = [0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82, 0.84, 0.86, 0.88, 0.90, 0.92, 0.94]
_FINGERPRINT = "bench-pairs"
_PAYLOAD = CachedAnswer(
    answer="A cached answer [1].",
    citations=[Citation(pmid="1", title="A cited article")],
    retrieval_score=1.0,
)


@dataclass
class Outcome:
    """One row's lookup: similarity and whether the cache served the answer."""

    group: str
    label: int
    similarity: float
    hit: bool
    reason: str | None


def read_pairs(path: Path, limit: int | None) -> list[tuple[str, str, str, int]]:
    """Rows of a pairs file: (group, question_1, question_2, label)."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = [(r[0], r[1], r[2], int(r[3])) for r in csv.reader(fh) if len(r) >= 4]
    return rows[:limit] if limit else rows


def run_lookups(
    rows: list[tuple[str, str, str, int]],
    vectors: dict[str, np.ndarray],
    store: SqliteStore,
    cache_settings: CacheSettings,
    guard: Any = None,
) -> tuple[list[Outcome], float]:
    """Cache question_1 and look up question_2, one fresh namespace per row (``guard``: the
    cache's default when None)."""
    cache = AnswerCache(store, cache_settings, guard=guard)
    outcomes: list[Outcome] = []
    lookup_s = 0.0
    for i, (group, q1, q2, label) in enumerate(rows):
        namespace = f"pair-{i}"
        cache.add_query(q1, vectors[q1], _PAYLOAD, namespace=namespace, fingerprint=_FINGERPRINT)
        start = time.perf_counter()
        found = cache.search_query(q2, vectors[q2], namespace=namespace, fingerprint=_FINGERPRINT)
        lookup_s += time.perf_counter() - start
        similarity = found.similarity or float(vectors[q1] @ vectors[q2])
        outcomes.append(Outcome(group, label, similarity, found.hit, found.guard_reason))
        cache.clear(namespace)
    return outcomes, lookup_s / max(len(rows), 1)


def score(outcomes: list[Outcome], tau: float) -> tuple[float, float, float, int, int]:
    """(precision, recall, wrong-hit rate, correct hits, wrong hits) at ``tau``."""
    hits = [o for o in outcomes if o.hit and o.similarity >= tau]
    good = sum(o.label == 1 for o in hits)
    bad = len(hits) - good
    positives = sum(o.label == 1 for o in outcomes) or 1
    negatives = sum(o.label == 0 for o in outcomes) or 1
    precision = good / len(hits) if hits else 1.0
    return precision, good / positives, bad / negatives, good, bad


def choose_tau(outcomes: list[Outcome], target: float) -> float:
    """The lowest tau of a fine grid whose precision reaches ``target`` (most recall)."""
    for tau in np.arange(0.70, 0.96, 0.005):
        if score(outcomes, float(tau))[0] >= target:
            return float(round(tau, 3))
    return 0.96


def cross_validate(
    outcomes: list[Outcome], folds: int, target: float
) -> tuple[float, float, float, int, int]:
    """Grouped K-fold: tau chosen on K-1 folds, scored on the held-out one; returns the pooled
    held-out (precision, recall, wrong-hit rate, correct hits, wrong hits)."""
    groups = sorted({o.group for o in outcomes})
    k = min(folds, len(groups))
    held: list[Outcome] = []
    print(f"\ngrouped {k}-fold CV by id (tau chosen on the other folds, target {target}):")
    print(f"{'fold':>4} {'groups':>14} {'tau':>6} {'prec':>6} {'recall':>7} {'wrong':>6}")
    for f in range(k):
        test_groups = set(groups[f::k])
        train = [o for o in outcomes if o.group not in test_groups]
        test = [o for o in outcomes if o.group in test_groups]
        tau = choose_tau(train, target)
        fold_hits = [
            Outcome(o.group, o.label, o.similarity, o.hit and o.similarity >= tau, None)
            for o in test
        ]
        held.extend(fold_hits)
        p, r, w, _, _ = score(fold_hits, 0.0)
        print(
            f"{f:>4} {','.join(sorted(test_groups)):>14} {tau:>6.3f} {p:>6.3f} {r:>7.3f} {w:>6.3f}"
        )
    p, r, w, good, bad = score(held, 0.0)
    print(
        f"held-out pooled: precision={p:.3f} recall={r:.3f} wrong_hit_rate={w:.3f} "
        f"({good} correct, {bad} wrong hits)"
    )
    return p, r, w, good, bad


def run_verify(
    rows: list[tuple[str, str, str, int]],
    guarded: list[Outcome],
    cache: CacheSettings,
    llm: LLMSettings,
    args: argparse.Namespace,
) -> str:
    """Score the band pairs with the configured verifier and report; returns the last line."""
    import hashlib

    from medlit.llm.tasks import resolve_route
    from verify_scores import BandRow, ScoreFile, report, run_scoring

    model = resolve_route(llm, "verify_cache_hit").model or "none"
    path = args.scores or Path(tempfile.gettempdir()) / f"medlit-verify-scores-{model}.jsonl"
    band = {
        i for i, o in enumerate(guarded) if o.hit and args.band_lower <= o.similarity < cache.tau
    }

    def shuffled(label: int) -> list[int]:
        def key(i: int) -> str:
            return hashlib.sha256(rows[i][1].encode() + rows[i][2].encode()).hexdigest()

        return sorted((i for i in band if rows[i][3] == label), key=key)

    # Alternate different/same pairs in a fixed random order, so that a run cut short by its
    # time budget still samples both (precision rests on the first, recall on the second).
    rank = {i: (n, label) for label in (0, 1) for n, i in enumerate(shuffled(label))}
    pairs = [(rows[i][1], rows[i][2]) for i in sorted(band, key=rank.__getitem__)]
    # The benchmark waits for a busy shared server; the ask path's limit is verify_band.timeout_s.
    slow = llm.model_copy(update={"timeout_s": 900.0, "max_retries": 1})
    model, found = run_scoring(
        pairs, slow, ScoreFile(path), floor=0.5, budget_s=args.budget_min * 60
    )
    scored = {i for i in band if (rows[i][1], rows[i][2]) in found}
    # A pair scored stands for the band pairs of its label left unscored (weighted estimate).
    weight = {}
    for label in (0, 1):
        total = sum(rows[i][3] == label for i in band)
        done = sum(rows[i][3] == label for i in scored)
        weight[label] = total / done if done else 0.0
    band_rows: list[BandRow] = []
    for i, (outcome, row) in enumerate(zip(guarded, rows, strict=True)):
        if i in band and i not in scored:
            continue
        above = outcome.hit and outcome.similarity >= cache.tau
        score = found[(row[1], row[2])] if i in scored else None
        band_rows.append(BandRow(row[0], row[3], above, score, weight[row[3]] if score else 1.0))
    n_neg = sum(rows[i][3] == 0 for i in band)
    s_neg = sum(rows[i][3] == 0 for i in scored)
    print(
        f"\nband [{args.band_lower}, {cache.tau}) after the guard: {len(band)} pairs "
        f"({n_neg} different, {len(band) - n_neg} same); scored {s_neg} different, "
        f"{len(scored) - s_neg} same (weights {weight[0]:.2f} / {weight[1]:.2f}: each scored "
        f"pair stands for that many band pairs of its label); scores: {path}"
    )
    threshold, pooled, per_hit = report(band_rows, args.cv or 11, args.target_precision, model)
    if args.calibrate:
        print(
            f"\ncalibrated threshold for {model!r} (verified hits reach precision "
            f"{args.target_precision} on the whole file): {threshold}"
        )
    return (
        f"model={model} precision={pooled.precision:.3f} recall={pooled.recall:.3f} "
        f"wrong_hit_rate={pooled.wrong_rate:.3f} calls_per_verified_hit={per_hit:.2f} "
        f"threshold={threshold}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path, help="CSV: id, question_1, question_2, label")
    parser.add_argument("--cv", type=int, default=0, help="grouped K-fold report (0: off)")
    parser.add_argument("--target-precision", type=float, default=0.99)
    parser.add_argument("--limit", type=int, default=None, help="first N rows only")
    parser.add_argument(
        "--verify", action="store_true", help="score the band with the configured LLM"
    )
    parser.add_argument(
        "--calibrate", action="store_true", help="print the verifier threshold (implies --verify)"
    )
    parser.add_argument("--band-lower", type=float, default=0.78, help="lowest band cosine")
    parser.add_argument("--scores", type=Path, default=None, help="verifier score cache file")
    parser.add_argument(
        "--budget-min", type=float, default=600.0, help="stop asking the verifier after N min"
    )
    args = parser.parse_args(argv)
    configure_logging("warning")
    rows = read_pairs(args.pairs, args.limit)
    if not rows:
        print("no rows", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="medlit-pairs-") as tmp:
        settings = Settings(home=Path(tmp))
        defaults = settings.cache
        store = SqliteStore.open(settings)
        try:
            embedder = load_embedder(settings)
            texts = sorted({q for _, q1, q2, _ in rows for q in (q1, q2)})
            start = time.perf_counter()
            matrix = embedder.embed(texts)
            embed_s = time.perf_counter() - start
            vectors = dict(zip(texts, np.asarray(matrix, dtype=np.float32), strict=True))
            low = min(SWEEP)
            default, lookup_s = run_lookups(rows, vectors, store, defaults)
            guarded, _ = run_lookups(rows, vectors, store, defaults.model_copy(update={"tau": low}))
            plain, _ = run_lookups(
                rows, vectors, store, defaults.model_copy(update={"tau": low, "guard": False})
            )
        finally:
            store.close()
    n_pos = sum(r[3] == 1 for r in rows)
    print(f"{len(rows)} pairs ({n_pos} same, {len(rows) - n_pos} different) from {args.pairs}")
    print(
        f"embedding {len(texts)} questions: {embed_s:.1f} s; "
        f"lookup (cache + guard, embedding excluded): {lookup_s * 1000:.2f} ms/row"
    )
    print(
        f"\n{'tau':>5} | {'guard: prec':>11} {'recall':>7} {'wrong':>6} | "
        f"{'cosine only: prec':>17} {'recall':>7} {'wrong':>6}"
    )
    for tau in SWEEP:
        g, c = score(guarded, tau), score(plain, tau)
        print(
            f"{tau:>5.2f} | {g[0]:>11.3f} {g[1]:>7.3f} {g[2]:>6.3f} | "
            f"{c[0]:>17.3f} {c[1]:>7.3f} {c[2]:>6.3f}"
        )
    reasons: dict[str, int] = {}
    for o in guarded:
        if o.reason and o.similarity >= defaults.tau:
            kind = o.reason.split(":")[0]
            reasons[kind] = reasons.get(kind, 0) + 1
    print(f"\nguard rejections at tau {defaults.tau} by reason: {dict(sorted(reasons.items()))}")
    if args.cv:
        cross_validate(guarded, args.cv, args.target_precision)
    if args.verify or args.calibrate:
        print(run_verify(rows, guarded, defaults, settings.llm, args))
        return 0
    p, r, w, good, bad = score(default, 0.0)
    print(
        f"\ndefault settings (tau={defaults.tau}, guard={'on' if defaults.guard else 'off'}): "
        f"{good} correct hits, {bad} wrong hits"
    )
    print(f"precision={p:.3f} recall={r:.3f} wrong_hit_rate={w:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
