"""Verifier scores of question pairs, cached in a JSON-lines file (used by cache_pairs.py).

Each verification takes seconds on a small local model, so every P("Yes") asked is written to
``--scores FILE`` at once and never asked again: a rerun, a CV split or a new threshold costs no
call. A line is ``{"key", "model", "prompt", "p", "top"}``, keyed by model, prompt version and
the two questions in the order asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from medlit.cache.verify import PROMPT_VERSION, TASK, HitVerifier
from medlit.config import LLMSettings, VerifyBandSettings
from medlit.llm.client import LLMClient


def pair_key(model: str, first: str, second: str) -> str:
    """The cache key of one order of one pair for one model."""
    raw = "\x00".join((model, PROMPT_VERSION, first, second))
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class ScoreFile:
    """P(Yes) per (model, prompt, first, second), appended to a JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.scores: dict[str, float] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.scores[row["key"]] = float(row["p"])

    def get(self, model: str, first: str, second: str) -> float | None:
        """The remembered score, if any."""
        return self.scores.get(pair_key(model, first, second))

    def put(self, model: str, first: str, second: str, p: float, mode: str) -> None:
        """Remember a score (written to the file at once)."""
        key = pair_key(model, first, second)
        self.scores[key] = p
        row = {"key": key, "model": model, "prompt": PROMPT_VERSION, "p": p, "mode": mode}
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


@dataclass
class PairScore:
    """Both orders of one pair; ``p2`` is None when ``p1`` was already below ``floor``."""

    p1: float
    p2: float | None

    @property
    def low(self) -> float:
        """The lower of the orders asked (an upper bound of the pair's score when p2 is None)."""
        return self.p1 if self.p2 is None else min(self.p1, self.p2)

    def calls_at(self, threshold: float) -> int:
        """Calls the ask path makes at ``threshold`` (the second order only if the first passed)."""
        return 1 if self.p1 < threshold else 2


async def score_pairs(
    pairs: list[tuple[str, str]],
    verifier: HitVerifier,
    scores: ScoreFile,
    *,
    floor: float,
    budget_s: float,
) -> dict[tuple[str, str], PairScore]:
    """Score ``pairs`` (cached question, new question) in order, both orders unless the first
    is below ``floor`` (no threshold that low is ever chosen), until ``budget_s`` runs out."""
    model = verifier.model
    out: dict[tuple[str, str], PairScore] = {}
    started = time.monotonic()
    asked = 0
    for i, (q1, q2) in enumerate(pairs):
        values: list[float] = []
        for first, second in ((q1, q2), (q2, q1)):
            if values and values[0] < floor:
                break
            p = scores.get(model, first, second)
            if p is None:
                if time.monotonic() - started > budget_s:
                    break  # out of time: only pairs already in the score file from here on
                p, mode = await verifier.ask(first, second)
                scores.put(model, first, second, p, mode)
                asked += 1
            values.append(p)
        if len(values) == 2 or (values and values[0] < floor):
            out[(q1, q2)] = PairScore(values[0], values[1] if len(values) > 1 else None)
        if asked and (i + 1) % 10 == 0:
            spent = time.monotonic() - started
            print(
                f"  scored {i + 1}/{len(pairs)} pairs, {asked} calls, {spent / asked:.1f} s/call",
                file=sys.stderr,
            )
    return out


def run_scoring(
    pairs: list[tuple[str, str]],
    llm_settings: LLMSettings,
    scores: ScoreFile,
    *,
    floor: float,
    budget_s: float,
) -> tuple[str, dict[tuple[str, str], PairScore]]:
    """Open the client on ``llm_settings``, score, close; returns (verifier model, scores)."""

    async def go() -> tuple[str, dict[tuple[str, str], PairScore]]:
        async with LLMClient(llm_settings) as llm:
            model = llm.model_for(TASK)
            if model is None:
                raise SystemExit("no LLM configured for verify_cache_hit (MEDLIT_LLM_*)")
            verifier = HitVerifier(lambda: llm, VerifyBandSettings(), threshold=1.0, model=model)
            found = await score_pairs(pairs, verifier, scores, floor=floor, budget_s=budget_s)
            return model, found

    return asyncio.run(go())


@dataclass
class BandRow:
    """One pair as the verified band sees it.

    ``weight``: how many band pairs of its label this scored pair stands for (1.0 when every
    band pair was scored; more when only a sample of them was, e.g. for lack of time).
    """

    group: str
    label: int
    above: bool  # served at tau already (the band changes nothing there)
    score: PairScore | None  # None: not in the band
    weight: float = 1.0


@dataclass
class BandResult:
    """Tier-1 outcome with the band at one threshold (weighted counts)."""

    precision: float
    recall: float
    wrong_rate: float
    good: float
    bad: float
    band_good: float
    band_bad: float
    calls: float

    @property
    def band_precision(self) -> float:
        """Precision of the verified hits alone."""
        hits = self.band_good + self.band_bad
        return self.band_good / hits if hits else 1.0

    @property
    def calls_per_hit(self) -> float:
        """Verification calls per verified hit."""
        hits = self.band_good + self.band_bad
        return self.calls / hits if hits else float("nan")


def accepted(row: BandRow, threshold: float) -> bool:
    """Whether the band serves ``row`` at ``threshold`` (both orders asked, the lower passes)."""
    score = row.score
    return score is not None and not row.above and score.p2 is not None and score.low >= threshold


def evaluate(rows: list[BandRow], threshold: float) -> BandResult:
    """Hits at tau plus band pairs whose lower P(Yes) reaches ``threshold``."""
    good = bad = band_good = band_bad = calls = 0.0
    for row in rows:
        verified = accepted(row, threshold)
        if row.score is not None and not row.above:
            calls += row.weight * row.score.calls_at(threshold)
            band_good += row.weight * (verified and row.label == 1)
            band_bad += row.weight * (verified and row.label == 0)
        if row.above or verified:
            good += row.weight * (row.label == 1)
            bad += row.weight * (row.label == 0)
    positives = sum(r.weight for r in rows if r.label == 1) or 1.0
    negatives = sum(r.weight for r in rows if r.label == 0) or 1.0
    precision = good / (good + bad) if good + bad else 1.0
    return BandResult(
        precision, good / positives, bad / negatives, good, bad, band_good, band_bad, calls
    )


GRID = [round(0.5 + 0.005 * i, 3) for i in range(100)]


def calibrate(rows: list[BandRow], target: float) -> float:
    """The lowest threshold whose verified hits reach precision ``target`` (most recall)."""
    for threshold in GRID:
        if evaluate(rows, threshold).band_precision >= target:
            return threshold
    return 1.0


def report(
    rows: list[BandRow], folds: int, target: float, model: str
) -> tuple[float, BandResult, float]:
    """Print the threshold sweep and grouped CV; returns (the whole file's calibrated
    threshold, the pooled held-out result, held-out verification calls per verified hit)."""
    print(f"\nverified band, verifier {model!r} (P(Yes), both orders, the lower):")
    print(
        f"{'thr':>5} | {'band hits':>9} {'wrong':>5} {'b.prec':>6} | {'prec':>6} {'recall':>6} "
        f"{'wrong':>6} | {'calls':>6} {'calls/hit':>9}"
    )
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99):
        r = evaluate(rows, threshold)
        print(
            f"{threshold:>5.2f} | {r.band_good + r.band_bad:>9.1f} {r.band_bad:>5.1f} "
            f"{r.band_precision:>6.3f} | {r.precision:>6.3f} {r.recall:>6.3f} "
            f"{r.wrong_rate:>6.3f} | {r.calls:>6.1f} {r.calls_per_hit:>9.2f}"
        )
    groups = sorted({r.group for r in rows})
    k = min(folds, len(groups))
    held: list[BandRow] = []
    held_calls = 0.0
    print(
        f"\ngrouped {k}-fold CV by doctor (threshold chosen on the other folds, target {target}):"
    )
    print(
        f"{'fold':>4} {'groups':>8} {'thr':>6} {'prec':>6} {'recall':>7} {'wrong':>6} {'calls':>6}"
    )
    for f in range(k):
        test_groups = set(groups[f::k])
        train = [r for r in rows if r.group not in test_groups]
        test = [r for r in rows if r.group in test_groups]
        threshold = calibrate(train, target)
        result = evaluate(test, threshold)
        held_calls += result.calls
        # Fix each held-out row's outcome at its fold's threshold, then pool.
        held.extend(
            BandRow(r.group, r.label, r.above or accepted(r, threshold), None, r.weight)
            for r in test
        )
        print(
            f"{f:>4} {','.join(sorted(test_groups)):>8} {threshold:>6.3f} {result.precision:>6.3f} "
            f"{result.recall:>7.3f} {result.wrong_rate:>6.3f} {result.calls:>6.1f}"
        )
    pooled = evaluate(held, 1.0)
    baseline = evaluate([BandRow(r.group, r.label, r.above, None, r.weight) for r in rows], 1.0)
    verified_hits = pooled.good + pooled.bad - baseline.good - baseline.bad
    per_hit = held_calls / verified_hits if verified_hits else float("nan")
    print(
        f"held-out pooled: precision={pooled.precision:.3f} recall={pooled.recall:.3f} "
        f"wrong_hit_rate={pooled.wrong_rate:.3f} ({pooled.good:.1f} correct, {pooled.bad:.1f} "
        f"wrong; {held_calls:.1f} verification calls for {verified_hits:.1f} verified hits: "
        f"{per_hit:.2f} per hit; at most 2 per lookup)"
    )
    print(
        f"without the band (tau only): precision={baseline.precision:.3f} "
        f"recall={baseline.recall:.3f}"
    )
    return calibrate(rows, target), pooled, per_hit
