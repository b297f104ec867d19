"""How often a word is written in English, as wordfreq says, from a table in the package.

:func:`zipf` gives :func:`wordfreq.zipf_frequency` ``(word, "en")`` exactly. wordfreq reads
its whole English list into a dictionary the first time it is asked (about 0.7 s with its
imports); ``words/data/word_frequencies.tsv.gz`` (made from it by
``benchmarks/make_word_frequencies.py``, which names the wordfreq version) holds its tokens of
ASCII letters or of digits and their frequency bucket, sorted, and a word is found by binary
search in the loaded bytes (the table loads in about 15 ms, on first use). A word of ASCII
letters or of digits, or a hyphenated run of them ("warm-up", "24-h", which wordfreq reads as
"24" and "h"), is computed here as wordfreq computes it (its arithmetic, and for digits its
estimate of a number's frequency, copied); any other (a decimal, letters and digits in one
token, an apostrophe, another script) is asked of wordfreq.
"""

from __future__ import annotations

import math
import re
from functools import cache

from medlit.words import sorted_lines

__all__ = ["bucket", "zipf"]

_SIMPLE = re.compile(r"(?:[A-Za-z]+|[0-9]+)(?:-(?:[A-Za-z]+|[0-9]+))*")
# wordfreq.numbers: how often a run of digits is written (Benford's law; a year peaks)
_DIGIT_FREQS = [0.009, 0.300, 0.175, 0.124, 0.096, 0.078, 0.066, 0.057, 0.050, 0.045]
_YEAR_LOG_PEAK = -1.9185
_NOT_YEAR_PROB = 0.1
_REFERENCE_YEAR = 2019
_PLATEAU_WIDTH = 20


@cache
def _table() -> bytes:
    """The table's lines (``word<TAB>bucket``, sorted by bytes), its header taken off."""
    return sorted_lines.load("word_frequencies.tsv.gz")


def bucket(token: str) -> int | None:
    """The frequency bucket of ``token`` (lower-case ASCII letters) in wordfreq's English list
    (its frequency is ``10 ** (-bucket / 100)``), or None when the list does not have it."""
    found = sorted_lines.find(_table(), token.encode("ascii"))
    return None if found is None else int(found)


def _benford_freq(text: str) -> float:
    return _DIGIT_FREQS[int(text[0])] / 10 ** (len(text) - 1)


def _year_freq(text: str) -> float:
    year = int(text)
    if year <= _REFERENCE_YEAR:
        year_log_freq = _YEAR_LOG_PEAK - 0.0083 * (_REFERENCE_YEAR - year)
    elif _REFERENCE_YEAR < year <= _REFERENCE_YEAR + _PLATEAU_WIDTH:
        year_log_freq = _YEAR_LOG_PEAK
    else:
        year_log_freq = _YEAR_LOG_PEAK - 0.2 * (year - (_REFERENCE_YEAR + _PLATEAU_WIDTH))
    return 10.0**year_log_freq + _NOT_YEAR_PROB * _benford_freq(text)


def _token_freq(token: str) -> float | None:
    """wordfreq's frequency of one token of letters or digits (a run of two digits or more is
    looked up as zeros, times how often that number is written), None when it has none."""
    smashed = "0" * len(token) if len(token) > 1 and token.isdigit() else token
    found = bucket(smashed)
    if found is None:
        return None
    freq = 10 ** (-found / 100)
    if smashed != token:
        freq *= _year_freq(token) if len(token) == 4 else _benford_freq(token)
    return freq


def zipf(word: str) -> float:
    """``wordfreq.zipf_frequency(word, "en")``: the word's Zipf frequency in English, 0 for a
    word the list does not have."""
    if not _SIMPLE.fullmatch(word):
        from wordfreq import zipf_frequency  # loads wordfreq's own table (0.7 s) once

        return float(zipf_frequency(word, "en"))
    # wordfreq's own arithmetic (``_word_frequency``, ``zipf_frequency``, minimum 0), so that
    # the figure is the same to the last bit.
    minimum = 10**0.0 / 1e9
    one_over_result = 0.0
    for token in word.lower().split("-"):
        freq = _token_freq(token)
        if freq is None:
            return round(math.log(minimum, 10) + 9, 2)
        one_over_result += 1.0 / freq
    freq = 1.0 / one_over_result
    unrounded = max(freq, minimum)
    leading_zeroes = math.floor(-math.log(unrounded, 10))
    return round(math.log(round(unrounded, leading_zeroes + 3), 10) + 9, 2)
