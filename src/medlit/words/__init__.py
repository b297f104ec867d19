"""medlit's word tools and tables, shared by the answer checks, the evidence digest, the
answer cache's guard, the sources' queries, the agent and research.

- :mod:`medlit.words.tokens`: how text is split into words;
- :mod:`medlit.words.forms`: a word's spelling folded, its lemmas, its stem;
- :mod:`medlit.words.cues`: the cue reader (negation, hedging, direction; a negation's scope);
- :mod:`medlit.words.tables`: the tables in ``words/data/`` (stop words, synonyms, opposites,
  function words, drug names, cues), each read once.

Below the checks and the cache, beside the services: it imports only the standard library,
``breame`` and ``lemminflect``. How to edit a table: docs/words.md.
"""

from __future__ import annotations

from medlit.words.cues import age_groups, directions, negation_scopes, stated_directions
from medlit.words.forms import is_verb, lemmas, plural_lemma, prefix_stem, spelling, word_stem
from medlit.words.tables import (
    cue,
    cue_group,
    cue_pairs,
    cue_source,
    cue_words,
    data_lines,
    guarded,
    named_alike,
    opposite_pairs,
    stop_words,
    synonym_groups,
    word_set,
)

__all__ = [
    "age_groups",
    "cue",
    "cue_group",
    "cue_pairs",
    "cue_source",
    "cue_words",
    "data_lines",
    "directions",
    "guarded",
    "is_verb",
    "lemmas",
    "load",
    "named_alike",
    "negation_scopes",
    "opposite_pairs",
    "plural_lemma",
    "prefix_stem",
    "spelling",
    "stated_directions",
    "stop_words",
    "synonym_groups",
    "word_set",
    "word_stem",
]


def load() -> None:
    """Read every table and load the lemma table and lemminflect's rules now (once per
    process), so that the first reader that needs them is as fast as the others."""
    from medlit.words import forms, tables

    tables._stop_sets()
    tables._cues()
    forms.british()
    forms.load_lemmas()
