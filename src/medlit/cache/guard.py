"""QuestionGuard: may the answer cached for one question be served for another?

The answer cache finds candidates by the cosine similarity of question embeddings
(``CacheSettings.tau``). Cosine cannot tell a reworded question from one that asks something
else in nearly the same words: a changed verb, direction, population, timing, site, actor,
intervention, outcome or comparison moves the embedding very little. So the guard fails
closed: it serves the cached answer only when the two questions are shown to say the same
thing, word by word.

**The rule** (:meth:`QuestionGuard.check`). Both questions are read as the answer checks read
them (lower case, as typed: :func:`medlit.text.as_typed`) and split into words. A hit is served
only when every word of each question is found in the other, where a word is found if the
other question writes it

- the same, or in the other British / American spelling (ischaemic / ischemic, tumour /
  tumor, randomised / randomized, apnoea / apnea),
- in another inflection (women / woman, improves / improve, delayed / delay),
- as digits for a number word (four / 4), or
- by a vetted synonym (``words/data/synonyms.tsv``: kidney / renal, heart attack / myocardial
  infarction, paracetamol / acetaminophen, ...),

and where function and framing words (``words/data/function_words.txt``: articles, be / do /
have, modal verbs, pronouns that name nobody, prepositions of relation, "is there evidence
that") may be added, dropped or swapped. Word order may change only by moving a phrase whole (one
that begins with a word that relates two things: for, of, to, by, than, from, with, in, on,
versus, ...), by moving one verb (a passive: "can X be used" / "can I use X"), or in a
question in the passive with its agent ("by"); and where both questions say a relating word,
the same word must follow it in both ("A better than B" is not "B better than A", "does A
cause B" is not "does B cause A").
Any other word that differs refuses the hit, and the refusal names the words:
``"differs: improve / compromise"`` (the new question's words, then the cached one's),
``"only in one question: delayed"`` or ``"differs in order: than A / than B"``. Negations,
numbers, question words, prepositions of direction or time and quantities are never function
words. The word comparison is :mod:`medlit.cache.wording`.

**The related-question checks** (:meth:`QuestionGuard.check_related`) look for the differences
in meaning that are known to matter: negation of a clinical finding, a dose or number, a
qualified name (type 1 / type 2), the direction of an effect, a population (age group,
pregnancy, sex), a drug, an opposite outcome, the kind of treatment and what is asked (cause,
treatment, symptoms ...). They decide nothing on their own where the cache serves an answer by
cosine: they filter the candidates below ``tau`` that the verified band sends to an LLM judge
(:mod:`medlit.cache.verify`, off unless a verifier is calibrated), which then accounts for the
words that differ, and they tell research topics apart (:mod:`medlit.research.tracking`).

What the checks compare of a question's meaning is its frame (:class:`medlit.words.frame.
QuestionFrame`: populations, directions, intents, kinds of treatment, negation): the frame the
caller carries (the ask's, the one stored with a cached answer), or, for a question handed in
as text, :func:`medlit.words.frame.frame_of`'s. The guard reads no question itself.

Each question's words and features are computed once (``functools.lru_cache``), so a check
between two questions read before costs little more than comparing them; the vocabularies and
the lemmatiser are loaded by the first check that needs them, or by :meth:`QuestionGuard.load`
(``python benchmarks/cache_contrast.py`` reports the cost per check; figures in
``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from medlit.cache.wording import load as load_wording
from medlit.cache.wording import word_difference
from medlit.text import as_typed
from medlit.words import age_groups, cue, cue_pairs, opposite_pairs, word_set
from medlit.words.frame import QuestionFrame, frame_of, is_content_word, word_key
from medlit.words.qualified_names import describe, qualified_names, qualifiers_match
from medlit.words.tokens import HYPHENATED_WORDS as _WORD

__all__ = [
    "Asked",
    "GuardVerdict",
    "QuestionFeatures",
    "QuestionGuard",
    "age_groups",
    "question_features",
]

#: A question as the guard takes it: its frame (carried), or its text (read by
#: :func:`medlit.words.frame.frame_of`).
Asked = str | QuestionFrame


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """The guard's decision on one (new, cached) question pair.

    Attributes:
        ok: True when the cached answer may be served for the new question.
        reason: Why not (``None`` when ``ok``), e.g. ``"different drug: ibuprofen vs
            acetaminophen"``.
    """

    ok: bool
    reason: str | None = None


def _compatible(a: str, b: str) -> bool:
    return a == b or frozenset((a, b)) in _COMPATIBLE


# The tables (medlit.words, words/data/): read once, when this module is imported.
_DRUGS = word_set("drugs.txt")
_DRUG_STEM = cue("drug.stem")
_ANTONYMS = opposite_pairs("question")
_COMPATIBLE = cue_pairs("intent_pairs.compatible")


# --- per-question features -----------------------------------------------------------------

_UNIT = (
    r"mg|mcg|µg|ug|g|grams?|ml|cc|units?|iu|%|percent|mmhg|mg/dl|mmol|lbs?|pounds?|kg|oz|"
    r"tablets?|pills?|puffs?|drops?"
)
_DOSE = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNIT})\b")
# Pregnancy and breastfeeding change what is safe: named on one side only, the other answer
# may not hold (cues pregnancy.named, sex.*).
# Qualitative doses count as doses: "low-dose aspirin" is not the same question as "aspirin".
_DOSE_WORD = re.compile(
    r"\b(low|high|standard|double|single|mini|micro|loading)[- ]?dos(?:e|es|ed|ing)\b"
)


_key = word_key


def _as_written(key: str, questions: tuple[str, ...]) -> str:
    """The word of ``questions`` that :func:`_key` makes ``key`` (``key`` itself if none)."""
    for question in questions:
        for raw in re.findall(r"[\w'-]+", question.lower()):
            if _key(raw) == key:
                return raw
    return key


def _is_drug(word: str) -> bool:
    return word in _DRUGS or (len(word) >= 6 and _DRUG_STEM.search(word) is not None)


@dataclass(frozen=True, slots=True)
class QuestionFeatures:
    """What the guard compares, computed once per question frame: the question's words
    (``content``, ``doses``, ``names``, ``drugs``) and what its frame reads (the rest;
    ``negated`` and ``asserted`` are findings)."""

    content: frozenset[str]
    negated: frozenset[str]
    asserted: frozenset[str]
    doses: frozenset[tuple[str, str]]
    names: tuple[tuple[str, frozenset[str]], ...]  # qualified names, head-sorted (hashable)
    age_groups: frozenset[str]
    young: bool  # names children or infants by word ("in children", "paediatric", "babies")
    pregnancy: bool  # names pregnancy or breastfeeding
    sexes: frozenset[str]
    drugs: frozenset[str]
    intents: frozenset[str]
    modalities: frozenset[str]
    excludes: bool
    directions: frozenset[str]
    yes_no: bool
    negated_ask: bool


@lru_cache(maxsize=4096)
def question_features(question: Asked) -> QuestionFeatures:
    """Features of one question, by its frame (or its text, read by :func:`frame_of`);
    cached: the same cached question is checked many times."""
    frame = frame_of(question)
    question = frame.question
    # As typed: "Sjögren’s" and "Sjogren's" are one word (the pattern's letters are ASCII).
    text = as_typed(question.lower())
    content = frozenset(_key(raw) for raw in _WORD.findall(text) if is_content_word(raw))
    doses = {(_unit(u), _number(n)) for n, u in _DOSE.findall(text)}
    doses |= {("dose", level) for level in _DOSE_WORD.findall(text)}
    return QuestionFeatures(
        content=content,
        negated=frozenset(frame.negated),
        asserted=frozenset(frame.asserted),
        doses=frozenset(doses),
        names=tuple(sorted(qualified_names(question, fold_case=True).items())),
        age_groups=frame.population_names("age"),
        young=bool(frame.ages_by_word() & {"child", "infant"}),
        pregnancy=bool(frame.population_names("pregnancy")),
        sexes=frame.population_names("sex"),
        drugs=frozenset(w for w in content if _is_drug(w)),
        intents=frozenset(frame.intents),
        modalities=frozenset(frame.treatments),
        excludes=frame.asks_alternatives,
        directions=frozenset(frame.changes_named),
        yes_no=frame.yes_no,
        negated_ask=frame.negated_ask,
    )


def _unit(unit: str) -> str:
    unit = unit.rstrip("s")
    return {"gram": "g", "pound": "lb", "percent": "%", "µg": "mcg", "ug": "mcg"}.get(unit, unit)


def _number(number: str) -> str:
    return str(float(number)).removesuffix(".0")


def _similar(a: str, b: str) -> bool:
    """Same word up to a typo ('omeprazole' / 'omeporazale')."""
    if a == b:
        return True
    if len(a) < 5 or len(b) < 5 or a[:2] != b[:2]:
        return False
    return SequenceMatcher(None, a, b).ratio() >= 0.8


# --- the guard -------------------------------------------------------------------------------


class QuestionGuard:
    """Decides whether the answer cached for one question may be served for another.

    Args:
        check_intent: In the related-question checks, refuse pairs that ask for different
            things (cause vs treatment ...).
        word_rule: :meth:`check` applies the word-by-word rule (the cache's rule); False makes
            it the related-question checks (:meth:`check_related`).
    """

    def __init__(self, *, check_intent: bool = True, word_rule: bool = True) -> None:
        self._check_intent = check_intent
        self._word_rule = word_rule

    def load(self) -> None:
        """Load the vocabularies and the lemmatiser the word rule compares by now (a server's
        warm-up), not in the first check that needs them. A question asked again in the same
        words needs none of them, so a fresh process serving it does not load them."""
        if self._word_rule:
            load_wording()

    def check(self, new_question: Asked, cached_question: Asked) -> GuardVerdict:
        """Judge serving ``cached_question``'s answer for ``new_question``: served only when
        every word that differs is a spelling, an inflection, a vetted synonym or a function
        word (see the module docstring).

        Args:
            new_question: The question being asked now (or its frame).
            cached_question: The question the cached answer was written for (or its frame).

        Returns:
            ``GuardVerdict(ok=True)`` or a refusal naming the words that differ.
        """
        if not self._word_rule:
            return self.check_related(new_question, cached_question)
        difference = word_difference(_text(new_question), _text(cached_question))
        if difference:
            return GuardVerdict(ok=False, reason=difference.describe())
        return GuardVerdict(ok=True)

    def check_related(self, new_question: Asked, cached_question: Asked) -> GuardVerdict:
        """The related-question checks: refuse a pair that differs in a way known to change
        the answer (negation, number, name, direction, population, drug, opposite outcome,
        kind of treatment, intent). A pass shows no sameness: words may still differ.

        Args:
            new_question: The question being asked now: its frame, or its text.
            cached_question: The question the cached answer was written for: its frame
                (the one stored with the answer), or its text.

        Returns:
            ``GuardVerdict(ok=True)`` or a refusal with its reason.
        """
        a, b = frame_of(new_question), frame_of(cached_question)
        new, old = question_features(a), question_features(b)
        for reason in (
            _negation(new, old, a.question, b.question),
            _numbers(new, old),
            _names(new, old, a.question, b.question),
            _direction(new, old),
            _population(new, old),
            _drugs(new, old),
            _antonyms(new, old),
            _modality(new, old),
            _intent(new, old) if self._check_intent else None,
        ):
            if reason is not None:
                return GuardVerdict(ok=False, reason=reason)
        return GuardVerdict(ok=True)


def _text(question: Asked) -> str:
    return question.question if isinstance(question, QuestionFrame) else question


def _negation(new: QuestionFeatures, old: QuestionFeatures, *questions: str) -> str | None:
    flipped = (new.negated & old.asserted) | (old.negated & new.asserted)
    if flipped:
        return f"negation differs: {_as_written(sorted(flipped)[0], questions)}"
    # A yes/no question asked in the negative ("does X not reduce Y?") inverts the answer of
    # the positive one; in wh-questions a negation is usually rewording ("why can't I sleep").
    if new.yes_no and old.yes_no and new.negated_ask != old.negated_ask:
        return "negation differs: one yes/no question is negated"
    return None


def _direction(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    if new.directions and old.directions and new.directions.isdisjoint(old.directions):
        return (
            f"different direction: {'/'.join(sorted(new.directions))}"
            f" vs {'/'.join(sorted(old.directions))}"
        )
    return None


def _numbers(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    if bool(new.doses) != bool(old.doses):
        stated = sorted(new.doses or old.doses)[0]
        return f"different number: a dose ({' '.join(reversed(stated))}) in one question only"
    a, b = new.doses, old.doses
    for key in {k for k, _ in a} & {k for k, _ in b}:
        va = {v for k, v in a if k == key}
        vb = {v for k, v in b if k == key}
        if va.isdisjoint(vb):
            return f"different number: {sorted(va)[0]} {key} vs {sorted(vb)[0]} {key}"
    return None


def _names(
    new: QuestionFeatures, old: QuestionFeatures, new_text: str, old_text: str
) -> str | None:
    # "COX-2" / "COX-1" embed at 0.955, "HIV-1" / "HIV-2" at 0.952: one letter or number names
    # another thing. Each must be named by the other question too (D matches D3, II matches 2).
    ours, theirs = dict(new.names), dict(old.names)
    for head in sorted(ours.keys() & theirs.keys()):
        a, b = ours[head], theirs[head]
        if not (_covered(a, b) and _covered(b, a)):
            return f"different name: {describe(head, a, new_text)} vs {describe(head, b, old_text)}"
    return None


def _covered(these: frozenset[str], others: frozenset[str]) -> bool:
    return all(any(qualifiers_match(x, y) for y in others) for x in these)


def _population(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    a, b = _age_class(new.age_groups), _age_class(old.age_groups)
    # Unequal, not only disjoint: "in adults and children" is not answered by "in adults".
    if a and b and a != b:
        return f"different population: {'/'.join(sorted(a))} vs {'/'.join(sorted(b))}"
    # Children named (by word: "2 weeks ago" is no infant) where the other names no one: an
    # answer that names no population rests on studies of adults (a follow-up "what about
    # children?" must not be served the adult answer).
    if (new.young and not b) or (old.young and not a):
        return "different population: children named on one side only"
    if new.pregnancy != old.pregnancy:
        return "different population: pregnancy or breastfeeding named on one side only"
    if new.sexes and old.sexes and new.sexes.isdisjoint(old.sexes):
        return f"different population: {'/'.join(new.sexes)} vs {'/'.join(old.sexes)}"
    return None


def _age_class(groups: frozenset[str]) -> set[str]:
    # An answer for a baby may not hold for a ten-year-old, but adult vs elderly answers
    # coincide too often to refuse on that alone.
    return {{"infant": "children", "child": "children"}.get(g, "adults") for g in groups}


def _drugs(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    # Only when both name drugs: a paraphrase often names the drug in one wording only
    # ("this med" / "Monistat 1 (tioconazole)"), and the cosine already weighs that.
    if not new.drugs or not old.drugs:
        return None
    only_new = sorted(d for d in new.drugs if not any(_similar(d, o) for o in old.content))
    only_old = sorted(d for d in old.drugs if not any(_similar(d, n) for n in new.content))
    if only_new or only_old:
        a = only_new or sorted(new.drugs)
        b = only_old or sorted(old.drugs)
        return f"different drug: {a[0]} vs {b[0]}"
    return None


def _antonyms(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    for a, b in _ANTONYMS:
        for x, y in ((a, b), (b, a)):
            if x in new.content and y in old.content and x not in old.content:
                return f"different outcome: {x} vs {y}"
    return None


def _modality(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    if new.excludes != old.excludes:
        return "different question: one asks for alternatives"
    if new.modalities and old.modalities and new.modalities.isdisjoint(old.modalities):
        return (
            f"different treatment: {'/'.join(sorted(new.modalities))}"
            f" vs {'/'.join(sorted(old.modalities))}"
        )
    return None


def _intent(new: QuestionFeatures, old: QuestionFeatures) -> str | None:
    if not new.intents or not old.intents:
        return None
    if not any(_compatible(a, b) for a in new.intents for b in old.intents):
        return (
            f"different question intent: {'/'.join(sorted(new.intents))}"
            f" vs {'/'.join(sorted(old.intents))}"
        )
    return None
