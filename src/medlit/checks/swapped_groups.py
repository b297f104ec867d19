"""A number given for the opposite group: "longer" where the article says "shorter".

A model can copy an article's numbers and comparison and put them on the opposite group
("patients with a longer X were more likely to ...", where the article gives those numbers
for a shorter X). Every number is the article's and the comparison ("more likely") is its own,
so the number and comparison checks pass it; the groups are swapped, and the finding reads the
other way.

Here each number of a cited sentence (a range, a decimal, a percentage, or a whole number of 10
or more) is read with the words just before it (:data:`WINDOW`, back to the number before).
When those words hold one of a pair of opposites (shorter/longer, higher/lower, older/younger,
...) and every sentence of a cited article giving that number holds the other word of the pair
before it, and not the first, the citation goes (and a sentence left citing nothing): the
sentence gives the article's number for the opposite group.

A group named by words alone is read too: "a longer duration of treatment is associated with a
higher risk" names its group by "longer" and the two content words after it, and goes one way (up:
"higher", "more", "increased"; down: "lower", "reduced", "prevents") in the rest of the sentence.
When the cited article says the same group goes the other way ("a longer duration of treatment
lowers the risk"), or the opposite group goes the same way ("a shorter duration ... raised the
risk"), and never agrees, the citation goes. A sentence naming both groups ("a longer duration had a
lower risk than a shorter one") is not read: which group "lower" belongs to is its structure, not
its words.

Hand-written: no natural-language-inference model can be loaded here. How many of the
PubMedQA abstracts' sentences are flagged held to their own abstract, and how many with the
word of a pair swapped (before a number, or naming a group) are caught, is measured by
``python benchmarks/swapped_groups.py`` (figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words import guarded, opposite_pairs, stop_words
from medlit.words.memo import remembered
from medlit.words.stance import FALLING, RISING

__all__ = [
    "OPPOSITE",
    "WINDOW",
    "named_groups",
    "numbers_with_words",
    "swapped_group",
    "swapped_groups",
    "swapped_named_group",
]

WINDOW = 6
"""Words before a number read with it."""

_PAIRS = opposite_pairs("numbers")
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


@remembered(16384)
def _numbers_with_words(text: str) -> tuple[tuple[str, tuple[set[str], ...]], ...]:
    """:func:`numbers_with_words`, remembered (an article's sentences are read for every
    sentence that cites it): read only, never changed."""
    return tuple((number, tuple(windows)) for number, windows in numbers_with_words(text).items())


@remembered(16384)
def _section_numbers(text: str) -> tuple[tuple[str, tuple[set[str], ...]], ...]:
    """:func:`_numbers_with_words` of each sentence of a section's ``text``, in order, as
    one (an article's, read once for every answer that cites it)."""
    return tuple(found for said in split_sentences(text) for found in _numbers_with_words(said))


def swapped_group(sentence: str, article: Article) -> tuple[str, str, str] | None:
    """(number, the sentence's word, the article's word) when ``sentence`` gives a number of
    ``article`` for the opposite group (see the module doc), else None."""
    said = dict(_numbers_with_words(without_citations(sentence)))
    if not said:
        return None
    given: dict[str, list[set[str]]] = {}
    for section in article.abstract:
        for number, windows in _section_numbers(section.text):
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


# -- a group named by words, not a number ------------------------------------------------------
# "a longer X is associated with a higher risk", over an article's "a shorter X ... raised
# the risk" or "a longer X lowers the risk": the group is the article's with the opposite
# word, and no number to align on.
_UP_WORDS = guarded(rf"\b(?:{RISING})\b")
_DOWN_WORDS = guarded(rf"\b(?:{FALLING})\b")
_GROUP_WORDS = 2
"""Content words after a word of a pair that name its group ("longer" duration, treatment)."""
_GROUP_REACH = 4
"""Tokens after the word of a pair those content words are read in."""
_SMALL = stop_words("group_label")


def _groups(tokens: list[str]) -> list[tuple[int, int, str, tuple[str, ...]]]:
    """Each word of a pair with the content words naming its group after it: (start, end,
    word, group words)."""
    found = []
    for i, token in enumerate(tokens):
        if token not in OPPOSITE:
            continue
        words: list[str] = []
        end = i + 1
        for j in range(i + 1, min(len(tokens), i + 1 + _GROUP_REACH)):
            word = tokens[j]
            if _is_number(word) or word in OPPOSITE:
                break
            if _UP_WORDS.fullmatch(word) or _DOWN_WORDS.fullmatch(word):
                break
            end = j + 1
            if word not in _SMALL:
                words.append(word)
                if len(words) == _GROUP_WORDS:
                    break
        if len(words) == _GROUP_WORDS:
            found.append((i, end, token, tuple(words)))
    return found


def _direction(tokens: list[str]) -> str | None:
    """ "up" or "down" when ``tokens`` go one way only, else None."""
    text = " ".join(tokens)
    up, down = bool(_UP_WORDS.search(text)), bool(_DOWN_WORDS.search(text))
    return "up" if up and not down else "down" if down and not up else None


def named_groups(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(word of a pair, its group words, the way the rest of ``text`` goes) for each group
    named in ``text`` whose sentence goes one way, and does not name the opposite group too:
    in "a longer duration had a lower risk than a shorter one" the way is the first group's
    only."""
    return list(_named_groups(text))


@remembered(16384)
def _named_groups(text: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """:func:`named_groups`, remembered."""
    tokens = [t for t in _tokens(text) if not _is_number(t)]
    readings = []
    for start, end, word, group in _groups(tokens):
        if OPPOSITE[word] in tokens:
            continue
        way = _direction(tokens[:start] + tokens[end:])
        if way is not None:
            readings.append((word, group, way))
    return tuple(readings)


@remembered(16384)
def _section_groups(text: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """:func:`_named_groups` of each sentence of a section's ``text``, in order, as one."""
    return tuple(found for said in split_sentences(text) for found in _named_groups(said))


def swapped_named_group(sentence: str, article: Article) -> tuple[str, str] | None:
    """(the sentence's group, the article's word for it) when ``sentence`` says of a group
    named by a word of a pair ("longer duration of treatment") what ``article`` says only of
    the opposite group, or says the other way of that group; else None."""
    said = named_groups(without_citations(sentence))
    if not said:
        return None
    theirs = [reading for section in article.abstract for reading in _section_groups(section.text)]
    flip = {"up": "down", "down": "up"}
    for word, group, way in said:
        other = OPPOSITE[word]
        agree = {(word, group, way), (other, group, flip[way])}
        against = {(word, group, flip[way]), (other, group, way)}
        if any(r in against for r in theirs) and not any(r in agree for r in theirs):
            return f"{word} {' '.join(group)}", other
    return None


def swapped_groups_in(articles: Mapping[str, Article]) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article whose
    number or finding it gives the opposite group."""

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in extract_pmids(sentence):
            if pmid not in articles:
                continue
            if swap := swapped_group(sentence, articles[pmid]):
                number, word, other = swap
                wrong.append((pmid, f"{word!r} {number}, where that article says {other!r}"))
            elif named := swapped_named_group(sentence, articles[pmid]):
                group, other = named
                wrong.append(
                    (pmid, f"what {group!r} does, where that article says it of {other!r}")
                )
        return wrong

    return wrong_in


@check("swapped-groups", "sentence")
def swapped_groups(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that says the group the sentence names goes the other way
    ("longer" where the article says "shorter")."""
    return logged(
        cited_findings("swapped-groups", ctx, swapped_groups_in(ctx.articles)),
        "answer_groups_swapped",
    )
