"""Checks that hold the verdict of a yes/no answer, and the sentences stating an answer, to
what the cited articles conclude. They run once the verdict is known."""

from __future__ import annotations

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings
from medlit.checks.contradicted import against_in, contradicted_in
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.log import get_logger
from medlit.types import Article
from medlit.words.conclusions import about_question, conclusion_sentences
from medlit.words.stance import (
    change_said,
    content_terms,
    opposite_of_asked,
    sentence_stance,
    states_no_change,
)

__all__ = [
    "against_conclusions",
    "against_direction",
    "against_own_words",
    "contradicted",
    "restated_verdict",
]

log = get_logger("agent")


@check("restated-verdict", "verdict")
def restated_verdict(ctx: CheckContext) -> list[Finding]:
    """A yes or no read again from the answer left, where the answer the model gave the title
    question of an article on the question, which concludes the other, was left out."""
    said = ctx.data.get("restated-titles", {})
    verdict = ctx.verdict
    if verdict not in ("yes", "no"):
        return []
    on = about_question(ctx.question)
    if not any(s == verdict and on(ctx.articles[p]) for p, s in said.items()):
        return []
    log.info("verdict_made_consistent", read=verdict, verdict="uncertain")
    return [Finding("restated-verdict", "flip_verdict", data={"to": "uncertain"})]


@check("contradicted", "verdict")
def contradicted(ctx: CheckContext) -> list[Finding]:
    """A cited sentence stating the answer opposite to the verdict, where every article it
    cites concludes the verdict's."""
    verdict = ctx.verdict
    if verdict not in ("yes", "no"):
        return []
    wrong_in = contradicted_in(ctx.draft.text, verdict, ctx.articles, ctx.question)
    if wrong_in is None:
        return []
    found = cited_findings("contradicted", ctx, wrong_in)
    log.warning("answer_contradicted", removals=len(found))
    return found


@check("against-conclusions", "verdict")
def against_conclusions(ctx: CheckContext) -> list[Finding]:
    """A cited sentence stating the verdict's own answer (either answer, under Uncertain)
    where every article it cites concludes the other."""
    verdict = ctx.verdict
    if verdict is None:
        return []

    found: list[Finding] = []
    for stated in ("yes", "no") if verdict == "uncertain" else (verdict,):
        wrong_in = against_in(ctx.draft.text, stated, ctx.articles, ctx.question)
        if wrong_in is not None:
            told = cited_findings("against-conclusions", ctx, wrong_in)
            log.warning("answer_against_conclusions", removals=len(told))
            found += told
    return found


def _reading(article: Article, question: str) -> str | None:
    """How an article's conclusion answers ``question``: ``"yes"``, ``"opposite"`` (it states
    the change opposite to the one asked), ``"null"`` (no change, no difference) or None."""
    asked = content_terms(question)
    readings = set()
    for sentence in conclusion_sentences(article):
        if not content_terms(sentence) & asked:
            continue
        stance = sentence_stance(sentence, question)
        if stance == "yes":
            readings.add("yes")
        elif stance == "no" or states_no_change(sentence):
            readings.add("null")
        elif opposite_of_asked(sentence, question):
            readings.add("opposite")
    if "yes" in readings:
        return "yes"
    return "opposite" if "opposite" in readings else next(iter(readings), None)


@check("against-direction", "verdict")
def against_direction(ctx: CheckContext) -> list[Finding]:
    """A "yes" where no cited article on the question concludes yes and some conclude the
    change opposite to the one asked ("lowered the risk" under "does X cause Y?"): the
    verdict is withheld.

    A conclusion of no change is left to the checks above: read by cues, it turned as many
    right verdicts of recorded answers as wrong ones."""
    if ctx.verdict != "yes":
        return []
    on = about_question(ctx.question)
    cited = [ctx.articles[p] for p in extract_pmids(ctx.draft.text) if p in ctx.articles]
    readings = {r for a in cited if on(a) and (r := _reading(a, ctx.question)) is not None}
    if not readings or "yes" in readings:
        return []
    if "opposite" not in readings:
        return []
    return _withheld("against-direction", "the cited conclusions state", "not yes")


@check("against-own-words", "verdict")
def against_own_words(ctx: CheckContext) -> list[Finding]:
    """A "yes" to a question asking a direction of change whose answer's own sentences state
    the opposite change more often than the one asked ("X improved the outcome" under "does
    X worsen it?"): the verdict is withheld. A tie is left to the checks of the cited
    conclusions: the answer's sentences may be about a part of the question."""
    if ctx.verdict != "yes":
        return []
    said = [change_said(without_citations(s.text), ctx.question) for s in ctx.draft.sentences]
    opposite, asked = said.count("opposite"), said.count("asked")
    if not opposite or asked >= opposite:
        return []
    return _withheld("against-own-words", "the answer's own sentences state")


def _withheld(check: str, who: str, rest: str = "") -> list[Finding]:
    """A "yes" withheld by ``check``: ``who`` states the change opposite to the one asked."""
    log.info(f"verdict_{check.replace('-', '_')}", read="yes", verdict="uncertain")
    message = f"the verdict was withheld: {who} the change opposite to the one asked"
    message += f", {rest}" if rest else ""
    return [Finding(check, "flip_verdict", message, data={"to": "uncertain"})]
