"""A number a sentence cites an article for must be in that article.

A model can carry a number from one article (or from an earlier answer) into a sentence citing
another, which gives no such number: a dose, a rate, a sample size. Each cited sentence's numbers
are looked for in the articles it cites (title, abstract and year; "forty-six" counts as 46; a
number written with k decimals matches any within half a unit of its last place, so "24%" matches
23.9%). A citation to an article that gives none of a sentence's numbers goes, and a sentence left
with no citation is left out, with a warning. Not checked: whole numbers under 10 (often spelled
out) unless a percentage, years, P-value thresholds ("P < 0.05"), and the numbers of names (type 2,
IL-6: :mod:`medlit.words.qualified_names`).

A number the article gives must also be given for what the sentence gives it for: an article
reporting two rates for two conditions holds both numbers, so a sentence giving one condition the
other's rate finds its number in the article. When every sentence of the article that gives the
number puts another of its subjects where the clause of the answer holding the number names one
(:func:`medlit.checks.swapped_terms.swapped_term`, the rule research claims follow), the citation
goes as for a number the article lacks. A sentence of the article gives a number for the
subjects it names between the number before it and the one after it, not for every subject of
the sentence: a restatement of one arm of a trial ("58.4% with X versus 12.7% with placebo",
the article adding "and 35.1% with Z"), naming the trial or the disease the article is about,
stands (``python benchmarks/number_subjects.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.checks.swapped_terms import Swap, swapped_term
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words import guarded
from medlit.words.evidence import title_and_abstract
from medlit.words.memo import remembered
from medlit.words.qualified_names import without_names

__all__ = ["numbers_in", "unsourced_in", "unsourced_numbers"]

# Each opens with what every match starts with (a digit; a word boundary before a number
# word's first letter), which lets ``re`` pass over the rest of a text quickly.
_NUMBER = re.compile(r"(?=\d)(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\d)")
_UNITS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen"),
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_FIRST_LETTERS = "".join(sorted({word[0] for word in [*_TENS, *_UNITS, "hundred"]}))
_WORDS = re.compile(
    rf"\b(?=[{_FIRST_LETTERS}])(?:"
    rf"\b({'|'.join(_TENS)})(?:[- ]({'|'.join(_UNITS[1:10])}))?\b"
    rf"|\b({'|'.join(_UNITS)}|hundred)\b)",
    re.I,
)


def numbers_in(text: str) -> list[tuple[float, int]]:
    """The numbers written in ``text``: (value, decimals), digits and words up to 100."""
    return list(_numbers_in(text))


def _place(table: list[str], word: str) -> int:
    """Where ``word`` stands in ``table``, read as :data:`_WORDS` reads it: case-blind, so
    "ſix" (a long s) and "fıve" (a dotless i), which ``str.lower`` leaves apart, are six and
    five."""
    lowered = word.lower()
    if lowered in table:
        return table.index(lowered)
    return next(i for i, entry in enumerate(table) if re.fullmatch(entry, word, re.I))


@remembered(16384)
def _numbers_in(text: str) -> tuple[tuple[float, int], ...]:
    found = [
        (float(whole.replace(",", "") + (f".{frac}" if frac else "")), len(frac or ""))
        for whole, frac in _NUMBER.findall(text)
    ]
    for tens, unit, alone in _WORDS.findall(text):
        if tens:
            ones = _place(_UNITS, unit) if unit else 0
            value = 20 + 10 * _place(_TENS, tens) + ones
        else:
            value = 100 if alone.lower() == "hundred" else _place(_UNITS, alone)
        found.append((float(value), 0))
    return tuple(found)


# "significant (P < 0.05)": the threshold a model writes of any significant result, not a
# number of the article (which may give P = 0.03).
_P_THRESHOLD = guarded(r"\bp\s*(?:<|>|≤|≥|<=|>=)\s*0?\.\d+", re.I)
# A percentage under 10 written in digits ("9.5%", "5 %") is a finding, never a count spelled
# out.
_SMALL_PERCENT = re.compile(r"(?<![\w.,])\d(?:\.\d+)?\s?%")


def _checked(sentence: str) -> list[tuple[float, int]]:
    """The numbers of a sentence that its sources must give: those of 10 and over but years,
    and the smaller ones written with decimals ("an odds ratio of 1.45", "0.5 mg") or as a
    percentage ("5%")."""
    text = _P_THRESHOLD.sub(" ", without_names(without_citations(sentence)))
    percent = {value for value, _ in numbers_in(" ".join(_SMALL_PERCENT.findall(text)))}
    return [
        (value, decimals)
        for value, decimals in numbers_in(text)
        if (value >= 10 or decimals or value in percent)
        and not (decimals == 0 and 1900 <= value <= 2099)
    ]


def _written(number: tuple[float, int]) -> str:
    """A number as the answer wrote it: 22428608, not 2.24286e+07; 1.45 and 0.50 as such."""
    value, decimals = number
    return f"{value:.{decimals}f}"


def _given(number: tuple[float, int], source: list[tuple[float, int]]) -> bool:
    value, decimals = number
    tolerance = 0.5 * 10.0**-decimals + 1e-9
    return any(abs(other - value) <= tolerance for other, _ in source)


# Where a sentence joins two findings: "FM was found in 12%, and fatigue in 68%".
_CLAUSES = re.compile(r";|,\s+(?:and|but|while|whereas)\s+|\s+(?:while|whereas)\s+", re.I)


_Numbered = list[tuple[str, list[tuple[float, int]]]]
"""An article's abstract sentences, each with the numbers it gives."""


def _numbered(article: Article) -> _Numbered:
    return [
        (sentence, numbers_in(sentence))
        for section in article.abstract
        for sentence in split_sentences(section.text)
    ]


def _given_for_another(
    sentence: str, number: tuple[float, int], article: Article, sentences: _Numbered
) -> Swap | None:
    """The swap by which the clause of ``sentence`` giving ``number`` names another subject
    than every sentence of ``article`` (``sentences``) that gives it, or None (one of them
    says it, or none gives the number: the title, the year)."""
    clause = next(
        (c for c in _CLAUSES.split(without_citations(sentence)) if _given(number, numbers_in(c))),
        None,
    )
    if clause is None:
        return None
    found = None
    for said, numbers in sentences:
        if _given(number, numbers):
            found = swapped_term(clause, said, article, near=_giving(said, number))
            if found is None:
                return None
    return found


def _giving(sentence: str, number: tuple[float, int]) -> str:
    """The words of ``sentence`` that give ``number``: from the number before it to the one
    after it ("rates were 58.4% with X versus" of "... 58.4% with X versus 12.7% with Y and
    35.1% with Z"; only numbers the check reads bound it, not "n = 5", a year or the number of
    a name), the whole sentence when it gives no other number."""
    spans = [
        m.span()
        for m in _NUMBER.finditer(without_names(sentence, in_place=True))
        if _checked(m.group())
    ]
    for i, (start, end) in enumerate(spans):
        if _given(number, numbers_in(sentence[start:end])):
            before = spans[i - 1][1] if i else 0
            after = spans[i + 1][0] if i + 1 < len(spans) else len(sentence)
            return sentence[before:after]
    return sentence


def unsourced_in(articles: Mapping[str, Article]) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article that
    lacks one of its numbers, or gives it for another subject (each article read once)."""
    sources: dict[str, list[tuple[float, int]]] = {}
    sentences: dict[str, _Numbered] = {}  # split once an article, when a number is looked up

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        cited = [p for p in extract_pmids(sentence) if p in articles]
        wanted = _checked(sentence) if cited else []
        why: list[tuple[str, str]] = []
        if not wanted:
            return why
        for pmid in cited:
            if pmid not in sources:
                article = articles[pmid]
                # (its title and abstract's are kept with the article, :mod:`.memo`)
                sources[pmid] = [
                    *numbers_in(title_and_abstract(article)),
                    *numbers_in(str(article.year or "")),
                ]
            missing = [n for n in wanted if not _given(n, sources[pmid])]
            if missing:
                shown = ", ".join(_written(number) for number in missing)
                why.append((pmid, f"{shown}, a number that article does not give"))
                continue
            if pmid not in sentences:
                sentences[pmid] = _numbered(articles[pmid])
            for number in wanted:
                swap = _given_for_another(sentence, number, articles[pmid], sentences[pmid])
                if swap is not None:
                    why.append((pmid, f"{_written(number)}, a number that article gives for "
                                f"{swap.dropped}, not {swap.brought}"))  # fmt: skip
                    break
        return why

    return wrong_in


@check("unsourced-numbers", "sentence")
def unsourced_numbers(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that does not give a number the sentence gives, or gives it
    for the other group."""
    return logged(
        cited_findings("unsourced-numbers", ctx, unsourced_in(ctx.articles)),
        "answer_numbers_unsourced",
    )
