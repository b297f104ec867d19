"""Phrase forms: two ways of writing one phrase that the cache guard reads as one."""

from __future__ import annotations

import pytest

from medlit.cache.guard import QuestionGuard
from medlit.words.phrase_forms import verb_of, with_phrases
from medlit.words.seed import seed_relation

_STOP = frozenset({"a", "the", "and", "do", "can"})
_RELATIONS = frozenset({"in", "with", "of", "after"})


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("do statins prevent dementia in patients with diabetes?",
         "do statins prevent dementia in diabetes patients?"),
        ("in patients with wrist fractures, can vitamin c help?",
         "in wrist fractures patients, can vitamin c help?"),
        ("are patients with acute stroke in icu at risk?",
         "are acute stroke patients in icu at risk?"),
        # Not plain words, or not closed: left as written.
        ("patients with a history of stroke?", "patients with a history of stroke?"),
        ("patients with diabetes and hypertension?", "patients with diabetes and hypertension?"),
        ("patients with one two three four?", "patients with one two three four?"),
        # Not a person noun.
        ("aspirin with clopidogrel?", "aspirin with clopidogrel?"),
    ],
)  # fmt: skip
def test_a_with_phrase_is_read_as_a_modifier(text: str, read: str) -> None:
    assert with_phrases(text, _STOP, _RELATIONS) == read


@pytest.mark.parametrize(
    ("noun", "verb"),
    [("treatment", "treat"), ("reduction", "reduce"), ("prevention", "prevent"),
     ("diagnosis", "diagnose"), ("survival", "survive"), ("admission", "admit"),
     ("signal", None), ("pressure", None), ("mortality", None), ("evidence", None)],
)  # fmt: skip
def test_a_noun_made_from_a_verb_is_the_verb(noun: str, verb: str | None) -> None:
    assert verb_of(noun) == verb


@pytest.mark.parametrize(
    ("cached", "asked"),
    [
        ("Do statins prevent dementia in diabetes patients?",
         "Do statins prevent dementia in patients with diabetes?"),
        ("Are acute stroke patients at risk of falls?",
         "Are patients with acute stroke at risk of falls?"),
        ("Is treatment of hypertension effective in the elderly?",
         "Is treating hypertension effective in the elderly?"),
        ("Does fluoridation reduce the use of dental services in adults?",
         "Does fluoridation reduce the use of dental services among adults?"),
        ("Is follow-up needed after surgery?", "Is followup needed after surgery?"),
        ("Does a delay in transfer increase mortality?",
         "Does delayed transfer increase mortality?"),
        ("Is vitamin D deficiency common among elderly nursing home residents?",
         "Is vitamin D deficiency common in older nursing home residents?"),
        ("Does exercise lower blood pressure in adults with hypertension?",
         "Does exercise reduce blood pressure in adults with hypertension?"),
        ("Is obesity associated with greater risk of knee osteoarthritis?",
         "Is obesity associated with increased risk of knee osteoarthritis?"),
    ],
)  # fmt: skip
def test_the_guard_serves_a_phrase_in_another_form(cached: str, asked: str) -> None:
    assert QuestionGuard().check(asked, cached).ok


@pytest.mark.parametrize(
    ("cached", "asked"),
    [
        # The same words, the roles swapped: the modifier is now the head's condition.
        ("Do statins prevent dementia in patients with diabetes?",
         "Do statins prevent diabetes in patients with dementia?"),
        ("Do statins prevent dementia in diabetes patients?",
         "Do statins prevent dementia in children with diabetes?"),
        ("Is treatment of hypertension effective in the elderly?",
         "Is prevention of hypertension effective in the elderly?"),
        ("Is obesity common among children?", "Is obesity common among adults?"),
        # Only before their heads, and never across a direction.
        ("Is obesity common in older children?", "Is obesity common in elderly children?"),
        ("Are older patients at greater risk?", "Are older patients at lower risk?"),
        ("Does exercise lower blood pressure?", "Does exercise raise blood pressure?"),
        ("Is the risk of falls lower in older women?", "Is the risk of falls reduced in men?"),
    ],
)  # fmt: skip
def test_the_guard_still_refuses_what_the_forms_change(cached: str, asked: str) -> None:
    assert not QuestionGuard().check(asked, cached).ok


@pytest.mark.parametrize(
    ("first", "second", "listed"),
    [("older", "elderly", True), ("Outcomes", "results", True), ("need", "require", True),
     ("reduce", "lower", False), ("improve", "worsen", False), ("children", "adults", False),
     ("older", "older", False)],
)  # fmt: skip
def test_the_seed_vocabulary_lists_wordnet_synonyms(first: str, second: str, listed: bool) -> None:
    assert (seed_relation(first, second) is not None) is listed
