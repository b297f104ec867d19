"""The answer cache's stated error: how often the guard served a question that asks something else.

The figure is measured, not assumed: ``python benchmarks/cache_contrast.py ../shared/data``
passes every near-miss edit of the contrast set's held-out part (``check``: minimal edits of
PubMedQA titles of the check half, never looked at while the guard was written; kinds:
direction, population, timing, intervention, outcome, site, actor, comparison) through the
guard, and :data:`MEASURED` keeps its count. ``medlit cache stats`` and ``GET /v1/cache/stats``
show it with its one-sided 95% upper bound (:func:`upper_bound`): with 0 wrong of n, about
3 / n. ``tests/unit/test_cache_bound.py`` holds the shipped figure to the committed set.

It bounds the guard's own rule (spelling, inflection, vetted synonyms, function words, phrase
forms) at any similarity. Word pairs a judge or a person approved (:mod:`medlit.cache.word_pairs`)
serve beyond it; the judge's own figure is its calibration (``medlit cache calibrate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["MEASURED", "GuardError", "upper_bound"]


def upper_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    """The one-sided Clopper-Pearson upper bound of a rate seen ``failures`` times in
    ``trials`` (0 of n: 1 - 0.05 ** (1 / n), about 3 / n)."""
    if trials <= 0 or failures >= trials:
        return 1.0
    alpha = 1.0 - confidence

    def tail(p: float) -> float:  # P(at most ``failures``) at rate p
        return sum(
            math.comb(trials, k) * p**k * (1.0 - p) ** (trials - k) for k in range(failures + 1)
        )

    low, high = failures / trials, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if tail(mid) > alpha else (low, mid)
    return high


@dataclass(frozen=True, slots=True)
class GuardError:
    """Near-miss edits served by the guard, of those tried.

    Attributes:
        served: edits the guard would serve (wrong hits).
        edits: edits tried.
        contrast: which contrast set and part.
    """

    served: int
    edits: int
    contrast: str

    @property
    def rate(self) -> float:
        """Wrong hits per near-miss edit."""
        return self.served / self.edits if self.edits else 0.0

    @property
    def upper95(self) -> float:
        """The rate's one-sided 95% upper bound."""
        return upper_bound(self.served, self.edits)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, as the stats show it."""
        return {
            "wrong_hits": self.served,
            "near_miss_edits": self.edits,
            "rate": round(self.rate, 4),
            "upper_95": round(self.upper95, 4),
            "contrast_set": self.contrast,
        }


#: The guard on the contrast set's held-out part (``benchmarks/cache_contrast.py``).
MEASURED = GuardError(
    served=0,
    edits=153,
    contrast="benchmarks/data/cache_contrast.csv, part check (near-miss edits of check-half "
    "PubMedQA titles, unseen while the guard was written)",
)
