"""Build ``src/medlit/words/data/word_frequencies.tsv.gz``: wordfreq's English table, as the
checks read it, in a form that loads in milliseconds.

wordfreq keeps its English word list (``large_en``, 321,180 tokens) as a msgpack of frequency
buckets; :func:`wordfreq.zipf_frequency` reads all of it into a dictionary the first time it
is asked (about 0.3 s, after 0.4 s of imports), which a cold ``medlit ask`` paid on its first
answer. The checks ask almost only for words of ASCII letters or digits (and hyphenated runs
of them: "warm-up", "24-h", "endothelin-1"): this keeps the table's tokens of ASCII letters or
of digits (289,053) with their bucket (centibels below 1, as wordfreq stores it), one
``word<TAB>bucket`` line each, sorted by the word's bytes, so that
:mod:`medlit.words.frequency` finds a word by binary search in the loaded bytes, without
building a dictionary, and computes wordfreq's own figure from the bucket. Other words
(decimals, letters and digits in one token, apostrophes, other scripts) are still asked of wordfreq.

A word found in two buckets keeps the last (rarer) one, as :func:`wordfreq.get_frequency_dict`
does. The first lines (``#``) say which wordfreq version it was made from.

Usage::

    python benchmarks/make_word_frequencies.py [--out src/medlit/words/data/word_frequencies.tsv.gz]

Last line: ``words=... bytes=... wordfreq=...``.
"""

from __future__ import annotations

import argparse
import gzip
import re
from importlib.metadata import version
from pathlib import Path

from wordfreq import get_frequency_list

OUT = Path(__file__).resolve().parents[1] / "src/medlit/words/data/word_frequencies.tsv.gz"
_KEPT = re.compile(r"[a-z]+|[0-9]+")


def buckets() -> dict[str, int]:
    """Each token of ASCII letters or of digits in wordfreq's English list, and its bucket
    (the last wins)."""
    found: dict[str, int] = {}
    for index, bucket in enumerate(get_frequency_list("en", "best")):
        for word in bucket:
            if _KEPT.fullmatch(word):
                found[word] = index
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    found = buckets()
    header = (
        f"# wordfreq {version('wordfreq')}, English 'best' list: its tokens of ASCII letters or\n"
        "# digits and their bucket (frequency 10 ** (-bucket / 100)); made by\n"
        "# benchmarks/make_word_frequencies.py. Sorted by the word's bytes.\n"
    )
    lines = "".join(f"{word}\t{found[word]}\n" for word in sorted(found))
    # mtime=0: the same table gives the same bytes (no spurious diff when it is rebuilt)
    data = gzip.compress((header + lines).encode("ascii"), compresslevel=9, mtime=0)
    args.out.write_bytes(data)
    print(f"words={len(found)} bytes={len(data)} wordfreq={version('wordfreq')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
