"""A study design a sentence names for what it cites must be the cited article's.

A model can dress a finding in a stronger design than its article has ("as demonstrated by a
systematic review of ..." over a case-control study that nowhere calls itself one). A reader weighs
a systematic review or a randomised trial above other evidence, so a design the model gives an
article it does not have overstates the answer.

Only those two designs are checked, the ones that claim strength. A sentence naming one is
held to the articles it cites: it stands when one of them has it (its publication types, or the
design its title or methods state: :attr:`~medlit.types.Article.study_type`) or names it anywhere
in its title or abstract ("randomised", "randomly assigned", "meta-analysis"). Otherwise the
design goes, the finding and its citations kept, with a warning: "a systematic review of 429
cases" reads "a study of 429 cases", "randomized controlled trials [PMID:1][PMID:2] show" reads
"studies ... show".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.types import Article, StudyType
from medlit.words import cue_source, guarded

__all__ = ["wrong_designs", "wrong_designs_rewriter"]

# What may stand between the article and the design: "a large, multicentre, double-blind ...".
_QUALIFIERS = cue_source("design.qualifiers")
_DESIGNS: tuple[tuple[StudyType, str, re.Pattern[str]], ...] = (
    (
        StudyType.SYSTEMATIC_REVIEW,
        r"systematic review|meta-?analys[ie]s",
        re.compile(r"systematic (?:literature )?reviews?|meta-?analys[ie]s", re.I),
    ),
    (
        StudyType.RCT,
        # an unstructured abstract (no methods section for the design reader) may say only
        # "patients were randomly assigned"
        r"randomi[sz]|randomly (?:assigned|allocated|divided)",
        re.compile(
            r"randomi[sz]ed(?:,)?\s+(?:(?:double-blind(?:ed)?|placebo-controlled|controlled"
            r"|clinical|multi-?cent(?:er|re)d?)[,\s]+)*(?:trials?|studies|study)|RCTs?\b",
            re.I,
        ),
    ),
)


def _phrase(design: re.Pattern[str]) -> re.Pattern[str]:
    """The design named with its determiner and qualifiers: "a large randomized trial"."""
    return re.compile(
        # not "non-randomized" nor "quasi-randomised": those claim no trial
        rf"(?<![-\w])(?:(?P<det>an?|the|one|this|another)\s+)?{_QUALIFIERS}"
        rf"(?<![-\w])(?P<design>{design.pattern})",
        re.I,
    )


# Each design's phrase, behind the design alone (guarded, :func:`medlit.words.guarded`): a
# sentence the design pattern finds nothing in holds no phrase, which is read five times
# slower.
_PHRASES = [
    (level, said, guarded(design.pattern, design.flags), _phrase(design))
    for level, said, design in _DESIGNS
]


def _bears(article: Article, level: StudyType, said: str) -> bool:
    """Whether ``article`` has the design, or names it anywhere in its title or abstract."""
    if article.study_type >= level:
        return True
    text = " ".join([article.title, *(s.text for s in article.abstract)])
    return re.search(said, text, re.I) is not None


_PLURAL = guarded(r"(?:reviews|analyses|trials|studies|RCTs)$", re.I)


def _study(match: re.Match[str], sentence: str) -> str:
    """What stands for a design taken out: "a study" ("the study", "studies" for a plural),
    capitalised when it opens the sentence."""
    det = (match.group("det") or "").lower()
    if _PLURAL.search(match.group("design")):
        words = "studies"
    elif det in ("a", "an"):
        words = "a study"
    else:
        words = f"{det} study".strip()
    return words[:1].upper() + words[1:] if not sentence[: match.start()].strip() else words


def wrong_designs_rewriter(
    articles: Mapping[str, Article],
) -> tuple[Callable[[str], str], list[str]]:
    """Each sentence with the designs no article it cites is taken out, and the warnings so far
    (one for each design)."""
    warnings: list[str] = []

    def check(sentence: str) -> str:
        cited = [articles[p] for p in extract_pmids(sentence) if p in articles]
        if not cited:
            return sentence
        for level, said, named, phrase in _PHRASES:
            if named.search(sentence) is None or phrase.search(sentence) is None:
                continue  # names no such design
            if any(_bears(article, level, said) for article in cited):
                continue
            pieces, end = [], 0
            for match in phrase.finditer(sentence):
                warnings.append(
                    f'a study design was taken out: "{match.group("design")}", which no '
                    "article it cites reports"
                )
                pieces += [sentence[end : match.start()], _study(match, sentence)]
                end = match.end()
            sentence = "".join(pieces) + sentence[end:]
        return sentence

    return check, warnings


@check("wrong-designs", "sentence")
def wrong_designs(ctx: CheckContext) -> list[Finding]:
    """A study design ("a systematic review", "a randomised trial") that no article the
    sentence cites is, by its publication types and its abstract."""
    rewrite, told = wrong_designs_rewriter(ctx.articles)
    found = sentence_findings("wrong-designs", ctx, rewrite, told)
    return logged(found, "answer_designs_taken_out")
