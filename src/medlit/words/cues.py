"""The cue reader: negation, hedging and direction cues (``words/data/cues.toml``) and the
scope of a negation over the words that follow it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from medlit.words.tables import cue, cue_words

__all__ = ["negation_scopes"]

#: Tokens a negation reaches past its cue: "no fever", "not pregnant", "don't have any fever".
NEGATION_REACH = 3


def negation_scopes(
    tokens: Sequence[str], is_content: Callable[[str], bool]
) -> Iterator[tuple[str, bool]]:
    """Each content token of ``tokens`` (lower case; ``is_content`` says which are), with
    whether a negation covers it.

    A negator (cue ``negation.token``) covers the first content word after it, at most
    :data:`NEGATION_REACH` tokens on; a word of ``negation.scope_end`` ("but", "because")
    ends its scope, and a hedge right after it (``hedge.after_negation``: "not sure if")
    makes it negate nothing.
    """
    negator, scope_end, hedges = (
        cue("negation.token"),
        cue_words("negation.scope_end"),
        (cue_words("hedge.after_negation")),
    )
    scope = 0
    for raw in tokens:
        if negator.match(raw):
            scope = NEGATION_REACH
            continue
        if raw in scope_end or (scope == NEGATION_REACH and raw in hedges):
            scope = 0
        in_scope, scope = scope > 0, max(scope - 1, 0)
        if not is_content(raw):
            continue
        yield raw, in_scope
        scope = 0
