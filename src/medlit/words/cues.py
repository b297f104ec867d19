"""The cue reader: negation, hedging and direction cues (``words/data/cues.toml``) and the
scope of a negation over the words that follow it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from medlit.words.tables import cue, cue_group, cue_words

__all__ = ["age_groups", "age_mentions", "directions", "negation_scopes", "stated_directions"]

#: Tokens a negation reaches past its cue: "no fever", "not pregnant", "don't have any fever".
NEGATION_REACH = 3
#: Characters before a direction cue in which a negation (cue ``negation.clause``) turns it:
#: "did not significantly reduce".
DIRECTION_NEGATION_REACH = 25


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


def directions(text: str) -> frozenset[str]:
    """The directions of an effect ``text`` (lower case) asks about: ``"up"`` (cue
    ``direction.up``: "increase", "raise the risk"), ``"down"`` (``direction.down``: "reduce",
    "prevent"), both or neither."""
    return frozenset(d for d in ("up", "down") if cue(f"direction.{d}").search(text))


def stated_directions(text: str) -> list[tuple[str, int, int]]:
    """The changes ``text`` states, in order: each direction cue (``direction.up``,
    ``direction.down``, as :func:`directions` reads them) as ``("up" | "down", start, end)``
    in ``text``, but those a negation within :data:`DIRECTION_NEGATION_REACH` characters
    before turns ("did not reduce" states no change, nor its opposite)."""
    lower, negation = text.lower(), cue("negation.clause")
    found = []
    for name in ("up", "down"):
        for match in cue(f"direction.{name}").finditer(lower):
            before = lower[max(0, match.start() - DIRECTION_NEGATION_REACH) : match.start()]
            if not negation.search(before):
                found.append((match.start(), match.end(), name))
    return [(name, start, end) for start, end, name in sorted(found)]


def age_groups(text: str) -> set[str]:
    """The age groups ``text`` (lower-cased) names: infant, child, adult, elderly, by word
    (cues ``population.*``) or by age (``age.stated``: "7 years old" is a child)."""
    return set(age_mentions(text))


def age_mentions(text: str) -> dict[str, str]:
    """Each age group ``text`` (lower-cased) names, with the words that name it: a word
    ("children") where one does, else the age stated ("7 years")."""
    found = {
        name: match.group(0)
        for name, rx in cue_group("population").items()
        if (match := rx.search(text))
    }
    for stated in cue("age.stated").finditer(text):
        group = _stated_group(float(stated.group(1)), stated.group(2))
        if group:
            found.setdefault(group, stated.group(0).strip())
    return found


def _stated_group(value: float, unit: str) -> str | None:
    """The age group of an age stated as ``value`` ``unit`` (years, months, weeks, days)."""
    if unit.startswith(("m", "w", "d")):
        if value >= 48:
            return None
        return "infant" if value < 24 or unit.startswith(("w", "d")) else "child"
    if not unit.startswith("y"):
        return None
    if value < 2:
        return "infant"
    if value < 18:
        return "child"
    return "adult" if value < 65 else "elderly"
