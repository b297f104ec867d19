"""Build ``src/medlit/words/data/lemmas.tsv.gz``: lemminflect's dictionary as medlit reads it.

:func:`medlit.words.forms.lemmas` asks lemminflect for a word's noun and verb lemmas. Its first
question loads the whole dictionary (80,676 lines into a dictionary of dictionaries: 0.3-0.5 s),
which a new ``medlit ask`` process paid to compare two questions by a few words. The table
keeps what medlit reads of it (:func:`medlit.words.forms.lemma_rows`): each lower-case word of
letters, whether it has a verb lemma and its noun, verb, auxiliary and proper-noun lemmas, one
line each, sorted by bytes, so that a word is found by binary search in the loaded bytes
(:mod:`medlit.words.sorted_lines`). Words the dictionary does not know still go to
lemminflect's rules. ``tests/unit/test_words.py`` holds the table equal to the installed
lemminflect. The first line (``#``) says which lemminflect version it was made from.

Usage::

    python benchmarks/make_lemma_table.py [--out src/medlit/words/data/lemmas.tsv.gz]

Last line: ``words=... bytes=... lemminflect=...``.
"""

from __future__ import annotations

import argparse
import gzip
from importlib.metadata import version
from pathlib import Path

from medlit.words.forms import LEMMA_TABLE, lemma_rows

OUT = Path(__file__).resolve().parents[1] / "src/medlit/words/data" / LEMMA_TABLE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = lemma_rows()
    text = f"# lemminflect {version('lemminflect')}\n" + "".join(f"{row}\n" for row in rows)
    data = gzip.compress(text.encode(), mtime=0)
    args.out.write_bytes(data)
    print(f"words={len(rows)} bytes={len(data)} lemminflect={version('lemminflect')}")


if __name__ == "__main__":
    main()
