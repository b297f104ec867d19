"""A cited sentence about something else: neither it nor the article it cites names the question.

A model given several articles can go on from the one that answers the question to another
it was given on a different subject ("The evidence from [PMID] also suggests that <another
article's conclusion>"). The citation is real and the sentence is that article's conclusion,
so no other check takes it out; but it answers nothing that was asked, and "also suggests"
reads as if it did.

Here a cited sentence that names none of the question's subject terms
(:func:`medlit.words.unmentioned.subject_terms`: the drugs, conditions and procedures it names; not
a population word, nor a framing word) loses each citation to an article that names none of them
either (title, abstract or MeSH, in any form of the word, or by abbreviation), and is left out when
it has none left. A sentence that goes on about the question's subject without naming it ("It also
lowered vomiting [PMID]") stays: its article names the subject. Under a question with one subject
term (fewer than :data:`MIN_TERMS`), a sentence must also say none of the question's words (a
one-term question's term is as often its framing as its subject).

How many of the PubMedQA abstracts' own sentences go when each is cited to its own article
with the title left out (the worst case), and how many conclusion sentences of each
question's nearest other article go, is measured by ``python benchmarks/off_question.py``
(figures in ``docs/benchmarks.md``).

A sentence that says its articles support the answer ("also supports this conclusion by
showing that ...") is held closer: each article it cites must name every subject term of the
question (:func:`borrowed_support_rewriter`); else the claim of support goes and the finding stays
as the article's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, remove_cited_for, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import either_of
from medlit.types import Article
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import said_in, word_stems
from medlit.words.search_plan import asked_terms
from medlit.words.topics import anchor_terms, normalise_topic
from medlit.words.unmentioned import mentioned, subject_terms

__all__ = ["borrowed_support", "borrowed_support_rewriter", "off_question", "off_question_in"]

MIN_TERMS = 2
"""Subject terms a question must have for its sentences to be checked on them alone: a
question's one rare word is as often how it frames its subject ("factors amenable to
prevention", "sicker") as the subject. With one, a sentence is checked only when it says none of
the question's words at all (:func:`medlit.words.topics.anchor_terms`)."""


def off_question_in(
    articles: Mapping[str, Article], question: str, frame: QuestionFrame | None = None
) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article naming
    none of ``question``'s subject terms (its ``frame``'s, when given), where the sentence
    names none either."""
    terms = subject_terms(question, frame)
    if not terms:
        return lambda sentence: []
    named = either_of(list(terms.values()))
    # One subject term: the sentence must say none of the question's words either.
    asked: set[str] = set()
    if len(terms) < MIN_TERMS:
        words = asked_terms(frame) if frame is not None and frame.subject else set()
        asked = {normalise_topic(word) for word in words or anchor_terms(question)}
    off: dict[str, bool] = {}

    def off_question(pmid: str) -> bool:
        if pmid not in off:
            off[pmid] = not mentioned(terms, [articles[pmid].everything_said])
        return off[pmid]

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        cited = [p for p in extract_pmids(sentence) if p in articles]
        plain = without_citations(sentence)
        if not cited or mentioned(terms, [plain]):
            return []
        said = word_stems(plain) if asked else set()  # under one subject term only
        if any(said_in(word, said) for word in asked):
            return []
        why = f"something else than was asked: neither names {named}"
        return [(p, why) for p in cited if off_question(p)]

    return wrong_in


# "A study [PMID] also supports this conclusion by showing that ...": the finding after it is
# the article's, the support is the model's.
_SUPPORT = re.compile(
    r"\b(?:also\s+)?(?:supports?|confirms?|corroborates?|reinforces?)\s+(?:this|these|that|the"
    r"\s+above)\s+(?:conclusions?|findings?|results?|observations?|evidence|claims?)"
    r"(?:\s+by\s+(?:showing|demonstrating|finding|reporting)(?:\s+that)?)?",
    re.I,
)
# The same claim said the other way round: "The claim is supported by [PMID], which found
# that ..."; "This is further supported by a study".
_SUPPORTED_BY = re.compile(
    r"^\W*(?:this|these|the|that)(?:\s+(?:claim|conclusion|finding|answer|statement|result)s?)?"
    r"\s+(?:is|are)\s+(?:also\s+|further\s+)?(?:supported|confirmed|corroborated|reinforced)"
    r"\s+by\s+(?:(?:a|the|another|one)\s+(?:study|trial|article|review|report)\s*)?"
    r"(?P<cites>(?:\[PMID:\d+\]\s*)+),?\s*(?:which|that)\s+(?P<verb>found|showed|reported"
    r"|demonstrated)\b",
    re.I,
)


def borrowed_support_rewriter(
    articles: Mapping[str, Article], question: str, frame: QuestionFrame | None = None
) -> tuple[Callable[[str], str], list[str]]:
    """Each sentence without a claim that its articles support the answer when none of them
    names every subject term of ``question`` (its ``frame``'s, when given); and the warnings
    so far (one each)."""
    terms = subject_terms(question, frame)
    warnings: list[str] = []
    if not terms:
        return lambda sentence: sentence, warnings

    def check(sentence: str) -> str:
        claim = _SUPPORT.search(sentence)
        passive = _SUPPORTED_BY.match(sentence) if claim is None else None
        cited = [p for p in extract_pmids(sentence) if p in articles]
        if (claim is None and passive is None) or not cited:
            return sentence
        if any(len(mentioned(terms, [articles[p].everything_said])) == len(terms) for p in cited):
            return sentence
        said = mentioned(terms, [articles[p].everything_said for p in cited])
        unsaid = [word for key, word in terms.items() if key not in said]
        if passive is not None:  # "A study [PMID] found that ...": the finding, the article's
            warnings.append(
                f"a claim of support was taken out: PMID {cited[0]} never mentions "
                f"{either_of(unsaid)}"
            )
            return (
                f"A study {passive['cites'].strip()} {passive['verb']}" + sentence[passive.end() :]
            )
        if claim is None:
            return sentence
        rest = sentence[claim.end() :].strip(" ,.")
        if without_citations(rest).strip():
            shown = "shows that" if claim.group(0).rstrip().endswith("that") else "shows"
            warnings.append(
                f"a claim of support was taken out: PMID {cited[0]} never mentions "
                f"{either_of(unsaid)}"
            )
            return sentence[: claim.start()] + shown + sentence[claim.end() :]
        why = f"support it cannot give: it never mentions {either_of(unsaid)}"
        kept, told = remove_cited_for(sentence, [(p, why) for p in cited])
        warnings.extend(told)
        return kept

    return check, warnings


@check("off-question", "sentence")
def off_question(ctx: CheckContext) -> list[Finding]:
    """A citation of a sentence naming none of the question's subject terms to an article
    naming none of them either."""
    found = off_question_in(ctx.articles, ctx.question, ctx.frame)
    return logged(cited_findings("off-question", ctx, found), "answer_off_question")


@check("borrowed-support", "sentence")
def borrowed_support(ctx: CheckContext) -> list[Finding]:
    """A claim that an article supports the answer ("also supports this conclusion") when
    the article does not name every subject term of the question."""
    rewrite, told = borrowed_support_rewriter(ctx.articles, ctx.question, ctx.frame)
    found = sentence_findings("borrowed-support", ctx, rewrite, told)
    return logged(found, "answer_support_borrowed")
