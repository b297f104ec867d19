"""Checks that hold the verdict of a yes/no answer, and the sentences stating an answer, to
what the cited articles conclude. They run once the verdict is known."""

from __future__ import annotations

from medlit.checks.conclusions import about_question
from medlit.checks.context import CheckContext, cited_findings
from medlit.checks.contradicted import against_in, contradicted_in
from medlit.checks.findings import Finding
from medlit.log import get_logger

__all__ = ["against_conclusions", "contradicted", "restated_verdict"]

log = get_logger("agent")


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
