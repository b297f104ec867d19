"""Phrase forms: two ways of writing one phrase, read as one (``words/data/phrase_forms.toml``).

The answer cache's guard (:mod:`medlit.cache.wording`) compares two questions word by word.
Some rewordings change the words' form or order without changing what is asked:

- a person noun and its "with" phrase, the noun used as a modifier: "patients with acute
  stroke" / "acute stroke patients" (:func:`with_phrases`, which writes the first as the
  second);
- prepositions of the same role: "among the elderly" / "in the elderly" (:func:`same_role`);
- words that say the same before certain heads only: "older residents" / "elderly
  residents", "greater risk" / "increased risk", "lower blood pressure" / "reduce blood
  pressure" (:func:`same_before`);
- a noun made from a verb and the verb: "treatment of" / "treating", "reduction" / "reduce"
  (:func:`verb_of`).

The same words joined or split ("follow-up" / "followup" / "follow up") are the guard's own
(:func:`medlit.cache.wording.word_difference`). Each form is data: a head noun, a preposition,
a pair of endings.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache

from medlit.words.forms import is_verb
from medlit.words.tables import data_lines

__all__ = ["PhraseForms", "phrase_forms", "same_before", "same_role", "verb_of", "with_phrases"]


@dataclass(frozen=True, slots=True)
class PhraseForms:
    """The table, parsed.

    Attributes:
        heads: person nouns whose "with" phrase may be written before them.
        max_words: the longest "with" phrase moved.
        roles: a preposition -> the one of the same role it is read as.
        rules: (noun ending, verb ending) pairs, tried in order.
        before: (words, heads, gap): the words say the same before a head at most ``gap``
            words on; the first stands for all.
    """

    heads: frozenset[str]
    max_words: int
    roles: dict[str, str]
    rules: tuple[tuple[str, str], ...]
    before: tuple[tuple[tuple[str, ...], tuple[str, ...], int], ...]


@cache
def phrase_forms() -> PhraseForms:
    """``words/data/phrase_forms.toml``, read once."""
    data = tomllib.loads("\n".join(data_lines("phrase_forms.toml")))
    return PhraseForms(
        heads=frozenset(data["with_phrase"]["heads"]),
        max_words=int(data["with_phrase"]["max_words"]),
        roles={str(k): str(v) for k, v in data["same_role"].items()},
        rules=tuple((str(a), str(b)) for a, b in data["derivation"]["rules"]),
        before=tuple(
            (tuple(g["words"]), tuple(g["heads"]), int(g["gap"])) for g in data["same_before"]
        ),
    )


@cache
def _before_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    out = []
    for words, heads, gap in phrase_forms().before:
        alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
        targets = "|".join(sorted(map(re.escape, heads), key=len, reverse=True))
        out.append(
            (
                re.compile(rf"\b(?:{alternatives})\b(?=(?: [\w'-]+){{0,{gap}}} (?:{targets})\b)"),
                words[0],
            )
        )
    return tuple(out)


def same_before(text: str) -> str:
    """``text`` (lower case) with each word of a ``same_before`` group that stands before one
    of its heads written as the group's first word ("older residents" -> "elderly
    residents", "reduces the risk" -> "lower the risk")."""
    for pattern, first in _before_patterns():
        text = pattern.sub(first, text)
    return text


def same_role(token: str) -> str:
    """The preposition ``token`` is read as (itself when it has no other form)."""
    return phrase_forms().roles.get(token, token)


def with_phrases(text: str, stop: frozenset[str], relations: frozenset[str]) -> str:
    """``text`` (lower case) with each "HEAD with X Y" written "X Y HEAD" (see the module
    docstring): only a phrase of plain words (none in ``stop``) that ends at a punctuation mark,
    at the end or before a word of ``relations``."""
    forms = phrase_forms()

    def swap(match: re.Match[str]) -> str:
        words = match.group(2).split()
        if any(w in stop or w in relations for w in words):
            return match.group(0)
        return f"{match.group(2)} {match.group(1)}"

    return _with_pattern(forms.heads, forms.max_words, relations).sub(swap, text)


@lru_cache(maxsize=4)
def _with_pattern(
    heads: frozenset[str], max_words: int, relations: frozenset[str]
) -> re.Pattern[str]:
    head = "|".join(sorted(heads))
    after = "|".join(sorted(relations))
    return re.compile(
        rf"\b({head}) with ((?:[\w'-]+ ){{0,{max_words - 1}}}[\w'-]+)"
        rf"(?=\s*(?:[,?.;:!]|$)|\s+(?:{after})\b)"
    )


@lru_cache(maxsize=65536)
def verb_of(noun: str) -> str | None:
    """The verb a noun is made from ("treatment" -> "treat", "reduction" -> "reduce"), or
    None: the first of the table's endings that gives a word lemminflect knows as a verb."""
    for ending, verb_ending in phrase_forms().rules:
        if noun.endswith(ending) and len(noun) > len(ending) + 2:
            verb = noun[: -len(ending)] + verb_ending
            if verb != noun and is_verb(verb):
                return verb
    return None
