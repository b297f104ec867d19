"""A question's search terms: its content words, and the PubMed queries built of them.

Shared by the ask planner (:mod:`medlit.agent.query`), the researcher's searches and the checks
that compare an answer's words with the question's (:mod:`medlit.checks.attribution`).
"""

from __future__ import annotations

import re

from medlit.checks.qualified_names import WORD_HEADS
from medlit.text import as_typed
from medlit.words import stop_words

__all__ = ["WORD_PATTERN", "build_queries", "content_terms", "normalise_question", "query_terms"]

# Function words, what asks about the literature rather than naming a topic ("what does the
# evidence say") and the verbs that frame who was studied ("undergoing"): words/data/stop_words.txt.
_STOPWORDS = stop_words("search")


WORD_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-\+/']*[A-Za-z0-9+]|[A-Za-z0-9]")


def normalise_question(question: str) -> str:
    """One line, single spaces, no leading/trailing space."""
    return " ".join(question.split())


def content_terms(text: str, *, limit: int = 8) -> list[str]:
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
        if term in _STOPWORDS or term in found:
            continue
        found[term] = len(found)
    terms = list(found)
    if len(terms) <= limit:
        return terms
    keep = set(sorted(terms, key=lambda t: (-len(t), found[t]))[:limit])
    return [t for t in terms if t in keep]


# "vitamin D", "hepatitis B", "stage III", "type 2": alone, "vitamin" finds every vitamin.
_NAME_PHRASE = re.compile(
    rf"\b(?P<word>(?:{'|'.join(WORD_HEADS)})(?:e?s)?)[ -](?P<qual>[A-Za-z]\d{{0,2}}|[IVXivx]{{1,4}}"
    r"|\d{1,2})\b(?![.,]\d)",
    re.I,
)


def query_terms(text: str, *, max_terms: int) -> list[str]:
    """The search terms of ``text``: its content words, a name with its qualifier quoted.

    "Does vitamin D prevent fractures?" searches ``"vitamin d" AND prevent AND fractures``:
    the one-letter "D" is no content word, and "vitamin" alone would find vitamin C trials.
    """
    terms = content_terms(text, limit=max_terms)
    for match in _NAME_PHRASE.finditer(text):
        word, qual = match.group("word").lower(), match.group("qual").lower()
        if word in terms:
            terms[terms.index(word)] = f'"{word} {qual}"'
            if qual in terms:
                terms.remove(qual)
    return terms


def build_queries(text: str, *, max_terms: int) -> tuple[str, str]:
    """The narrow (AND) and broad (OR) PubMed queries for ``text``."""
    terms = query_terms(text, max_terms=max_terms) or [normalise_question(text)]
    return " AND ".join(terms), " OR ".join(terms)
