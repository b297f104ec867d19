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
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from cache_pairs import Outcome, cross_validate, read_pairs, run_lookups, score
from medlit.cache import AnswerCache, CachedAnswer
from medlit.cache import wording as wording_module
from medlit.cache.guard import GuardVerdict, QuestionGuard
from medlit.cache.word_pairs import JUDGE_THRESHOLD, pairs_between
from medlit.config import CacheSettings, Settings
from medlit.embeddings import load_embedder
from medlit.log import configure_logging
from medlit.storage.sqlite import SqliteStore
from medlit.types import Citation
from medlit.words.seed import seed_relation

_PAYLOAD = CachedAnswer(
    answer="A cached answer [1].",
    citations=[Citation(pmid="1", title="A cited article")],
    retrieval_score=1.0,
)


class _WordRule:
    """A guard that is one revision's word rule (its ``word_difference``), nothing more."""

    def __init__(self, difference: Callable[[str, str], Any]) -> None:
        self._difference = difference

    def check(self, new_question: str, cached_question: str) -> GuardVerdict:
        difference = self._difference(new_question, cached_question)
        return GuardVerdict(ok=not difference, reason=difference.describe() if difference else None)


def guard_at(revision: str) -> _WordRule | None:
    """The guard's word rule as of ``revision`` (``git show``), for the "before" columns; None
    without git or the revision."""
    try:
        source = subprocess.run(
            ["git", "show", f"{revision}:src/medlit/cache/wording.py"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    name = f"_wording_at_{revision}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:src/medlit/cache/wording.py", "exec"), module.__dict__)
    return _WordRule(module.word_difference)


def read_scores(path: Path | None) -> dict[tuple[str, str, str], float]:
    """``medlit cache calibrate --scores`` output: (word, word, context) -> P("Yes")."""
    if path is None:
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        a, b = sorted((row["new"], row["cached"]))
        out[(a, b, row["context"])] = float(row["score"])
    return out


def _pair_figures(
    outcomes: Outcomes,
    scores: dict[tuple[str, str, str], float],
) -> Counter[str]:
    """Rows refused at tau whose only obstacle is a word pair, by part and group: how many,
    how many the seed vocabulary lists, how many the judge's scores (if given) would serve."""
    guard = QuestionGuard()
    counts: Counter[str] = Counter()
    for r, hit, _old, near, _before in outcomes:
        if hit or not near:
            continue
        pair = pairs_between(guard, r["asked"], r["cached"])
        if pair is None:
            continue
        key = f"{r['part']}_{r['group']}"
        counts[f"{key}_pair"] += 1
        counts[f"{key}_seed"] += seed_relation(pair.new, pair.cached) is not None
        score = scores.get((*pair.words, pair.context))
        counts[f"{key}_scored"] += score is not None
        counts[f"{key}_judge"] += score is not None and score >= JUDGE_THRESHOLD
    return counts


def _contrast_lookups(
    rows: list[dict[str, str]],
    vectors: dict[str, np.ndarray],
    store: SqliteStore,
    settings: CacheSettings,
    guard: Any,
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
#: Per row: the row, served now, served by the related-question checks alone, reaches tau,
#: served by the guard of ``--before``.
Outcomes = list[tuple[dict[str, str], bool, bool, bool, bool]]


def _table(outcomes: Outcomes) -> None:
    """Per part and kind: pairs, pairs reaching tau, served now, served by the guard before
    (``--before``), served by the related-question checks alone."""
    print(
        f"\n{'part':>10} {'group':>6} {'kind':<13} {'pairs':>5} {'>=tau':>6} "
        f"{'served':>7} {'before':>7} {'related checks only':>20}"
    )
    table: Counter[tuple[str, str, str, str]] = Counter()
    for r, hit, old, near, before in outcomes:
        key = (r["part"], r["group"], r["kind"])
        table[(*key, "n")] += 1
        table[(*key, "near")] += near
        table[(*key, "hit")] += hit
        table[(*key, "old")] += old
        table[(*key, "before")] += before
    for part in PARTS:
        for group, kind in sorted({(r["group"], r["kind"]) for r, *_ in outcomes}):
            key = (part, group, kind)
            if table[(*key, "n")]:
                print(
                    f"{part:>10} {group:>6} {kind:<13} {table[(*key, 'n')]:>5} "
                    f"{table[(*key, 'near')]:>6} {table[(*key, 'hit')]:>7} "
                    f"{table[(*key, 'before')]:>7} {table[(*key, 'old')]:>20}"
                )


def _part_figures(outcomes: Outcomes, part: str) -> dict[str, int]:
    """One part's wrong hits and rewordings served (now, before, by the related checks)."""
    edits = [o[1:] for o in outcomes if o[0]["part"] == part and o[0]["group"] == "edit"]
    rewords = [o[1:] for o in outcomes if o[0]["part"] == part and o[0]["group"] == "reword"]
    return {
        "edits": len(edits),
        "wrong_hits": sum(hit for hit, *_ in edits),
        "wrong_hits_before": sum(before for *_, before in edits),
        "wrong_hits_previous_guard": sum(old for _, old, _, _ in edits),
        "edits_reaching_tau": sum(near for _, _, near, _ in edits),
        "rewordings": len(rewords),
        "reword_hits": sum(hit for hit, *_ in rewords),
        "reword_hits_before": sum(before for *_, before in rewords),
        "reword_hits_previous": sum(old for _, old, _, _ in rewords),
        "reword_reaching_tau": sum(near for _, _, near, _ in rewords),
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


def _mqp(
    label: str, default: list[Outcome], guarded: list[Outcome], args: argparse.Namespace
) -> tuple[float, float, float, float]:
    """MQP precision and recall at the default settings and held out by doctor (grouped CV,
    tau chosen on the other folds), printed; returns the four."""
    p, r, w, good, bad = score(default, 0.0)
    print(
        f"\nMQP, {label}: precision={p:.3f} recall={r:.3f} wrong_hit_rate={w:.3f} "
        f"({good} correct, {bad} wrong hits)"
    )
    held: tuple[float, float, float, int, int] = (p, r, w, good, bad)
    if args.cv:
        held = cross_validate(
            [Outcome(o.group, o.label, o.similarity, o.hit, None) for o in guarded],
            args.cv,
            args.target_precision,
        )
    return p, r, held[0], held[1]


def _mqp_pairs(pairs: list[tuple[str, str, str, int]], default: list[Outcome], tau: float) -> str:
    """MQP rows refused at tau whose only obstacle is a word pair, by label."""
    guard = QuestionGuard()
    found: Counter[int] = Counter()
    for (_, q1, q2, label), o in zip(pairs, default, strict=True):
        if not o.hit and o.similarity >= tau and pairs_between(guard, q2, q1) is not None:
            found[label] += 1
    return f"mqp_pair_same={found[1]} mqp_pair_different={found[0]}"


def _parse(argv: list[str] | None) -> argparse.Namespace:
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
    parser.add_argument(
        "--before", default="d5084ae", help="git revision of the guard's word rule to compare"
    )
    parser.add_argument(
        "--judge-scores",
        type=Path,
        help="medlit cache calibrate --scores output: what its judge would serve",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
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
    old_rule = guard_at(args.before)
    if old_rule is None:
        print(f"cannot read the guard at {args.before} (git)", file=sys.stderr)
        return 2
    pairs = read_pairs(mqp_path, None)
    timings = _timings(
        [(r["asked"], r["cached"]) for r in rows] + [(q2, q1) for _, q1, q2, _ in pairs]
    )
    with tempfile.TemporaryDirectory(prefix="medlit-contrast-") as tmp:
        settings = Settings(home=Path(tmp))
        defaults = settings.cache
        low = defaults.model_copy(update={"tau": 0.70})
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
            related = _contrast_lookups(
                rows, vectors, store, defaults, QuestionGuard(word_rule=False)
            )
            served_before = _contrast_lookups(rows, vectors, store, defaults, old_rule)
            default, lookup_s = run_lookups(pairs, vectors, store, defaults)
            guarded, _ = run_lookups(pairs, vectors, store, low)
            default_before, _ = run_lookups(pairs, vectors, store, defaults, old_rule)
            guarded_before, _ = run_lookups(pairs, vectors, store, low, old_rule)
        finally:
            store.close()

    tau = defaults.tau
    reached = [float(vectors[r["cached"]] @ vectors[r["asked"]]) >= tau for r in rows]
    print(f"contrast set: {len(rows)} pairs from {args.contrast}; tau {tau}; before: {args.before}")
    outcomes = list(zip(rows, served, related, reached, served_before, strict=True))
    _table(outcomes)
    figures = {part: _part_figures(outcomes, part) for part in PARTS}
    for part in PARTS:
        f = figures[part]
        print(
            f"{part}: edits {f['wrong_hits']} of {f['edits']} served (wrong hits; before "
            f"{f['wrong_hits_before']}, related checks only {f['wrong_hits_previous_guard']}, "
            f"{f['edits_reaching_tau']} reach tau); rewordings {f['reword_hits']} of "
            f"{f['rewordings']} served (before {f['reword_hits_before']}), "
            f"{f['reword_reaching_tau']} reach tau"
        )
    pair_counts = _pair_figures(outcomes, read_scores(args.judge_scores))
    print(
        "\nrefused at tau by a word pair alone (check part): rewordings {c_r}, of them listed by "
        "the seed vocabulary {c_rs}, served by the judge's scores {c_rj} of {c_rn} scored; "
        "edits {c_e}, listed {c_es}, served by the judge {c_ej} of {c_en} scored".format(
            c_r=pair_counts["check_reword_pair"], c_rs=pair_counts["check_reword_seed"],
            c_rj=pair_counts["check_reword_judge"], c_rn=pair_counts["check_reword_scored"],
            c_e=pair_counts["check_edit_pair"], c_es=pair_counts["check_edit_seed"],
            c_ej=pair_counts["check_edit_judge"], c_en=pair_counts["check_edit_scored"],
        )
    )  # fmt: skip
    check = figures["check"]
    others = " ".join(
        f"{name}_{key}={figures[part][key]}"
        for part, name in (("tune", "tune"), ("check-seen", "seen"))
        for key in ("wrong_hits", "edits", "reword_hits", "rewordings")
    )
    print(f"\nMQP {mqp_path}: {len(pairs)} pairs; lookup {lookup_s * 1000:.2f} ms/row")
    print(f"\n{'tau':>5} {'prec':>6} {'recall':>7} {'wrong':>6}")
    for t in (0.80, 0.84, 0.88, 0.92):
        sp, sr, sw, _, _ = score(guarded, t)
        print(f"{t:>5.2f} {sp:>6.3f} {sr:>7.3f} {sw:>6.3f}")
    mqp_before = _mqp(f"the guard at {args.before}", default_before, guarded_before, args)
    mqp = _mqp("the guard now", default, guarded, args)
    print(
        "\nguard CPU time per check: first of the process {first_ms:.0f} ms; new question read "
        "for the first time {cold_mean_us:.0f} us mean, {cold_p99_us:.0f} us p99; both read "
        "before {warm_mean_us:.1f} us mean, {warm_p99_us:.1f} us p99".format(**timings)
    )
    judge = (
        f"judge_reword_hits={check['reword_hits'] + pair_counts['check_reword_judge']} "
        f"judge_wrong_hits={pair_counts['check_edit_judge']} "
        if args.judge_scores
        else ""
    )
    print(
        f"contrast_wrong_hits={check['wrong_hits']} contrast_edits={check['edits']} "
        f"contrast_wrong_hits_before={check['wrong_hits_before']} "
        f"contrast_wrong_hits_previous_guard={check['wrong_hits_previous_guard']} "
        f"reword_hits={check['reword_hits']} reword_hits_before={check['reword_hits_before']} "
        f"reword_reaching_tau={check['reword_reaching_tau']} "
        f"rewordings={check['rewordings']} "
        f"pair_rewordings={pair_counts['check_reword_pair']} "
        f"pair_edits={pair_counts['check_edit_pair']} {judge}{others} "
        f"mqp_precision={mqp[0]:.3f} mqp_recall={mqp[1]:.3f} "
        f"mqp_heldout_precision={mqp[2]:.3f} mqp_heldout_recall={mqp[3]:.3f} "
        f"mqp_precision_before={mqp_before[0]:.3f} mqp_recall_before={mqp_before[1]:.3f} "
        f"mqp_heldout_precision_before={mqp_before[2]:.3f} "
        f"mqp_heldout_recall_before={mqp_before[3]:.3f} {_mqp_pairs(pairs, default, tau)} "
        f"guard_cold_us={timings['cold_mean_us']:.0f} guard_warm_us={timings['warm_mean_us']:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
