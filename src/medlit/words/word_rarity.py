"""How rare a word is in English, on wordfreq's Zipf scale: a term of the field or a word of
the prose.

A word under :data:`RARE_ZIPF` is technical ("vancomycin", "cycloplegic"); the checks that hold
a cited sentence to its articles (``borrowed-terms``) and a research claim to
its quote (``claim-quote``) read only such words, so "evidence",
"association" or "however" never count.
"""

from __future__ import annotations

import functools

from medlit.words import frequency

__all__ = ["MIN_LETTERS", "RARE_ZIPF", "is_technical", "zipf"]

RARE_ZIPF = 3.0
"""A word under this Zipf frequency (once per million words is 3.0) is technical: "sepsis" is
3.0, "vancomycin" 2.3, "cycloplegic" 0; "plasma" is 3.9, "evidence" 5.1."""
MIN_LETTERS = 4
"""Shorter words are not judged ("isf" is rare as written, and says nothing)."""


@functools.lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """``word``'s Zipf frequency in English (0 for a word wordfreq has never seen): wordfreq's
    figure, from the package's copy of its table (:mod:`medlit.words.frequency`)."""
    return frequency.zipf(word)


def is_technical(word: str) -> bool:
    """Whether ``word`` is rare in English (a term of the field, not of the prose)."""
    return len(word) >= MIN_LETTERS and zipf(word) < RARE_ZIPF
