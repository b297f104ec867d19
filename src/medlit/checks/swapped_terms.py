"""A claim must not put one of its article's terms where its quote says another.

A model extracting a claim can put the subject it was asked about where its quote names
another subject of the same article ("the prevalence of X is higher" from a quote on the
prevalence of Y, an article studying both). Most of the claim's words are the quote's, so the
word-share rule of :func:`~medlit.research.grounding.claim_supported` cannot see the swap, and
a report would give Y's figure as X's.

Here a claim is held to swap terms when it brings in a technical word (rare in English:
:func:`~medlit.words.word_rarity.is_technical`) that its quote does not say but its article
does, and leaves out a subject of the article its quote says: a word of the article's title
less common than :data:`TERM_ZIPF` ("fatigue"). The small model's swap is of that kind: it
puts the subject it was asked about where the quote says another. A claim that adds the
article's population to its quote and leaves out a comparator ("Warfarin reduced stroke by 22%
in atrial fibrillation patients" over "... compared with placebo"), or names the subject its
quote calls "it", leaves out no subject and stands. Abbreviations the article defines count as
their long forms on both sides ("primary Sjögren's syndrome" for "pSS"), and two forms of one
word are one ("anaemia", "anaemic").

How many result sentences of the PubMedQA abstracts, with their most repeated technical word
replaced by another of their article's, pass the word-share rule and how many of those this
check catches (and that none is held to swap a term against itself) is measured by
``python benchmarks/claim_swaps.py`` (figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlit.text import fold_accents
from medlit.types import Article
from medlit.words.defined_terms import article_definitions, standing_alone
from medlit.words.grounding import word_stem
from medlit.words.memo import remembered
from medlit.words.tokens import LETTER_WORDS
from medlit.words.word_rarity import MIN_LETTERS, is_technical, zipf

__all__ = ["TERM_ZIPF", "Swap", "swapped_term"]

TERM_ZIPF = 4.0
"""A title word under this Zipf frequency is a subject of its article: "fatigue" is 3.9,
"obesity" 3.8; "patients" (4.9) and "pain" (5.0) are not."""
_SAME_WORD = 5  # letters two forms of one word share at the start ("anaemia", "anaemic")
_WORD = LETTER_WORDS


@dataclass(frozen=True)
class Swap:
    """A term a claim brings in (``brought``) where its quote says another (``dropped``)."""

    brought: str
    dropped: str


def swapped_term(claim: str, quote: str, article: Article, near: str | None = None) -> Swap | None:
    """The term ``claim`` brings in where its ``quote`` says a subject of the article (see the
    module doc), or None. With ``near`` (a part of ``quote``: the words it gives one number
    with), only a subject said there can be the one left out: the quote gives that number for
    it, not for the subjects it names with its other numbers."""
    claimed = _words(claim)
    quoted = {stem for _, stem in _words(quote)}
    said = _stems(article.everything_said)
    unquoted = [
        (word, stem)
        for word, stem in claimed
        if stem not in quoted and stem in said and is_technical(word)
    ]
    if not unquoted:
        return None  # (the article's abbreviations are read only when a word may be brought)
    definitions = article_definitions(article)
    in_quote = quoted | _spelled(quote, definitions)
    brought = [word for word, stem in unquoted if stem not in in_quote]
    if not brought:
        return None
    in_claim = {stem for _, stem in claimed} | _spelled(claim, definitions)
    subjects = {stem for _, stem in _words(article.title)} | _spelled(article.title, definitions)
    dropped = [
        word
        for word, stem in _words(quote if near is None else near)
        if stem not in in_claim and stem in subjects and _a_term(word)
    ]
    for new in brought:
        for old in dropped:
            if not _one_word(new, old):
                return Swap(new, old)
    return None


@remembered(4096)
def _stems(text: str) -> frozenset[str]:
    """The stems of :func:`_words` (remembered: an article's text is read once)."""
    return frozenset(stem for _, stem in _words(text))


@remembered(4096)
def _words(text: str) -> tuple[tuple[str, str], ...]:
    """The words of ``text`` of three letters or more (lower case, accents off, hyphenated
    parts apart), each with its :func:`~medlit.words.grounding.word_stem` (remembered: an
    article's text is read once)."""
    words = _WORD.findall(fold_accents(text))
    return tuple((word.lower(), word_stem(word.lower())) for word in words if len(word) >= 3)


def _spelled(text: str, definitions: dict[str, str]) -> set[str]:
    """The stems of both forms of each abbreviation the article defines that ``text`` uses in
    either form ("pSS" or "primary Sjögren's syndrome")."""
    stems: set[str] = set()
    lowered = fold_accents(text).lower()
    for abbreviation, meaning in definitions.items():
        long_form = fold_accents(meaning.strip()).lower()
        written = re.search(standing_alone(abbreviation), text)
        if written or (long_form and long_form in lowered):
            stems.update(stem for _, stem in _words(f"{abbreviation} {meaning}"))
    return stems


def _a_term(word: str) -> bool:
    return len(word) >= MIN_LETTERS and zipf(word) < TERM_ZIPF


def _one_word(first: str, second: str) -> bool:
    """Whether two words are forms of one ("anaemia", "anaemic"; "diabetes", "diabetic")."""
    a, b = word_stem(first), word_stem(second)
    return a[:_SAME_WORD] == b[:_SAME_WORD]
