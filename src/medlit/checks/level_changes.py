"""A number said as a change where its article gives it as a level, or the other way.

A model can take an article's level ("the prevalence was 4.2% in the 200-mg group") and say it
as a change ("reduced the prevalence by 4.2% in the 200-mg group"). The number is the
article's, so the number checks pass it; but a level is not a change, and the finding it states
is not the article's. The reverse error is as wrong: "mortality was 30%" where the article
says "mortality fell by 30%".

Each percentage of a cited sentence (and each "N-fold", always a change) is read as a
**change** when its words say so: "by N%" ("reduced ... by 4.2%"), a change word just after it
("a 4.2% reduction", "30% lower", "30% more"), or a change word (reduction, decreased, rose, ...)
among the few words just before it ("a reduction of 30%", "decreased 30%"); as a **level**
otherwise ("was 4.2%", "4.2% of patients", "to 4.2%", "from 10%"). A confidence level ("95%
CI") is neither. When the sentence says a number as a change and every percentage of a cited
article's abstract giving that number (within half a unit of its last place) is a level, or says
it as a level where every one is a change, the citation goes (and a sentence left citing nothing):
the sentence gives the article's number as what it is not.

Hand-written: how many of the PubMedQA abstracts' sentences are flagged held to their own
abstract, and how many with a level rewritten as a change (and the other way) are caught, is
measured by ``python benchmarks/level_changes.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Literal

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.memo import remembered

__all__ = ["Kind", "Said", "kinds_in", "level_change_in", "level_changes", "level_changes_in"]

Kind = Literal["change", "level"]
Said = tuple[float, int, Kind, bool]
"""A number as a text says it: (value, decimals, change or level, written as a fold)."""

_NUMBER = r"\d+(?:\.\d+)?"
_TOKEN = re.compile(
    rf"(?<![\w.,])({_NUMBER})\s*(%|\s?percent(?:age points?)?\b|\s?per cent\b|[- ]?fold\b)"
    rf"|(?<![\w.,]){_NUMBER}(?![\w.])|[a-z]+",
    re.I,
)
_CHANGE_STEMS = (
    "reduc", "decreas", "increas", "declin", "drop", "rise", "rose", "risen", "fell", "fall",
    "lower", "rais", "improv", "gain", "loss", "lost", "cut", "grew", "grow", "elevat", "diminish",
)  # fmt: skip
_AFTER = frozenset(
    ("higher", "lower", "greater", "less", "more", "fewer", "smaller", "larger", "relative",
     "excess", "rrr")
)  # fmt: skip
"""Words after a percentage that make it a change ("30% lower", "30% more")."""
_HEDGES = frozenset(
    ("approximately", "about", "nearly", "almost", "around", "roughly", "some", "only", "just",
     "over", "under", "than", "as", "much", "significantly", "further", "additional",
     "additionally", "mean", "median", "average", "overall", "an", "a")
)  # fmt: skip
"""Words skipped walking back from a number to the word saying what it is ("by about 30%")."""
_REACH = 4
"""Words before a number read for a change word ("a relative reduction of 30%")."""
_LEVEL_AFTER = frozenset(("of", "vs", "versus"))
_COMPARATIVES = frozenset(("lower", "higher"))
_CONFIDENCE = frozenset(("ci", "cis", "confidence", "credible"))


def _is_change_word(word: str) -> bool:
    """A word of change: "reduced", "a decline"; not "lower" or "higher" naming a group or an
    outcome ("a lower rate of reintubation (4% vs 23%)")."""
    return word.startswith(_CHANGE_STEMS) and word not in _COMPARATIVES


def _kind(words_before: list[str], word_after: str) -> Kind | None:
    """What a percentage is, by the words just before it (nearest first, back to the number
    before) and the word just after it; None for a confidence level."""
    if word_after in _CONFIDENCE:
        return None
    if word_after in _LEVEL_AFTER:
        return "level"  # "4.2% of patients", "1% vs 9%"
    if word_after in _AFTER or _is_change_word(word_after):
        return "change"
    near = [w for w in words_before if w not in _HEDGES]
    if near[:2] == ["to", "up"]:  # "by up to 30%"
        near = near[2:]
    if near[:1] in (["to"], ["from"], ["at"], ["vs"], ["versus"]):
        return "level"
    if near[:1] == ["by"]:
        return "change"
    if any(_is_change_word(w) for w in words_before[:_REACH]):
        return "change"
    return "level"


def kinds_in(text: str) -> list[Said]:
    """Each percentage and fold of ``text`` with what it is said as (see the module doc)."""
    return list(_kinds_in(text))


def _signed(text: str, start: int) -> bool:
    """Whether the number at ``start`` of ``text`` is written with a sign ("-8.7 percentage
    points", "+12%"): a difference, not a range's second end ("10-20%")."""
    sign = text[start - 1 : start]
    return sign in ("-", "+", "\u2212") and not text[max(0, start - 2) : start - 1].strip(" (:[")


def _after_range(text: str, tokens: list[re.Match[str]], i: int) -> str:
    """The word after the number at ``tokens[i]``, past the rest of a range it opens ("a
    44%-67% relative decrease", "from 10 to 20% lower": the range is what the word says)."""
    k = i + 1
    while k < len(tokens):
        token = tokens[k]
        if token.group(1) is not None and text[tokens[k - 1].end() : token.start()].strip() in (
            "-",
            "\u2013",
        ):
            k += 1
        elif token.group(0) == "to" and k + 1 < len(tokens) and tokens[k + 1].group(1):
            k += 2
        else:
            break
    return tokens[k].group(0) if k < len(tokens) else ""


@remembered(16384)
def _kinds_in(text: str) -> tuple[Said, ...]:
    text = text.lower()
    tokens = list(_TOKEN.finditer(text))
    found: list[Said] = []
    for i, token in enumerate(tokens):
        number, unit = token.group(1), token.group(2)
        if number is None:
            continue
        before: list[str] = []
        for earlier in reversed(tokens[max(0, i - 8) : i]):
            if earlier.group(1) is not None or earlier.group(0)[:1].isdigit():
                break
            before.append(earlier.group(0))
        after = _after_range(text, tokens, i)
        decimals = len(number.partition(".")[2])
        if unit.strip(" -").startswith("fold"):
            found.append((float(number), decimals, "change", True))
        elif "point" in unit or _signed(text, token.start()):  # a difference of two levels
            found.append((float(number), decimals, "change", False))
        elif (kind := _kind(before, after)) is not None:
            found.append((float(number), decimals, kind, False))
    return tuple(found)


@remembered(16384)
def _section_kinds(text: str) -> tuple[Said, ...]:
    """:func:`_kinds_in` of each sentence of a section's ``text``, as one."""
    return tuple(said for sentence in split_sentences(text) for said in _kinds_in(sentence))


def level_change_in(sentence: str, article: Article) -> tuple[str, Kind, Kind] | None:
    """(the number as written, what ``sentence`` says it is, what ``article`` gives it as)
    when the sentence says a number of the article as a change that the article gives only as
    a level, or the other way; else None."""
    said = _kinds_in(without_citations(sentence))
    if not said:
        return None
    theirs = [s for section in article.abstract for s in _section_kinds(section.text)]
    for value, decimals, kind, fold in said:
        tolerance = 0.5 * 10.0**-decimals + 1e-9
        given = {k for v, _, k, f in theirs if not f and abs(v - value) <= tolerance}
        if fold and any(f and abs(v - value) <= tolerance for v, _, _, f in theirs):
            continue
        if len(given) == 1 and kind not in given:
            written = f"{value:.{decimals}f}" + ("-fold" if fold else "%")
            return written, kind, next(iter(given))
    return None


def level_changes_in(articles: Mapping[str, Article]) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article that
    gives a number of it only as the other of a level and a change."""

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in extract_pmids(sentence):
            if pmid in articles and (found := level_change_in(sentence, articles[pmid])):
                number, kind, theirs = found
                wrong.append(
                    (pmid, f"{number} said as a {kind}, where that article gives it as a {theirs}")
                )
        return wrong

    return wrong_in


@check("level-changes", "sentence")
def level_changes(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that gives a number of the sentence only as a level where the
    sentence says it as a change ("reduced ... by 4.2%" where the article's prevalence was
    4.2%), or only as a change where the sentence says it as a level."""
    return logged(
        cited_findings("level-changes", ctx, level_changes_in(ctx.articles)),
        "answer_level_changes",
    )
