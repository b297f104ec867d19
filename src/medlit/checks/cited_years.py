"""A publication year a sentence gives for what it cites must be the cited article's.

A model can give a cited article a publication year it does not have ("two studies published between
2011 and 2013" over one report of 2014). A number check does not see it: years are left out of it,
since a year in a finding is most often the study's period ("patients treated from 2001 to 2009"). A
year said to be when a study was *published* ("published in 2015", "published between 2011 and
2013", "a 2015 study") is checked here against the years of the articles the sentence cites; one
that none of them has is taken out of the sentence, which keeps its finding and citations, with a
warning. A year the cited article has stays.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext
from medlit.checks.declare import check
from medlit.checks.findings import Action, Finding
from medlit.log import get_logger
from medlit.types import Article
from medlit.words import guarded

__all__ = ["cited_years", "wrong_years", "years_taken_out"]

_YEAR = r"((?:19|20)\d\d)"
# "published in 2015", ", published between 2011 and 2013,", "which was published in 2015"
_PUBLISHED = re.compile(
    rf"(?P<lead>,)?\s*(?:(?:which|that)\s+(?:was|were)\s+)?published\s+"
    rf"(?:in\s+{_YEAR}(?:\s+and\s+{_YEAR})?"
    rf"|between\s+{_YEAR}\s+and\s+{_YEAR}|from\s+{_YEAR}\s+to\s+{_YEAR})(?=\W)(?P<trail>\s*,)?",
    re.IGNORECASE,
)
# What every match of it says, found much faster than it is tried at each word.
_PUBLISHED_SAID = re.compile("published", re.IGNORECASE)
# "a 2015 study", "the 2012 trial"
_DATED = guarded(
    rf"\b(an?|the|this|one)\s+{_YEAR}\s+(?=(?:\w+\s+)?(?:study|studies|trial|trials|review"
    rf"|analysis|meta-analysis|report|cohort|survey)\b)",
    re.IGNORECASE,
)


def _years(match: re.Match[str]) -> tuple[int, int]:
    """The first and last year a match gives (one year: both)."""
    found = [int(y) for y in match.groups() if y and y.isdigit() and len(y) == 4]
    return min(found), max(found)


def years_taken_out(sentence: str, years: list[int]) -> tuple[str, list[str]]:
    """``sentence`` with each publication year it gives that none of ``years`` (those of the
    articles it cites) falls in taken out, and a warning for each."""
    warnings: list[str] = []

    def wrong(match: re.Match[str], phrase: str) -> bool:
        first, last = _years(match)
        if any(first <= year <= last for year in years):
            return False
        of = ", ".join(str(year) for year in years)
        warnings.append(
            f"a publication year was taken out: {phrase}, where what it cites is of {of}"
        )
        return True

    def published(match: re.Match[str]) -> str:
        opening = not match.string[: match.start()].strip()  # "Published in 2010, X ..."
        if opening or not wrong(match, f'"{match.group().strip(" ,")}"'):
            return match.group()
        # ", which was published in 2010," goes with its commas; "... 2013, both" keeps its.
        lead, trail = match.group("lead"), match.group("trail")
        return trail if trail and not lead else ""

    if _PUBLISHED_SAID.search(sentence):
        sentence = _PUBLISHED.sub(published, sentence)
    sentence = _DATED.sub(
        lambda m: f"{m.group(1)} " if wrong(m, f'"{m.group(2)}"') else m.group(), sentence
    )
    return sentence, warnings


def cited_years(sentence: str, articles: Mapping[str, Article]) -> list[int]:
    """The publication years of the articles ``sentence`` cites, in order, once each."""
    cited = [articles[p] for p in extract_pmids(sentence) if p in articles]
    return sorted({year for article in cited if (year := article.year)})


log = get_logger("agent.cited_years")


@check("wrong-years", "sentence")
def wrong_years(ctx: CheckContext) -> list[Finding]:
    """A publication year ("published in 2012") that no article the sentence cites has."""
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        years = cited_years(sentence.text, ctx.articles)
        if not years:
            continue
        checked, told = years_taken_out(sentence.text, years)
        action: Action = "rewrite" if checked else "drop"
        findings += [
            Finding("wrong-years", action, message, (), sentence.index, sentence.text, checked)
            for message in told
        ]
    if findings:
        log.warning("answer_years_taken_out", removals=len(findings))
    return findings
