"""A question's search terms: its content words, and the PubMed queries built of them.

Shared by the ask planner (:mod:`medlit.agent.query`), the researcher's searches and the checks
that compare an answer's words with the question's (``uncited-attribution``). A search that
finds nothing is relaxed the same way by both (:func:`relaxed_queries`).
"""

from __future__ import annotations

import functools
import re

from medlit.text import as_typed
from medlit.words import cue, frequency, stop_words, word_set

__all__ = [
    "NAME_ZIPF",
    "WORD_PATTERN",
    "build_queries",
    "content_terms",
    "is_name",
    "normalise_question",
    "query_terms",
    "relaxed_queries",
    "relaxed_searches",
]

# Function words, what asks about the literature rather than naming a topic ("what does the
# evidence say") and the verbs that frame who was studied ("undergoing"): words/data/stop_words.txt.
_STOPWORDS = stop_words("search")


WORD_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-\+/']*[A-Za-z0-9+]|[A-Za-z0-9]")


def normalise_question(question: str) -> str:
    """One line, single spaces, no leading/trailing space."""
    return " ".join(question.split())


def content_terms(text: str, *, limit: int = 8, stop: frozenset[str] = _STOPWORDS) -> list[str]:
    """Content words of ``text`` in order, lower-cased, de-duplicated, at most ``limit``.

    When there are more than ``limit``, the longest (usually the most specific) are kept, still
    in their original order.
    """
    found: dict[str, int] = {}  # term -> its place (the first)
    # "Crohn’s" searches what "Crohn's" does, and "Sjögren's" is one word, sjogren's (the
    # pattern's letters are ASCII: it was "sj AND gren's", which PubMed finds nowhere).
    for word in WORD_PATTERN.findall(as_typed(text)):
        term = word.lower().strip("'")
        if len(term) < 2 and not term.isdigit():
            continue
        if term in stop or term in found:
            continue
        found[term] = len(found)
    terms = list(found)
    if len(terms) <= limit:
        return terms
    keep = set(sorted(terms, key=lambda t: (-len(t), found[t]))[:limit])
    return [t for t in terms if t in keep]


@functools.cache
def _name_phrase() -> re.Pattern[str]:
    """ "vitamin D", "hepatitis B", "stage III", "type 2": alone, "vitamin" finds every vitamin
    (compiled when first searched for: a question served by its key plans no search)."""
    from medlit.words.qualified_names import WORD_HEADS

    return re.compile(
        rf"\b(?P<word>(?:{'|'.join(WORD_HEADS)})(?:e?s)?)[ -](?P<qual>[A-Za-z]\d{{0,2}}"
        r"|[IVXivx]{1,4}|\d{1,2})\b(?![.,]\d)",
        re.I,
    )


def query_terms(text: str, *, max_terms: int, stop: frozenset[str] = _STOPWORDS) -> list[str]:
    """The search terms of ``text``: its content words, a name with its qualifier quoted.

    "Does vitamin D prevent fractures?" searches ``"vitamin d" AND prevent AND fractures``:
    the one-letter "D" is no content word, and "vitamin" alone would find vitamin C trials.
    """
    terms = content_terms(text, limit=max_terms, stop=stop)
    for match in _name_phrase().finditer(text):
        word, qual = match.group("word").lower(), match.group("qual").lower()
        if word in terms:
            terms[terms.index(word)] = f'"{word} {qual}"'
            if qual in terms:
                terms.remove(qual)
    return terms


def build_queries(text: str, *, max_terms: int) -> tuple[str, str]:
    """The narrow (AND of every term) and broad PubMed queries for ``text``: broad is the
    widest of :func:`relaxed_queries` (the question's names alone, or its rarest word), the
    narrow one when there is nothing to drop."""
    terms = query_terms(text, max_terms=max_terms) or [normalise_question(text)]
    relaxed = relaxed_queries(terms, asked=_asked_change(text))
    return " AND ".join(terms), relaxed[-1][0] if relaxed else " AND ".join(terms)


def relaxed_searches(text: str, *, max_terms: int) -> list[tuple[str, str]]:
    """The searches for ``text`` relaxed one word at a time (:func:`relaxed_queries` of its
    :func:`query_terms`), the words of the change it asks about dropped first."""
    return relaxed_queries(query_terms(text, max_terms=max_terms), asked=_asked_change(text))


def _asked_change(text: str) -> frozenset[str]:
    """The words of the change ``text`` asks about (its frame's ``direction_words``: "impair"
    in "does X impair Y?"): the articles' answer says which way it went, in their own words
    ("improved"), so the question's verb of change is no word to find them by."""
    from medlit.words.frame import read_frame  # not on a cached question's path

    return frozenset(read_frame(text).direction_words.split())


#: A word rarer in English than this (Zipf) is taken for a name: a drug, gene, disease or
#: organism ("glofitamab", "brca1", "schistosomiasis"); a relaxed search keeps it longest.
NAME_ZIPF = 3.0


def is_name(term: str) -> bool:
    """Whether a query term names something (kept longest when a search is relaxed): a quoted
    name ("vitamin d"), a known drug or one with an INN stem, a word with a digit, or a word
    rare in English."""
    word = term.strip('"')
    if term.startswith('"') or any(c.isdigit() for c in word):
        return True
    if word in word_set("drugs.txt") or cue("drug.stem").search(word):
        return True
    return frequency.zipf(word) < NAME_ZIPF


def relaxed_queries(
    terms: list[str], *, asked: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """The AND of ``terms`` relaxed one word at a time, each query with its step: a word of
    the change asked about (``asked``) first, then the least informative word (the commonest
    in English: "treated", "diseases"), a name
    (:func:`is_name`: a drug, gene, disease or organism) last, so the question's names stay
    longest ("glofitamab" alone finds the articles on it). The AND of all ``terms`` is not
    among them; nor is any OR: an OR of every word brings articles about any of them."""
    order = sorted(
        terms,
        key=lambda t: (
            t not in asked,
            is_name(t),
            -frequency.zipf(t.strip('"')),
            -terms.index(t),
        ),
    )
    left = list(terms)
    steps: list[tuple[str, str]] = []
    for dropped in order[:-1]:
        left.remove(dropped)
        why = "the change asked about" if dropped in asked else "least informative"
        steps.append((" AND ".join(left), f"relaxed: dropped {dropped} ({why})"))
    return steps
