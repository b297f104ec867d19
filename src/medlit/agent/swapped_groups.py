"""A number given for the opposite group: "longer" where the article says "shorter".

Asked whether longer therapy for depression means patients come back for more treatment, the
local model wrote "a longer duration of treatment (5-250 min; 251-500 min and 751-1000 min) was
slightly more likely to return into mental health care compared to patients with a shorter
duration of treatment (reference group: >1000 min) [PMID]", over "Patients with a shorter
duration of treatment (5-250 min; 251-500 min and 751-1000 min) were slightly more likely to
return (reference group: >1000 min)". Every number is the article's and the comparison ("more
likely") is its own, so the number and comparison checks pass it; the groups are swapped, and
the finding reads the other way.

Here each number of a cited sentence (a range, a decimal, a percentage, or a whole number of 10
or more) is read with the words just before it (:data:`WINDOW`, back to the number before).
When those words hold one of a pair of opposites (shorter/longer, higher/lower, older/younger,
...) and every sentence of a cited article giving that number holds the other word of the pair
before it, and not the first, the citation goes (and a sentence left citing nothing): the
sentence gives the article's number for the opposite group.

Hand-written: no natural-language-inference model can be loaded here. Measured on PubMedQA
(``python benchmarks/swapped_groups.py``): of the 5,679 abstract sentences, each held to the
rest of its abstract, none is flagged; of the 219 with a word of a pair just before one of
their numbers, that word swapped, 153 are caught (the others give the number again elsewhere in
other words).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlit.agent.citations import drop_cited_for, extract_pmids, without_citations
from medlit.log import get_logger
from medlit.text import split_sentences
from medlit.types import Article

__all__ = ["OPPOSITE", "WINDOW", "drop_swapped_groups", "numbers_with_words", "swapped_group"]

log = get_logger("agent.swapped_groups")

WINDOW = 6
"""Words before a number read with it."""

_PAIRS = (
    ("shorter", "longer"),
    ("short", "long"),
    ("higher", "lower"),
    ("high", "low"),
    ("increased", "decreased"),
    ("larger", "smaller"),
    ("older", "younger"),
    ("earlier", "later"),
    ("early", "late"),
    ("better", "worse"),
    ("above", "below"),
    ("positive", "negative"),
    ("maximum", "minimum"),
)
OPPOSITE = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS}
"""Each word of a pair of opposites, with the other."""
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:\s?%)?(?:\s?[-\u2013]\s?\d+(?:[.,]\d+)*(?:\s?%)?)?|[a-z]+")


def _tokens(text: str) -> list[str]:
    return [t.replace(" ", "") for t in _TOKEN.findall(text.lower())]


def _is_number(token: str) -> bool:
    return token[:1].isdigit()


def _checked(token: str) -> bool:
    """A number specific enough to align two sentences on: a range, a decimal, a
    percentage, or a whole number of 10 or more."""
    return not token.isdigit() or int(token) >= 10


def _before(tokens: list[str], index: int) -> set[str]:
    """The words among the :data:`WINDOW` tokens before ``index``, back to the number before."""
    words: list[str] = []
    for token in reversed(tokens[max(0, index - WINDOW) : index]):
        if _is_number(token):
            break
        words.append(token)
    return set(words)


def numbers_with_words(text: str) -> dict[str, list[set[str]]]:
    """Each checked number of ``text`` with the words before each place it is given."""
    tokens = _tokens(text)
    found: dict[str, list[set[str]]] = {}
    for i, token in enumerate(tokens):
        if _is_number(token) and _checked(token):
            found.setdefault(token, []).append(_before(tokens, i))
    return found


def swapped_group(sentence: str, article: Article) -> tuple[str, str, str] | None:
    """(number, the sentence's word, the article's word) when ``sentence`` gives a number of
    ``article`` for the opposite group (see the module doc), else None."""
    said = numbers_with_words(without_citations(sentence))
    if not said:
        return None
    given: dict[str, list[set[str]]] = {}
    for section in article.abstract:
        for text in split_sentences(section.text):
            for number, windows in numbers_with_words(text).items():
                if number in said:
                    given.setdefault(number, []).extend(windows)
    for number, windows in said.items():
        theirs = given.get(number)
        if not theirs:
            continue
        for words in windows:
            for word in words:
                other = OPPOSITE.get(word)
                if other is None or other in words:
                    continue
                if all(other in w and word not in w for w in theirs):
                    return number, word, other
    return None


def drop_swapped_groups(text: str, articles: Mapping[str, Article]) -> tuple[str, list[str]]:
    """``text`` without the citations of sentences giving a cited article's number for the
    opposite group, and one warning each."""

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in extract_pmids(sentence):
            if pmid in articles and (swap := swapped_group(sentence, articles[pmid])):
                number, word, other = swap
                wrong.append((pmid, f"{word!r} {number}, where that article says {other!r}"))
        return wrong

    text, warnings = drop_cited_for(text, wrong_in)
    if warnings:
        log.warning("answer_groups_swapped", removals=len(warnings))
    return text, warnings
