"""A question's subject words: the topic key research and the checks compare texts by.

:func:`normalise_topic` folds case, punctuation, word order, stop words and plurals;
:func:`anchor_terms` keeps a question's subject words (generic words left out);
:func:`on_topic` and :func:`names_otherwise` tell whether a text keeps to them.
"""

from __future__ import annotations

import functools
import re

from medlit.words import stop_words
from medlit.words.qualified_names import mismatched, qualified_names

__all__ = ["anchor_terms", "names_otherwise", "normalise_topic", "on_topic"]

_STOP = stop_words("topic")


@functools.lru_cache(maxsize=16384)
def normalise_topic(text: str) -> str:
    """A topic key that ignores case, punctuation, word order, stop words and plurals.

    "Does metformin reduce mortality?" and "mortality reduction: metformin" differ; "Metformin
    and mortality" and "mortality with metformin" do not.
    """
    return " ".join(sorted({_singular(w) for w in set(_TOPIC_WORD.findall(text.lower())) - _STOP}))


_TOPIC_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _singular(word: str) -> str:
    """A plural's singular ("studies" -> "study", "trials" -> "trial"; "ss" kept)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# Words that name who or what kind of effect, not the subject: sharing only these with the
# question is drift ("What is the population of older adults?" for a vitamin D question).
_GENERIC = stop_words("generic")


# A span of time said in two words ("over the long term"): "term" is no subject there, as in
# "term infants" it is. ("long-term care", one word, stays a subject.)
_TERM_SPAN = re.compile(r"\b(?:long|short|medium|longer|shorter)\s+term\b", re.I)


# "us" as written in lower case is the pronoun ("Can CRP tell us the stage?"); "US" is an
# ultrasound.
_US = re.compile(r"\bus\b")


def anchor_terms(question: str) -> set[str]:
    """The question's subject words (normalised; generic and one-letter words left out, and
    a span of time said in two words, "over the long term", and the pronoun "us")."""
    question = _US.sub(" ", _TERM_SPAN.sub(" ", question))
    return {t for t in normalise_topic(question).split() if len(t) > 1 and t not in _GENERIC}


def names_otherwise(text: str, question: str) -> bool:
    """Whether ``text`` names only otherwise what the question names (vitamin C for D)."""
    return bool(
        mismatched(qualified_names(text, fold_case=True), qualified_names(question, fold_case=True))
    )


def on_topic(text: str, anchors: set[str]) -> bool:
    """Whether ``text`` keeps enough of the question's subject words (a third, at least one)."""
    if not anchors:
        return True
    shared = anchors & set(normalise_topic(text).split())
    return len(shared) >= max(1, round(len(anchors) / 3))
