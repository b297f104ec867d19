"""A research claim that turns the direction of change its quote states for the same measure.

A claim may keep every word of its quote but the one that says which way the measure went
("increased" over "reduced"): the word-share rule passes it, and :mod:`medlit.checks.comparisons`
reads only a difference against none. Here the direction cues of the cue reader
(:func:`medlit.words.stated_directions`: ``direction.up``, ``direction.down``, unnegated) are
read in the claim and in the sentence it rests on.
"""

from __future__ import annotations

from medlit.checks.claims import ClaimContext, claim_finding
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.words import stated_directions
from medlit.words.stance import content_terms

__all__ = ["MEASURE_SHARE", "MEASURE_WORDS", "claim_opposite_direction", "turned_direction"]

#: Words either side of a direction cue read as the measure it changes.
MEASURE_WORDS = 6
#: The share of the claim's measure words (at least one) its quote's must hold to be the same
#: measure.
MEASURE_SHARE = 2 / 3


def _measure(text: str, start: int, end: int) -> set[str]:
    """The content words (stemmed) of the :data:`MEASURE_WORDS` words either side of the cue
    at ``start:end`` of ``text`` (the cue itself left out)."""
    before = text[:start].split()[-MEASURE_WORDS:]
    after = text[end:].split()[:MEASURE_WORDS]
    return content_terms(" ".join([*before, *after]))


def turned_direction(claim: str, quote: str) -> tuple[str, str] | None:
    """The claim's direction cue and the quote's, when ``claim`` states the same changes as
    ``quote`` in the same order but one, which goes the other way, for the same measure (the
    words around the two cues share :data:`MEASURE_SHARE` of the claim's); else None.

    Two changes turned ("higher BMI, increased risk" over "lower BMI, reduced risk") say the
    same relation, and a claim stating more or fewer changes than its quote is no turned copy
    of it: neither is read here."""
    said, quoted = stated_directions(claim), stated_directions(quote)
    if not said or len(said) != len(quoted):
        return None
    turned = [i for i, (a, b) in enumerate(zip(said, quoted, strict=True)) if a[0] != b[0]]
    if len(turned) != 1:
        return None
    (_, c_start, c_end), (_, q_start, q_end) = said[turned[0]], quoted[turned[0]]
    wanted = _measure(claim.lower(), c_start, c_end)
    shared = wanted & _measure(quote.lower(), q_start, q_end)
    if not shared or len(shared) < MEASURE_SHARE * len(wanted):
        return None
    return claim[c_start:c_end], quote[q_start:q_end]


@check("claim-opposite-direction", "claim")
def claim_opposite_direction(ctx: ClaimContext) -> list[Finding]:
    """A claim saying its measure went the other way than the sentence it rests on says
    ("increased" over "reduced")."""
    if ctx.found is None or turned_direction(ctx.statement, ctx.found) is None:
        return []
    return claim_finding("claim-opposite-direction", ctx, "claim_opposite_direction")
