"""A question's search terms: its content words, and the PubMed queries built of them.

Shared by the ask planner (:mod:`medlit.agent.query`), the researcher's searches and the checks
that compare an answer's words with the question's (:mod:`medlit.checks.attribution`).
"""

from __future__ import annotations

import re

from medlit.checks.qualified_names import WORD_HEADS
from medlit.text import as_typed

__all__ = ["WORD_PATTERN", "build_queries", "content_terms", "normalise_question", "query_terms"]

_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "whether",
        "versus",
        "vs",
        "via",
        "among",
        "within",
        "without",
        "patients",
        "patient",
        "people",
        "persons",
        "effect",
        "effects",
        "role",
        "use",
        "used",
        "using",
        "associated",
        "association",
        "study",
        "studies",
        "evidence",
        "there",
        "any",
        "does",
        "anyone",
        "may",
        "might",
        "must",
        "also",
        "well",
        "whose",
        "based",
        "reduce",
        "reduces",
        "reduced",
        "increase",
        "increases",
        "increased",
        "improve",
        "improves",
        "improved",
        "decrease",
        "decreases",
        "affect",
        "affects",
        "influence",
        "influences",
        "lead",
        "leads",
        "help",
        "helps",
        "work",
        "works",
        "better",
        "worse",
        "compared",
        "difference",
        "differences",
        "true",
        "really",
        "likely",
        "possible",
    ]
)


# Words that ask about the literature rather than name a topic ("what does the evidence say",
# "according to published studies"): in a PubMed query they only narrow or break the search.
_STOPWORDS |= frozenset(
    """according published studies study literature research evidence say says known tell
    data show shows shown suggest suggests""".split()  # noqa: SIM905
)


# A verb that frames who was studied ("elderly patients undergoing laparoscopic surgery"):
# ANDed into a PubMed query it loses every abstract that says "underwent" instead, as the one
# on-point PubMedQA article did ("patients underwent total laparoscopic fundoplication").
_STOPWORDS |= frozenset("undergo undergoes undergoing underwent undergone".split())  # noqa: SIM905


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
