"""A research finding held to its article by the registry's ``claim`` checks, in order."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from medlit.checks.claims import ClaimContext, article_quote
from medlit.checks.findings import Finding
from medlit.checks.registry import enabled
from medlit.checks.swapped_terms import Swap
from medlit.types import Article

__all__ = ["CheckedClaim", "check_claim"]


@dataclass(frozen=True)
class CheckedClaim:
    """What :func:`check_claim` found: the article's sentence bearing a claim (None when the
    quote is not in the article: a claim kept so, with ``claim-quote`` turned off, is
    unquoted), and why the claim is dropped (None: kept)."""

    quote: str | None
    reason: str | None
    swap: Swap | None = None  # the term the claim swapped, when that is the reason
    finding: Finding | None = None  # the finding that dropped it


def check_claim(
    statement: str, quote: str, article: Article, question: str, disabled: Collection[str] = ()
) -> CheckedClaim:
    """Whether the finding ``statement`` an extraction drew from ``article`` with ``quote``
    stands, under the sub-question ``question``: the ``claim`` checks of the registry run in
    order (:mod:`medlit.checks.claims`), and the first that finds something drops it. The
    reasons are those of the ``fabricated_claim_dropped`` log event.

    The quote is looked up in the article (:func:`~medlit.checks.claims.article_quote`)
    before any check runs, so a check turned off stops only what it decides: with
    ``claim-quote`` off a claim whose quote the article does not hold is kept, unquoted
    (``quote`` None). A claim with no words is no claim: dropped (``empty_claim``) whichever
    checks run."""
    found = article_quote(quote, article)
    ctx = ClaimContext(statement, quote, article, question, found=found)
    for check in enabled("claim", disabled):
        findings = check.run(ctx)
        if findings:
            finding = findings[0]
            swap = ctx.swap if finding.data.get("reason") == "claim_swaps_term" else None
            return CheckedClaim(ctx.found, finding.data["reason"], swap, finding)
    if not statement.strip():
        return CheckedClaim(ctx.found, "empty_claim")
    return CheckedClaim(ctx.found, None)
