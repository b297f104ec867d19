"""Checks that read the answer left by the sentence checks and say what it no longer covers:
each returns a ``note`` finding, which the policy (:mod:`medlit.checks.policy`) puts first."""

from __future__ import annotations

from medlit.checks.answering import names_as_asked
from medlit.checks.citation_names import left_unanswered as names_left_unanswered
from medlit.checks.citation_names import unaddressed
from medlit.checks.citations import extract_pmids
from medlit.checks.cited_subjects import populations_unspoken as unspoken_populations
from medlit.checks.context import CheckContext
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import all_of, either_of
from medlit.words.search_plan import Role
from medlit.words.unmentioned import unmentioned_terms

__all__ = [
    "cited_off_subject",
    "left_unanswered",
    "populations_unspoken",
    "unaddressed_words",
    "unmentioned",
    "untold_subjects",
]


@check("left-unanswered", "note")
def left_unanswered(ctx: CheckContext) -> list[Finding]:
    """What the question asks about was said only by sentences left out for naming it
    otherwise than their articles (or no citation is left at all)."""
    found = ctx.data.get("misattributed-names", [])
    missing = names_left_unanswered(ctx.draft.text, found, ctx.question)
    if not missing:
        return []
    message = unaddressed("", missing)
    return [Finding("left-unanswered", "note", message, data={"missing": missing})]


@check("unaddressed-words", "note")
def unaddressed_words(ctx: CheckContext) -> list[Finding]:
    """A subject word of the question that only the uncited conclusions left out used, and
    nothing left says."""
    unsupported = ctx.data.get("unsupported-conclusions")
    if unsupported is None:
        return []
    words = unsupported.unaddressed()
    if not words:
        return []
    message = (
        f"None of the retrieved articles speaks of {all_of(unsupported.words)} together: the "
        "statements that did, citing nothing, were left out."
    )
    return [Finding("unaddressed-words", "note", message, data={"words": words})]


@check("untold-subjects", "note")
def untold_subjects(ctx: CheckContext) -> list[Finding]:
    """A subject or population of the question that only sentences left out (cited to
    articles that never speak of it) spoke of."""
    unsaid = ctx.data.get("unsaid-subjects")
    if unsaid is None:
        return []
    cited = [ctx.articles[p] for p in extract_pmids(ctx.draft.text) if p in ctx.articles]
    untold = unsaid.unaddressed(ctx.draft.text, cited)
    if not untold:
        return []
    words = " and ".join(untold)
    message = (
        f"None of the articles cited speaks of {words}: the statements that said so were left out."
    )
    return [Finding("untold-subjects", "note", message, data={"words": untold})]


@check("populations-unspoken", "note")
def populations_unspoken(ctx: CheckContext) -> list[Finding]:
    """A population the question names (children, women, type 2 diabetes, hip fractures,
    outpatients) that none of the articles the answer cites speaks of."""
    if ctx.data.get("untold-subjects"):
        return []
    absent = unspoken_populations(ctx.question, ctx.draft.text, ctx.articles, ctx.frame)
    if not absent:
        return []
    words = " and ".join(absent)
    message = (
        f"None of the articles cited speaks of {words}: what they found may not hold for {words}."
    )
    return [Finding("populations-unspoken", "note", message, data={"words": absent})]


@check("unmentioned-terms", "note")
def unmentioned(ctx: CheckContext) -> list[Finding]:
    """A subject term of the question that no retrieved article mentions at all."""
    terms = unmentioned_terms(ctx.question, ctx.articles.values(), ctx.frame)
    if not terms:
        return []
    message = (
        f"None of the retrieved articles mentions {either_of(terms)}, so what follows may not "
        "answer the question."
    )
    return [Finding("unmentioned-terms", "note", message, data={"terms": terms})]


@check("cited-off-subject", "note")
def cited_off_subject(ctx: CheckContext) -> list[Finding]:
    """A yes or no resting on no cited article about the question's subject: none of the
    articles the answer still cites speaks of the subject as the question's frame reads it
    (in any form medlit vouches for, or in other words near it:
    :func:`~medlit.checks.answering.names_as_asked`), so the verdict answers another
    question."""
    frame = ctx.frame
    if frame is None or not frame.yes_no or not frame.subject or ctx.data.get("untold-subjects"):
        return []
    cited = [ctx.articles[p] for p in extract_pmids(ctx.draft.text) if p in ctx.articles]
    subject: tuple[Role, ...] = ("subject",)
    if not cited or any(
        names_as_asked(frame, a.everything_said, ctx.embedder, subject) for a in cited
    ):
        return []
    about = "; ".join(f"“{a.title.rstrip('.')}”" for a in cited[:2] if a.title)
    message = f"None of the articles cited is about {frame.subject}" + (
        f": they are about {about}." if about else "."
    )
    return [Finding("cited-off-subject", "note", message, data={"subject": frame.subject})]
