"""The answer cache on its contrast set (near questions that ask something else, and true
rewordings), the held-out Medical Question Pairs figures, and the guard's cost per check.

Usage::

    python benchmarks/cache_contrast.py ../shared/data [--contrast FILE] [--cv 11]

The contrast set (``benchmarks/data/cache_contrast.csv``, made by
``benchmarks/make_cache_contrast.py``) holds, for real questions (PubMedQA titles, MQP
questions, the issue's examples), minimal edits that ask something else (by kind: direction,
population, timing, intervention, outcome, site, actor, comparison) and true rewordings (by
kind: spelling, inflection, synonym, order, framing). Each pair goes through the real
:class:`medlit.cache.AnswerCache` (real embedder, temporary SQLite store, default settings, one
fresh namespace per pair): the cached question is stored, the edit or rewording looked up.

Each row has its ``part`` (``make_cache_contrast.py``): ``check``, edits of check-half
titles never looked at while the guard was written (the headline); ``check-seen``, the
check-half titles the guard was checked against while it was written; ``tune``, the rest (the
tune half's titles, MQP, the issue's examples), which rules may be written from. Per part and
kind it reports how many pairs reach ``tau`` (a plain cosine cache would serve them), how
many the cache serves with the guard (an edit served is a wrong hit), and the same with the
previous guard (the related-question checks alone, ``QuestionGuard(word_rule=False)``) for
comparison. Then the MQP pairs (``mqp/mqp_dev.csv``) through the same cache: precision, recall,
wrong-hit rate at the default tau and pooled over grouped K-fold CV by doctor (tau chosen on the
other folds), as ``benchmarks/cache_pairs.py`` computes them. Then the guard's time per check on
every pair of both sets: with both questions' words already read, with the new question read
for the first time (a lookup's usual case), and the first check of the process (vocabularies and
lemmatiser loaded). The last line is ``name=value`` figures: ``contrast_*`` and ``reword_*``
of the ``check`` part, then ``tune_*`` and ``seen_*`` (``check-seen``) of the others.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from cache_pairs import Outcome, cross_validate, read_pairs, run_lookups, score
from medlit.cache import AnswerCache, CachedAnswer
from medlit.cache import wording as wording_module
from medlit.cache.guard import QuestionGuard
from medlit.config import CacheSettings, Settings
from medlit.embeddings import load_embedder
from medlit.log import configure_logging
from medlit.storage.sqlite import SqliteStore
from medlit.types import Citation

_PAYLOAD = CachedAnswer(
    answer="A cached answer [1].",
    citations=[Citation(pmid="1", title="A cited article")],
    retrieval_score=1.0,
)


def _contrast_lookups(
    rows: list[dict[str, str]],
    vectors: dict[str, np.ndarray],
    store: SqliteStore,
    settings: CacheSettings,
    guard: QuestionGuard | None,
) -> list[bool]:
    """Whether the cache serves the cached question's answer for each row's asked question."""
    cache = AnswerCache(store, settings, guard=guard)
    served = []
    for i, r in enumerate(rows):
        ns = f"contrast-{i}"
        cache.add_query(r["cached"], vectors[r["cached"]], _PAYLOAD, namespace=ns, fingerprint="c")
        found = cache.search_query(r["asked"], vectors[r["asked"]], namespace=ns, fingerprint="c")
        served.append(found.hit)
        cache.clear(ns)
    return served


#: The parts of the contrast set, the held-out one (the headline) first.
PARTS = ("check", "check-seen", "tune")
Outcomes = list[tuple[dict[str, str], bool, bool, bool]]


def _table(outcomes: Outcomes) -> None:
    """Per part and kind: pairs, pairs reaching tau, served, served by the previous guard."""
    print(
        f"\n{'part':>10} {'group':>6} {'kind':<13} {'pairs':>5} {'>=tau':>6} "
        f"{'served':>7} {'served by the previous guard':>29}"
    )
    table: Counter[tuple[str, str, str, str]] = Counter()
    for r, hit, old, near in outcomes:
        key = (r["part"], r["group"], r["kind"])
        table[(*key, "n")] += 1
        table[(*key, "near")] += near
        table[(*key, "hit")] += hit
        table[(*key, "old")] += old
    for part in PARTS:
        for group, kind in sorted({(r["group"], r["kind"]) for r, *_ in outcomes}):
            key = (part, group, kind)
            if table[(*key, "n")]:
                print(
                    f"{part:>10} {group:>6} {kind:<13} {table[(*key, 'n')]:>5} "
                    f"{table[(*key, 'near')]:>6} {table[(*key, 'hit')]:>7} "
                    f"{table[(*key, 'old')]:>29}"
                )


def _part_figures(outcomes: Outcomes, part: str) -> dict[str, int]:
    """One part's wrong hits and rewordings served (and with the previous guard)."""
    edits = [(hit, old, near) for r, hit, old, near in outcomes if r["part"] == part and
             r["group"] == "edit"]  # fmt: skip
    rewords = [(hit, old, near) for r, hit, old, near in outcomes if r["part"] == part and
               r["group"] == "reword"]  # fmt: skip
    return {
        "edits": len(edits),
        "wrong_hits": sum(hit for hit, _, _ in edits),
        "wrong_hits_previous_guard": sum(old for _, old, _ in edits),
        "edits_reaching_tau": sum(near for _, _, near in edits),
        "rewordings": len(rewords),
        "reword_hits": sum(hit for hit, _, _ in rewords),
        "reword_hits_previous": sum(old for _, old, _ in rewords),
        "reword_reaching_tau": sum(near for _, _, near in rewords),
    }


def _timings(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """The guard's CPU microseconds per check (thread time: a busy machine's waits excluded):
    first of the process, new question read for the first time, both read before."""
    guard = QuestionGuard()
    wording_module.wording.cache_clear()
    wording_module._keys.cache_clear()
    start = time.thread_time()
    guard.check(*pairs[0])
    first = time.thread_time() - start
    for new, old in pairs:  # every word's spelling and lemmas now known, as in a long run
        guard.check(new, old)
    cold: list[float] = []
    warm: list[float] = []
    for new, old in pairs:
        wording_module.wording.cache_clear()
        wording_module._keys.cache_clear()
        wording_module._keys(old)  # the cached question has been read before, the new one not
        start = time.thread_time()
        guard.check(new, old)
        cold.append(time.thread_time() - start)
        start = time.thread_time()
        guard.check(new, old)
        warm.append(time.thread_time() - start)
    return {
        "first_ms": first * 1e3,
        "cold_mean_us": float(np.mean(cold)) * 1e6,
        "cold_p99_us": float(np.percentile(cold, 99)) * 1e6,
        "warm_mean_us": float(np.mean(warm)) * 1e6,
        "warm_p99_us": float(np.percentile(warm, 99)) * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the shared data folder (../shared/data)")
    parser.add_argument(
        "--contrast",
        type=Path,
        default=Path(__file__).parent / "data" / "cache_contrast.csv",
        help="the contrast set (CSV: group, kind, source, cached, asked)",
    )
    parser.add_argument("--cv", type=int, default=11, help="grouped K-fold on MQP (0: off)")
    parser.add_argument("--target-precision", type=float, default=0.99)
    args = parser.parse_args(argv)
    configure_logging("warning")
    mqp_path = args.data / "mqp" / "mqp_dev.csv"
    if not mqp_path.exists() or not args.contrast.exists():
        print(f"needs {mqp_path} and {args.contrast}", file=sys.stderr)
        return 2
    with args.contrast.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if any("part" not in r for r in rows):
        print(f"{args.contrast} has no part column: make it with make_cache_contrast.py")
        return 2
    pairs = read_pairs(mqp_path, None)
    timings = _timings(
        [(r["asked"], r["cached"]) for r in rows] + [(q2, q1) for _, q1, q2, _ in pairs]
    )
    with tempfile.TemporaryDirectory(prefix="medlit-contrast-") as tmp:
        settings = Settings(home=Path(tmp))
        defaults = settings.cache
        store = SqliteStore.open(settings)
        try:
            embedder = load_embedder(settings)
            texts = sorted(
                {r[k] for r in rows for k in ("cached", "asked")}
                | {q for _, q1, q2, _ in pairs for q in (q1, q2)}
            )
            vectors = dict(
                zip(texts, np.asarray(embedder.embed(texts), dtype=np.float32), strict=True)
            )
            served = _contrast_lookups(rows, vectors, store, defaults, None)
            before = _contrast_lookups(
                rows, vectors, store, defaults, QuestionGuard(word_rule=False)
            )
            default, lookup_s = run_lookups(pairs, vectors, store, defaults)
            low = defaults.model_copy(update={"tau": 0.70})
            guarded, _ = run_lookups(pairs, vectors, store, low)
        finally:
            store.close()

    tau = defaults.tau
    reached = [float(vectors[r["cached"]] @ vectors[r["asked"]]) >= tau for r in rows]
    print(f"contrast set: {len(rows)} pairs from {args.contrast}; tau {tau}")
    outcomes = list(zip(rows, served, before, reached, strict=True))
    _table(outcomes)
    figures = {part: _part_figures(outcomes, part) for part in PARTS}
    for part in PARTS:
        f = figures[part]
        print(
            f"{part}: edits {f['wrong_hits']} of {f['edits']} served (wrong hits; previous "
            f"guard {f['wrong_hits_previous_guard']}, {f['edits_reaching_tau']} reach tau); "
            f"rewordings {f['reword_hits']} of {f['rewordings']} served, "
            f"{f['reword_reaching_tau']} reach tau (previous guard {f['reword_hits_previous']})"
        )
    check = figures["check"]
    others = " ".join(
        f"{name}_{key}={figures[part][key]}"
        for part, name in (("tune", "tune"), ("check-seen", "seen"))
        for key in ("wrong_hits", "edits", "reword_hits", "rewordings")
    )

    p, r, w, good, bad = score(default, 0.0)
    print(
        f"\nMQP {mqp_path}: {len(pairs)} pairs, default settings: precision={p:.3f} "
        f"recall={r:.3f} wrong_hit_rate={w:.3f} ({good} correct, {bad} wrong hits); "
        f"lookup {lookup_s * 1000:.2f} ms/row"
    )
    print(f"\n{'tau':>5} {'prec':>6} {'recall':>7} {'wrong':>6}")
    for t in (0.80, 0.84, 0.88, 0.92):
        sp, sr, sw, _, _ = score(guarded, t)
        print(f"{t:>5.2f} {sp:>6.3f} {sr:>7.3f} {sw:>6.3f}")
    held: tuple[float, float, float, int, int] = (p, r, w, good, bad)
    if args.cv:
        held = cross_validate(
            [Outcome(o.group, o.label, o.similarity, o.hit, None) for o in guarded],
            args.cv,
            args.target_precision,
        )
    print(
        "\nguard CPU time per check: first of the process {first_ms:.0f} ms; new question read "
        "for the first time {cold_mean_us:.0f} us mean, {cold_p99_us:.0f} us p99; both read "
        "before {warm_mean_us:.1f} us mean, {warm_p99_us:.1f} us p99".format(**timings)
    )
    print(
        f"contrast_wrong_hits={check['wrong_hits']} contrast_edits={check['edits']} "
        f"contrast_wrong_hits_previous_guard={check['wrong_hits_previous_guard']} "
        f"reword_hits={check['reword_hits']} reword_reaching_tau={check['reword_reaching_tau']} "
        f"rewordings={check['rewordings']} {others} "
        f"mqp_precision={p:.3f} mqp_recall={r:.3f} "
        f"mqp_heldout_precision={held[0]:.3f} mqp_heldout_recall={held[1]:.3f} "
        f"guard_cold_us={timings['cold_mean_us']:.0f} guard_warm_us={timings['warm_mean_us']:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
