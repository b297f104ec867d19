"""The searches of a question, planned from its frame: one planner for ``ask`` and research.

A question's frame (:mod:`medlit.words.frame`) names what it asks about (its subject), what of
it (its outcome), what it is compared with and who it is asked of (its populations). Each is a
*concept* of the search: its words with the variants medlit vouches for (spelling, inflection,
the other name it gives in parentheses, the vetted synonyms of ``synonyms.tsv``,
``term_synonyms.tsv`` and ``drug_names.tsv``), ORed within the concept and ANDed between
concepts, in PubMed's own syntax (quoted phrases, parentheses), which Europe PMC reads too.

When a search finds too little, the plan widens before it drops (a phrase becomes the AND of
its words), then drops what matters least first: the question's other words (qualifiers), its
populations, what it compares with, and last its outcome, which a step says it dropped. The
subject is never dropped: an article about something else answers another question. Only
when all of that found nothing on the subject is the question searched by any of its rarer
words, best match first (:func:`_best_match`), and the answer says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from medlit.text import fold_accents
from medlit.words import frequency, mesh
from medlit.words.forms import british, known_word, plural_lemma, word_stem
from medlit.words.frame import QuestionFrame
from medlit.words.search_terms import query_terms, relaxed_queries
from medlit.words.tables import stop_words, synonym_groups
from medlit.words.topics import anchor_terms

__all__ = [
    "Concept",
    "Role",
    "SearchStep",
    "asked_terms",
    "concept_words",
    "concepts_of",
    "names_asked",
    "names_concept",
    "parts_named",
    "phrases_sharing_a_word",
    "plan_searches",
    "speaks_of",
    "speaks_of_subject",
    "unnamed_asked",
]

#: What a concept is of the question, in the order a search drops them (the subject never).
Role = Literal["qualifier", "population", "comparison", "outcome", "subject"]
_DROP_ORDER: tuple[Role, ...] = ("qualifier", "population", "comparison", "outcome")

# Words that name no concept of their own: function words, the generic heads of a phrase
# ("risk", "use", "level") that an article says in other words, and what frames a question
# ("treatment", "link"): no qualifier of its search.
_FUNCTION = stop_words("query")
_HEADS = stop_words("phrase_head")
_FRAMING = stop_words("framing") | stop_words("generic")
# A singular or plural form rarer in English than this (Zipf) is not searched: a rule made it.
_PLURAL_ZIPF = 1.5
# At most this many variants of one concept: a long OR buys little and costs the query length.
_MAX_VARIANTS = 6


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept of a question's search: its role, its name as the frame reads it, its
    phrases (each variant a phrase, ORed: the narrow form) and its key words, each with its
    variants (ANDed: the wide form)."""

    role: Role
    label: str
    phrases: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]

    def narrow(self) -> str:
        """The concept as one of its phrases: ``("oral contraceptive" OR "oral
        contraceptives")``."""
        return _any(self.phrases)

    def wide(self) -> str:
        """The concept as all of its key words, in any order: ``(oral AND (contraceptive OR
        contraceptives))``; the narrow form when it is one word."""
        if len(self.words) < 2:
            return self.narrow()
        return "(" + " AND ".join(_any(variants) for variants in self.words) + ")"

    @property
    def widens(self) -> bool:
        return len(self.words) > 1

    def found_in(self, text: str, words: frozenset[str]) -> bool:
        """Whether a text (``text``: its words joined by single spaces, with a space at each
        end; ``words``: the same as a set) says this concept: one of its phrases, or each of
        its key words in one of its forms, compared by stem ("exercising", "exercise"), or
        another name of the MeSH descriptor a phrase of it names (:mod:`medlit.words.mesh`)."""
        if any(f" {phrase} " in text for phrase in self.phrases):
            return True
        stems = frozenset(word_stem(w) for w in words)
        if bool(self.words) and all(
            any((f" {v} " in text) if " " in v else word_stem(v) in stems for v in variants)
            for variants in self.words
        ):
            return True
        # Or by another name of the MeSH concept it is ("hs-crp": "c-reactive protein").
        return any(mesh.same_concept(phrase, text) for phrase in self.phrases)


@dataclass(frozen=True, slots=True)
class SearchStep:
    """One search of a plan: its query, and what it is (which concept it widened or
    dropped), for the search log. ``dropped``: the roles it searches without."""

    query: str
    why: str
    dropped: tuple[Role, ...] = ()
    # the subject by fewer of its words: the question's last resort, no research part's
    last_resort: bool = False
    # any of the question's words, not all (:func:`_best_match`)
    any_word: bool = False

    @property
    def outcome_dropped(self) -> bool:
        """Whether this search looks for the subject without the outcome asked about."""
        return "outcome" in self.dropped and not self.any_word


def _atom(phrase: str) -> str:
    return f'"{phrase}"' if " " in phrase or "-" in phrase else phrase


def _any(variants: Iterable[str]) -> str:
    atoms = list(dict.fromkeys(_atom(v) for v in variants))
    return atoms[0] if len(atoms) == 1 else "(" + " OR ".join(atoms) + ")"


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _word_forms(word: str, *, head: bool = True) -> tuple[str, ...]:
    """``word``, its other spelling and, for a noun at a phrase's head (``head``), its
    singular or plural where English has it (a name, a number, a word the lemma table does not
    know, as it is)."""
    if " " in word or not word.isalpha() or len(word) < 3:
        return (word,)
    forms = [word, *_other_spellings(word)]
    if head:
        single = plural_lemma(word)
        other = single if single != word else _plural(word)
        # A plural English uses ("cancers"), not one only a rule makes ("pregnants").
        if other != word and known_word(other) and frequency.zipf(other) >= _PLURAL_ZIPF:
            forms += [other, *_other_spellings(other)]
    return tuple(dict.fromkeys(forms))


@lru_cache(maxsize=1)
def _american() -> dict[str, str]:
    return {us: uk for uk, us in british().items()}


def _other_spellings(word: str) -> tuple[str, ...]:
    """The British or American spelling of ``word`` (``breame``'s table: "oesophageal",
    "esophageal"), where it has one."""
    other = british().get(word) or _american().get(word)
    return (other,) if other and other != word else ()


@lru_cache(maxsize=2)
def _synonyms(word_level: bool) -> dict[str, tuple[str, ...]]:
    """Each vetted term -> the other terms of its groups (lower case): of a whole phrase, the
    three tables; of one word inside a phrase (``word_level``), the terms an abstract uses
    alike and the drug names (``synonyms.tsv`` pairs a noun with its adjective: "mouth" for
    the "oral" of "oral contraceptive" is no phrase)."""
    tables = ["term_synonyms.tsv", "drug_names.tsv"]
    if not word_level:
        tables.append("synonyms.tsv")
    found: dict[str, list[str]] = {}
    for table in tables:
        for group in synonym_groups(table):
            # An abbreviation of three letters or fewer names other things too ("asa").
            terms = [t.lower() for t in group if len(t) > 3 or t == group[0]]
            for term in terms:
                found.setdefault(term, []).extend(t for t in terms if t != term)
    return {term: tuple(dict.fromkeys(others)) for term, others in found.items()}


def _key_words(phrase: str) -> list[str]:
    """The words of ``phrase`` a search needs, a name with its qualifier as one ("vitamin
    c"): its words without function words and without a generic head at either end ("oral
    contraceptive use": oral, contraceptive; "use of statins": statins)."""
    words = [t.strip('"') for t in query_terms(phrase, max_terms=12, stop=_FUNCTION)]
    while len(words) > 1 and words[-1] in _HEADS:
        words.pop()
    while len(words) > 1 and words[0] in _HEADS:
        words.pop(0)
    return words


def _phrase_variants(words: list[str], aliases: Iterable[str] = ()) -> tuple[str, ...]:
    """The phrase ``words`` in the forms it may be written: as asked, its last word singular
    or plural, in the other spelling, with a vetted synonym for the whole or for a word, by
    the other names of the MeSH concept it names (:func:`medlit.words.mesh.other_names`), and
    the other names given (``aliases``)."""
    phrase = " ".join(words)
    variants = [phrase]
    variants += _synonyms(word_level=False).get(phrase, ())
    if len(words) > 1:
        for i, word in enumerate(words):
            for other in _synonyms(word_level=True).get(word, ()):
                variants.append(" ".join([*words[:i], other, *words[i + 1 :]]))
    for form in _word_forms(words[-1])[1:]:
        variants.append(" ".join([*words[:-1], form]))
    for i, word in enumerate(words[:-1]):
        for other in _other_spellings(word):
            variants.append(" ".join([*words[:i], other, *words[i + 1 :]]))
    variants += [" ".join(_key_words(a)) for a in aliases if _key_words(a)]
    variants += mesh.other_names(phrase)
    return tuple(dict.fromkeys(v for v in variants if v))[:_MAX_VARIANTS]


def _concept(role: Role, label: str, aliases: Iterable[str] = ()) -> Concept | None:
    words = _key_words(label)
    if not words:
        return None
    aliases = tuple(aliases)
    return Concept(
        role=role,
        label=label,
        phrases=_phrase_variants(words, aliases),
        words=tuple(_word_forms(w, head=i == len(words) - 1) for i, w in enumerate(words))
        if not aliases
        else (),
    )


@lru_cache(maxsize=4096)
def concepts_of(frame: QuestionFrame, text: str = "", *, max_terms: int = 8) -> tuple[Concept, ...]:
    """The concepts of ``frame``'s question, subject first; ``text`` (a research
    sub-question asking one part of it) adds its own words as qualifiers. At most
    ``max_terms`` key words in all, the subject's and the outcome's first."""
    concepts: list[Concept] = []
    covered: set[str] = set()

    def add(role: Role, label: str, aliases: Iterable[str] = ()) -> None:
        concept = _concept(role, label, aliases)
        if concept is None or set(concept.phrases[0].split()) <= covered:
            return
        concepts.append(concept)
        covered.update(w for variants in concept.words for w in variants)
        covered.update(w for phrase in concept.phrases for w in phrase.split())

    add("subject", frame.subject, frame.subject_aliases)
    # A sub-question asks one part of the question: the question's outcome, comparison and
    # populations are searched in it where it names them; its own words say the rest.
    part = _Text(text) if text else None
    named = sorted(
        (p.words or p.name for p in frame.populations if not p.words[:1].isdigit()),
        key=lambda words: -len(words),  # "older adults" covers the "adults" it names too
    )
    roles: list[tuple[Role, str]] = [("outcome", frame.outcome), ("comparison", frame.comparison)]
    for role, label in [*roles, *(("population", words) for words in named)]:
        concept = _concept(role, label) if label else None
        if concept is not None and (part is None or concept.found_in(part.joined, part.words)):
            add(role, label)
    # The words of change asked about and those linking subject and outcome ("cure",
    # "effective for") name no concept: the articles say which way it went in their own words.
    asked = {*frame.direction_words.split(), *frame.relation.split()}
    left = [
        term
        for term in query_terms(text or frame.question, max_terms=max_terms + 4)
        if term.strip('"') not in covered
        and term not in asked
        and term not in _FRAMING
        and term not in _HEADS
    ]
    budget = max_terms - sum(max(len(c.words), 1) for c in concepts)
    for term in left[: max(budget, 0)]:
        add("qualifier", term.strip('"'))
    return tuple(concepts)


_TEXT_WORD = re.compile(r"[a-z0-9]+(?:['\u2019-][a-z0-9]+)*")


class _Text:
    """A text as :meth:`Concept.found_in` reads it: its words joined by single spaces (with
    one at each end) and as a set, lower case, accents folded."""

    def __init__(self, text: str) -> None:
        tokens = _TEXT_WORD.findall(fold_accents(text.lower()))
        self.joined, self.words = f" {' '.join(tokens)} ", frozenset(tokens)


def _query(concepts: Iterable[Concept], wide: bool) -> str:
    return " AND ".join(c.wide() if wide else c.narrow() for c in concepts)


def plan_searches(
    frame: QuestionFrame, text: str = "", *, max_terms: int = 8
) -> tuple[SearchStep, ...]:
    """The searches for ``frame``'s question (or ``text``, one part of it), narrowest first:
    every concept as a phrase; each widened to its words; then without its qualifiers, its
    populations, its comparison and last its outcome. The subject stays in every one.

    With no subject read, the question's words relaxed one at a time, the commonest first
    (:func:`medlit.words.search_terms.relaxed_queries`), as before the frame.
    """
    concepts = concepts_of(frame, text, max_terms=max_terms)
    if not concepts or concepts[0].role != "subject":
        terms = query_terms(text or frame.question, max_terms=max_terms) or [frame.question]
        first = SearchStep(" AND ".join(terms), "the question's words")
        return (first, *(SearchStep(q, why) for q, why in relaxed_queries(terms)))
    steps = [SearchStep(_query(concepts, wide=False), "every concept of the question")]
    if any(c.widens for c in concepts):
        widened = ", ".join(c.label for c in concepts if c.widens)
        steps.append(SearchStep(_query(concepts, wide=True), f"widened: {widened} (its words)"))
    kept = list(concepts)
    dropped: list[Role] = []
    if text:
        # A sub-question's own words say which part it asks: dropped one at a time, the
        # commonest in English first ("carry" before "resistance"), so its aspect stays longest.
        own = sorted(
            (c for c in kept if c.role == "qualifier"),
            key=lambda c: -min(frequency.zipf(w) for w in c.label.split()),
        )
        for concept in own[:-1]:
            kept.remove(concept)
            query = _query(kept, wide=True)
            steps.append(SearchStep(query, f"dropped the qualifier: {concept.label}"))
    for role in _DROP_ORDER:
        gone = [c for c in kept if c.role == role]
        if not gone:
            continue
        kept = [c for c in kept if c.role != role]
        dropped.append(role)
        names = ", ".join(c.label for c in gone)
        steps.append(
            SearchStep(_query(kept, wide=True), f"dropped the {role}: {names}", tuple(dropped))
        )
    steps += _subject_widened(kept[0], tuple(dropped))
    if not text and (anyword := _best_match(frame, concepts[0], tuple(dropped))) is not None:
        steps.append(anyword)
    unique: dict[str, SearchStep] = {}
    for step in steps:
        unique.setdefault(step.query, step)
    return tuple(unique.values())


def _subject_widened(subject: Concept, dropped: tuple[Role, ...]) -> list[SearchStep]:
    """The subject searched alone by fewer of its words (the last resort, after the outcome
    is dropped), the commonest in English left out first, down to the words that name it
    (rarer than :data:`_NAMING_ZIPF`, or a name with its qualifier: "atypical antipsychotic
    antidepressant" of "adding an atypical antipsychotic to antidepressant treatment"); none
    for a subject no rare word names (its common words alone would find anything)."""
    words = list(subject.words)

    def naming(variants: tuple[str, ...]) -> bool:
        # A name with its qualifier ("vitamin d", "type 2") names the subject as one word.
        return " " in variants[0] or frequency.zipf(variants[0]) < _NAMING_ZIPF

    if not any(naming(variants) for variants in words):
        return []
    steps = []
    while len(words) > 1:
        common = [variants for variants in words if not naming(variants)]
        if not common:
            break
        commonest = max(common, key=lambda variants: frequency.zipf(variants[0]))
        words.remove(commonest)
        # Its words left, as a concept's wide form reads them (one word: its variants ORed).
        fewer = Concept(subject.role, subject.label, words[0], tuple(words))
        why = f"widened the subject: {subject.label} without {commonest[0]!r}"
        steps.append(SearchStep(fewer.wide(), why, dropped, last_resort=True))
    return steps


#: A word of the question rarer in English than this (Zipf) is one its best-match search
#: looks for (:func:`_best_match`); at most :data:`_MATCH_TERMS` of them, the rarest.
_MATCH_ZIPF = 4.5
_MATCH_TERMS = 6


def _best_match(
    frame: QuestionFrame, subject: Concept, dropped: tuple[Role, ...]
) -> SearchStep | None:
    """The question's rarer words, any of them, best match first: the last resort, after
    every search the frame plans found nothing new. A frame can misread a question ("Does
    stopping a short course of PPI therapy ...?") and an article can name its subject
    otherwise than the question ("lobectomy" for "hemithyroidectomy"): the articles that say
    most of the question's rarer words come first (PubMed's Best Match, the ``relevance``
    sort), and the checks still hold the answer to the subject; ``subject``'s phrases (its
    synonyms, its MeSH names) are searched too. None for a question with fewer than two
    words to search."""
    asked = {*frame.direction_words.split(), *frame.relation.split()}
    terms = [
        t
        for t in query_terms(frame.question, max_terms=16)
        if t.strip('"') not in asked and t not in _FRAMING and t not in _HEADS
    ]

    def rarity(term: str) -> float:
        return min(frequency.zipf(w) for w in term.strip('"').split())

    rarest = sorted(terms, key=rarity)
    picked = [t for t in rarest if rarity(t) < _MATCH_ZIPF][:_MATCH_TERMS] or rarest[:2]
    if len(picked) < 2:
        return None
    atoms = [
        *subject.phrases,
        *(a for t in terms if t in picked for a in _word_forms(t.strip('"'))),
    ]
    query = " OR ".join(dict.fromkeys(_atom(a) for a in atoms))
    why = "any of the question's rarer words, best match first"
    return SearchStep(query, why, dropped, last_resort=True, any_word=True)


def speaks_of(
    frame: QuestionFrame, text: str, roles: Iterable[Role] = ("subject", "outcome")
) -> bool:
    """Whether ``text`` (an article's title and abstract) says each concept of ``frame`` of
    ``roles`` (by default its subject and its outcome) in one of its forms. A frame with no
    subject read speaks of nothing it can check: True."""
    wanted = set(roles)
    concepts = [c for c in concepts_of(frame) if c.role in wanted]
    if not concepts:
        return True
    said = _Text(text)
    return all(c.found_in(said.joined, said.words) for c in concepts)


def parts_named(frame: QuestionFrame, text: str) -> tuple[Role, ...]:
    """Which parts of ``frame``'s question ``text`` (a research sub-question) names: the
    subject (:func:`speaks_of_subject`), then the roles of its outcome, comparison and
    populations said in one of their forms, in that order; the question's other words
    (qualifiers) name no part."""
    said = _Text(text)
    named = [
        c.role
        for c in concepts_of(frame)
        if c.role not in ("subject", "qualifier") and c.found_in(said.joined, said.words)
    ]
    subject = ["subject"] if frame.subject and speaks_of_subject(frame, text) else []
    return tuple(dict.fromkeys([*subject, *named]))  # type: ignore[list-item]


def concept_words(
    frame: QuestionFrame, roles: Iterable[Role] = ("subject", "outcome"), text: str = ""
) -> set[str]:
    """The key words of ``frame``'s concepts of ``roles``, as asked (each a word of the
    question: "lumasiran", "hyperoxaluria"; not "used" or "treatment", which frame it); of
    those ``text``, one part of the question, asks (:func:`concepts_of`) when given."""
    wanted = set(roles)
    words: set[str] = set()
    for concept in concepts_of(frame, text):
        if concept.role in wanted:
            asked = [variants[0] for variants in concept.words] or [concept.phrases[0]]
            words.update(word for phrase in asked for word in phrase.split())
    return words


#: Every role of a question's concepts.
ROLES: tuple[Role, ...] = ("subject", "outcome", "comparison", "population", "qualifier")


def asked_terms(frame: QuestionFrame, text: str = "") -> set[str]:
    """The words ``frame``'s question asks about, as the frame reads them: the key words of
    its concepts (subject, outcome, comparison, populations and its other words,
    :func:`concept_words`), normalised as :func:`medlit.words.topics.anchor_terms` gives a
    question's subject words (generic and one-letter words left out). With ``text``, one
    part of the question ("does patient sex affect its outcome"), the words that part asks
    about: the subject, the concepts it names and its own words."""
    return {term for word in concept_words(frame, ROLES, text) for term in anchor_terms(word)}


#: A key word of the subject rarer in English than this (Zipf) names it on its own: a drug,
#: a procedure, an anatomical part ("telmisartan", "infundibular", "thrombus").
_NAMING_ZIPF = 3.5


def named_otherwise(frame: QuestionFrame | None, word: str, text: str) -> bool:
    """Whether ``word``, a word of ``frame``'s subject, is said by ``text`` under another name
    the question itself gives the subject ("Is OXLUMO (lumasiran) used for ...?": an article
    saying lumasiran says OXLUMO), in one of that name's forms."""
    if frame is None or not frame.subject_aliases:
        return False
    if word.lower() not in frame.subject.lower().split():
        return False
    said = _Text(text)
    return any(c.found_in(said.joined, said.words) for c in _named_as(frame.subject_aliases))


@lru_cache(maxsize=1024)
def _named_as(aliases: tuple[str, ...]) -> tuple[Concept, ...]:
    """The other names a question gives its subject, each as a concept (built once)."""
    return tuple(c for alias in aliases if (c := _concept("subject", alias)) is not None)


def speaks_of_subject(frame: QuestionFrame, text: str) -> bool:
    """Whether ``text`` speaks of ``frame``'s subject: one of the subject's naming words
    (rare in English: "telmisartan" of "the ARB telmisartan", "thrombus" of "routine thrombus
    aspiration") or another name it gives, by stem; a subject of common words only, all of
    them (:meth:`Concept.found_in`). A frame with no subject read: True."""
    return names_concept(frame, "subject", text)


def names_concept(frame: QuestionFrame, role: Role, text: str) -> bool:
    """Whether ``text`` names ``frame``'s concept of ``role`` as :func:`speaks_of_subject`
    reads the subject: in one of its forms, or by one of its naming words (rarer in English
    than :data:`_NAMING_ZIPF`), by stem. A frame with no such concept: True."""
    concept = next((c for c in concepts_of(frame) if c.role == role), None)
    return concept is None or _named(concept, _Text(text))


def names_asked(frame: QuestionFrame, text: str) -> bool:
    """Whether ``text`` (an article's) names both ``frame``'s subject and its outcome, as
    :func:`names_concept` reads each (the text read once)."""
    return not unnamed_asked(frame, text)


def unnamed_asked(
    frame: QuestionFrame, text: str, roles: tuple[Role, ...] = ("subject", "outcome")
) -> list[str]:
    """The names (as the frame reads them) of ``frame``'s concepts of ``roles`` (its subject
    and outcome) that ``text`` does not name, as :func:`names_concept` reads each (the text
    read once)."""
    said = _Text(text)
    return [c.phrases[0] for c in concepts_of(frame) if c.role in roles and not _named(c, said)]


_CLAUSE_BREAK = re.compile(r"[.,;:!?()\[\]]")


def phrases_sharing_a_word(phrase: str, text: str) -> list[str]:
    """The runs of words of ``text`` (lower case, accents folded) that could name ``phrase``
    otherwise: as many words as it has or one more (one fewer for a phrase of three words or
    more: a run of one word of two drops what the other says, "mouth" of "dry mouth"), holding
    a word of it by stem ("cognitive decline" of "cognitive deterioration"), within a clause,
    sorted. None for a phrase of framing words alone."""
    wanted = {word_stem(w) for w in phrase.split() if w not in _FRAMING and w not in _FUNCTION}
    if not wanted:
        return []
    size = len(phrase.split())
    found: set[str] = set()
    for clause in _CLAUSE_BREAK.split(fold_accents(text.lower())):
        tokens = _TEXT_WORD.findall(clause)
        for start, token in enumerate(tokens):
            if word_stem(token) not in wanted:
                continue
            for length in range(size - 1 if size > 2 else size, size + 2):
                for first in range(max(0, start - length + 1), start + 1):
                    run = tokens[first : first + length]
                    if len(run) == length and not {run[0], run[-1]} & _FUNCTION:
                        found.add(" ".join(run))
    return sorted(found)


def _named(concept: Concept, said: _Text) -> bool:
    """Whether the text ``said`` names ``concept`` (:func:`names_concept`)."""
    if concept.found_in(said.joined, said.words):
        return True
    # A hyphenated word says each of its parts ("d-dimer" says "dimer"), as the subject's are read.
    parts = {p for w in said.words for p in (w, *w.split("-")) if p}
    stems = frozenset(word_stem(plural_lemma(w)) for w in parts)
    words = [w for variants in concept.words for w in variants[:1]] or concept.phrases[0].split()
    naming = [
        part
        for word in [*words, *concept.phrases[1:]]
        for part in word.split("-")
        if " " not in part and frequency.zipf(part) < _NAMING_ZIPF
    ]
    # A naming word said by another name of the MeSH concept it belongs to in the concept
    # ("ppi" of "ppi therapy" by "proton pump inhibitors").
    return any(
        word_stem(plural_lemma(w)) in stems or mesh.said_otherwise(w, concept.label, said.joined)
        for w in naming
    )
