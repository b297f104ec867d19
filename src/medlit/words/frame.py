"""The question frame: what a question asks, read once.

Every path that decides anything about a question (the digest's leaning, the answer checks,
the research verdict and table, the population caveats, the answer cache) reads it from one
:class:`QuestionFrame`, made by :func:`read_frame` once per (standalone) question and carried
in the state. A second reading of the question elsewhere is a reading that can disagree.

The reader is the cue tables of :mod:`medlit.words` (``words/data/cues.toml``); the question's
type is :mod:`medlit.words.question_kind`.

A frame travels with what was decided on it: the answer cache stores the frame of the question
an answer was cached under (:meth:`QuestionFrame.stored`), and its guard compares the frames of
the two questions. :func:`frame_of` is where a question that arrives without its frame is read:
a stored frame that does not load whole (another format, other code, a field missing) is read
again, never used in part.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from functools import cache, lru_cache
from typing import Any, Literal, get_args

from medlit.text import as_typed
from medlit.words import frequency, mesh
from medlit.words.cues import age_mentions, directions, negation_scopes
from medlit.words.forms import is_verb, lemmas, plural_lemma
from medlit.words.question_kind import QuestionKind, question_kind
from medlit.words.tables import cue, cue_group, stop_words, synonym_groups, word_set
from medlit.words.tokens import HYPHENATED_WORDS

__all__ = [
    "OPPOSITE",
    "QUESTION_START",
    "Direction",
    "Population",
    "QuestionFrame",
    "QuestionKind",
    "asked_direction",
    "asking_part",
    "frame_of",
    "is_content_word",
    "question_sentences",
    "read_frame",
    "word_key",
]

#: The direction of change a question asks about: ``"down"`` (prevent, reduce, lower, protect
#: against), ``"up"`` (cause, increase, raise), ``"better"`` (improve, benefit, enhance),
#: ``"worse"`` (worsen, harm, impair, damage), or ``None`` (no direction asked, or both ways).
Direction = Literal["up", "down", "better", "worse"]

#: Each direction's opposite: what a question turned the other way asks.
OPPOSITE: dict[Direction, Direction] = {
    "up": "down",
    "down": "up",
    "better": "worse",
    "worse": "better",
}

PopulationKind = Literal["age", "sex", "pregnancy", "condition", "setting", "site"]

# The verbs a yes/no question opens with.
_ASKING_VERB = (
    r"(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may|might|must)"
)
_YES_NO = re.compile(rf"^\s*{_ASKING_VERB}\b", re.IGNORECASE)
# What a yes/no question may open with (its bottom line yes or no), typed forms included.
_YES_NO_START = re.compile(
    r"^(?:am|(?:is|are|was|were|does|do|did|could|should|would|has|have|had|might|must)(?:n't)?"
    r"|can(?:'t|not)?|will|won't|may|shall)\b"
    # "It's Fournier's gangrene still dangerous?": a typed "Is it ..." (a question mark required).
    r"|^it(?:'|\u2019)s\b(?=.*\?$)",
    re.I,
)
_LAST_CLAUSE = re.compile(r"[:;,]\s+|\n|\.\s+|\s*--\s*|\s[-\u2013\u2014]\s")
_WH_START = re.compile(r"^(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
# The question sentences of a text (the cache guard's "asking part"): those ending with "?"
# or opening as a question does.
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|which|who|can|could|is|are|am|do|does|did|should|would|will"
    r"|may|might|any|has|have)\b"
)
# Where a question's clauses part: "Title: is it safe?", "X. Do they work?".
_CLAUSES = re.compile(r"(?<=[:.?;])\s+|\s+--\s*|\s[-\u2013\u2014]\s")
_PRONOUN = re.compile(r"^(?:it|they|this|these|that|those|we|there|he|she|you)\b")
_LEADING = re.compile(rf"^{_ASKING_VERB}\s+(?:there\s+(?:an?\s+)?)?")
# What ends a subject or an outcome: a population, a setting, a comparison, a time; not a gene
# ("variants in the APOE gene" is one thing).
_PHRASE_END = re.compile(
    r"\s+(?:in(?!\s+(?:the\s+)?[\w-]+\s+genes?\b)|among|for|after|before|during|at|of patients"
    r"|compared|versus|vs\.?|than|over"
    r"|when|with|by|from|through|rather|instead|caused|due|induced|secondary|following"
    r"|including|such)\b|,\s|;|\?|$"
)
_COMPARISON = re.compile(
    r"\b(?:compared (?:with|to)|versus|vs\.?|(?:better|worse|superior|inferior|more|less)\s"
    r"(?:\w+\s)?(?:to|than)|rather than|instead of|(?:an? )?alternative to|than)\s+"
    r"(?P<what>.+?)(?=\s+(?:in|among|for|after|during|at)\b|\?|$)"
)
_RISK_OF = re.compile(r"^(?:the\s+)?(?:risk|rates?|incidence|odds|chances?|levels?)\s+of\s+")
_ARTICLE = re.compile(r"^(?:the|a|an|any|some)\s+")
# What a subject or an outcome never opens with: a preposition left by the verb before it
# ("work for acne scars", "result in cost savings"), a possessive or an indefinite person
# ("my sinus allergies", "help someone quit smoking"), a noun of effect ("an impact on X").
_OPENING = re.compile(
    r"^(?:(?:for|on|of|in(?!\s+(?:vitro|vivo|utero|situ|silico)\b)|into|to|about|with|against)"
    r"\s+|(?:my|your|his|her|our|their|its|someone|somebody|anyone|one)\s+"
    r"|(?:(?:an?|any|the)\s+)?(?:impact|effect|influence|bearing)\s+(?:on|upon)\s+)+"
)
# "is it better to take X", "is it safe to use X": what is asked of is the infinitive's object.
_IT_TO = re.compile(r"^it\s+(?:\w+\s+){1,3}?to\s+(?:\w+\s+(?:of\s+)?)?(?=\w)")
# A word after a determiner is a noun ("the use of X"), never the question's verb.
_DETERMINER = re.compile(r"\b(?:the|a|an|this|that|its|their|any|some|no)\s+$")
_PLACE = re.compile(r"\b(?:in|among)\s+((?:[A-Z][a-z]{2,})(?:\s+[A-Z][a-z]{2,})?)\s*(?:\?|$)")
# A place named within a question ("Is HIV control in Haiti making a difference?").
_PLACE_WITHIN = re.compile(r"\b(?:in|among)\s+([A-Z][a-z]{2,}(?:\s+[A-Z][a-z]{2,})?)\b(?!')")
_LOOSE_ENDS = re.compile(r"^(?:an?|the)\s+|\s+(?:of|and|or|to|with)$")
# Another name in parentheses: "oxlumo (lumasiran)", "levels of detection (lod)".
_ALIAS = re.compile(r"\s*\(([^()]{2,60})\)")
# Two things asked about together ("loq and lod", "metformin or insulin").
_PAIR = re.compile(r"^(?P<a>.+?)\s+(?P<op>and|or|vs\.?|versus)\s+(?P<b>.+)$")
# A disease's type ("type 2 diabetes", "type i diabetes"): another type is another condition.
_TYPED = re.compile(r"\b(type\s+(?:[12]|i{1,2}|one|two)\s+(?:diabetes(?:\s+mellitus)?|\w+))")
_TYPE_NUMBER = {"i": "1", "ii": "2", "one": "1", "two": "2"}
# "a link between A and B": A is asked about, B what it is linked to.
_BETWEEN = re.compile(
    r"^(?:an?\s+|any\s+)?(?:link|association|relationship|relation|correlation|connection"
    r"|interaction)\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$"
)
# "what are the side effects of X", "which complications follow X": the outcome asked, of X.
_WH_OF = re.compile(
    r"^(?:what|which)\s+(?:are|is|were|was)\s+(?:the\s+)?(?P<what>[\w' -]+?)\s+"
    r"(?:of|from|after|with)\s+(?P<of>.+)$"
)
# "what diseases can be treated with X", "which patients benefit from X": the outcome asked
# for, by X.
_WH_BY = re.compile(
    r"^(?:what|which)\s+(?P<what>[\w' -]+?)\s+(?:(?:can|could|may|might|should|do|does|is|are"
    r"|were|was)\s+)?(?:be\s+|been\s+)?(?:\w+ed|benefit|respond)\s+(?:with|by|using|from|to)\s+"
    r"(?P<by>.+)$"
)
# "is X caused by Y", "is X induced by Y": Y, asked of as the cause of X (a question on "is",
# not "can A treat X caused by Y").
_BEING = re.compile(r"^(?:is|are|was|were)\b")
_CAUSED_BY = re.compile(
    r"^(?P<what>.+?)\s+(?P<how>(?:caused|induced|triggered|mediated)\s+by)\s+(?P<by>.+)$"
)
# "how effective is X for Y", "how safe are X": X, asked for Y.
_HOW = re.compile(r"^how\s+(?:\w+\s+)?(?:is|are|was|were|do|does)\s+(?P<rest>.+)$")
# A yes/no question whose main verb follows its subject ("does X cure Y", "can X relieve Y").
_DOING = re.compile(r"^(?:do|does|did|can|could|will|would|should|may|might|must)\b")
# "can X be managed with Y", "could X be modified by Y": Y is asked about, X what it acts on.
_DONE_WITH = re.compile(
    r"^(?:can|could|will|would|should|may|might|must)\s+(?P<what>.+?)\s+"
    r"(?P<how>be\s+\w+ed\s+(?:with|by|using))\s+(?P<by>.+?)\s*\??$"
)
_TOKEN = re.compile(r"[a-z][a-z'-]*")
# What a subject never ends with: an article, a determiner or a preposition ("is X a
# reliable guide", "are higher doses of any benefit").
_TRAILING_DETERMINER = re.compile(r"(?:\s+(?:an?|the|any|some|this|that|of|to|with))+$")
# The particle of a phrasal verb ("pick out", "bring down"): no word of the outcome.
_PARTICLE = re.compile(r"^\s*(?:out|up|down|off|away|back)\b")
# A relation whose object is what the subject is set against ("an alternative to Y", "as
# effective as Y", "replace Y"), and what follows it is what they are for ("for Z", "in the
# treatment of Z").
_SET_AGAINST = re.compile(r"(?:\balternative to|\bas \w+ as|\breplace|\bsubstitute for)$")
_FOR_WHAT = re.compile(
    r"\s+(?:for|in)\s+(?:the\s+)?(?:(?:treatment|management|prevention|follow-up|relief)"
    r"\s+of\s+)?"
)


_OF_AFTER = re.compile(r"\s+of\b")


def _main_verb(text: str) -> re.Match[str] | None:
    """The first word after the first of ``text`` that can be a verb in its base form, the
    form after "does" ("zorblatamab cure quixotic fever": "cure"), if any."""
    for match in list(_TOKEN.finditer(text))[1:]:
        word = match.group(0)
        if _DETERMINER.search(text, 0, match.start()) or _OF_AFTER.match(text, match.end()):
            continue  # a noun: after a determiner, or heading "X of Y" ("a short course of")
        if not word.endswith(("ing", "ed")) and is_verb(word) and lemmas(word) == {word}:
            return match  # its own lemma: "change", not "campaigns"
    return None


# What a lay question is for, with no word linking it: "X or Y for a headache".
_FOR = re.compile(r"\s+(?:for|against)\s+(?:the\s+)?(?:(?:treatment|management|relief)\s+of\s+)?")
_DIRECTIONS: tuple[Direction, ...] = ("up", "down", "better", "worse")
# A word of change named as an item of a list: a noun ("damage", "increase", "harms"; not an
# adjective or a participle, "beneficial", "increased") after "," "and" "or", before "in"/"of".
_LISTED_BEFORE = re.compile(r"(?:,|\band|\bor)\s*$")
_NOUN = re.compile(r"[a-z]+(?<!ing)(?<!ed)(?<!al)(?<!ful)(?<!ive)")
_NOUN_AFTER = re.compile(r"\s+(?:in|of)\b")


@dataclass(frozen=True, slots=True)
class Population:
    """One population a question names: its kind, a normalised name and the words as written."""

    kind: PopulationKind
    name: str
    words: str = ""


@dataclass(frozen=True, slots=True)
class QuestionFrame:
    """What one question asks. Immutable and hashable; :meth:`to_json` for ``--json``.

    ``yes_no``: whether its bottom line is yes or no (:func:`_asks_yes_no`). ``direction``:
    the one direction of change it asks about, in ``direction_words`` (a yes/no question's
    only: "what causes X?" asks for causes, not whether anything goes up). ``changes_named``:
    every way of change its question sentences name (cues ``direction.up``/``down``:
    "increase", "prevent"), both when both are, for the answer cache's guard, which refuses a
    hit on a question naming only the other way.

    What the answer cache's guard compares (:mod:`medlit.cache.guard`), read from the
    question sentences (:func:`question_sentences`): ``intents``, what they ask for (cues
    ``intent.*``: cause, treatment, symptoms ...); ``treatments``, the kinds of treatment they
    name (cues ``modality.*``); ``asks_alternatives``, whether they ask for something other
    than a thing named (cue ``question.excludes``); ``negated_ask``, whether they say a
    negation. ``negated`` and ``asserted``: the findings (``findings.txt``) the question says
    with and without a negation before them ("no fever", "fever"), as :func:`word_key` writes
    them; a finding said both ways is asserted.
    """

    question: str
    kind: QuestionKind
    yes_no: bool
    direction: Direction | None = None
    direction_words: str = ""
    changes_named: tuple[str, ...] = ()
    populations: tuple[Population, ...] = ()
    subject: str = ""
    subject_aliases: tuple[str, ...] = ()
    relation: str = ""
    comparison: str = ""
    outcome: str = ""
    intents: tuple[str, ...] = ()
    treatments: tuple[str, ...] = ()
    asks_alternatives: bool = False
    negated_ask: bool = False
    negated: tuple[str, ...] = ()
    asserted: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def population_names(self, kind: PopulationKind | None = None) -> frozenset[str]:
        """The names of the populations of ``kind`` (all kinds when ``None``)."""
        return frozenset(p.name for p in self.populations if kind is None or p.kind == kind)

    def ages_by_word(self) -> frozenset[str]:
        """The age groups named by a word ("children", "paediatric"), not by an age stated
        ("2 weeks ago" names no infant)."""
        return frozenset(
            p.name for p in self.populations if p.kind == "age" and not p.words[:1].isdigit()
        )

    def with_sources(self, sources: Iterable[str]) -> QuestionFrame:
        """The same frame, asked of ``sources``."""
        return replace(self, sources=tuple(sorted(set(sources))))

    def to_json(self) -> dict[str, Any]:
        """The frame as ``--json`` and the service show it: what :func:`dataclasses.asdict`
        gives (its populations as dicts), built field by field (asdict copies each value
        deeply: on a cached answer it was a tenth of the service's time per hit)."""
        shown = {name: getattr(self, name) for name in _FRAME_FIELDS}
        shown["populations"] = tuple(
            {"kind": p.kind, "name": p.name, "words": p.words} for p in self.populations
        )
        return shown

    def stored(self) -> str:
        """The frame as stored beside what was decided on it (a tier-1 answer): JSON, with
        the format and the answering code that read it (:func:`frame_of` loads it only for
        both the same), its sources left out (where it was asked is stored apart)."""
        shown = self.to_json()
        del shown["sources"]
        return json.dumps(
            {"format": FRAME_FORMAT, "code": _reading_code(), "frame": shown},
            ensure_ascii=False,
            separators=(",", ":"),
        )


def asking_part(question: str) -> str:
    """The part of ``question`` (lower-cased) that asks: the last of its clauses opening with
    a yes/no verb ("Nasal fractures: is closed reduction satisfying?" asks "is closed reduction
    satisfying?"), or all of it."""
    text = question.strip().lower()
    clauses = [c.strip() for c in _CLAUSES.split(text) if c.strip()]
    asking = [c for c in clauses if _YES_NO.match(c)]
    if not asking:
        # "In people with high blood pressure, can X pick out Y?": the clause after a comma.
        asking = [c.strip() for c in text.split(", ")[1:] if _YES_NO.match(c.strip())]
    return asking[-1] if asking else text


def _asks_yes_no(question: str) -> bool:
    """A question whose bottom line is yes or no ("Does X reduce Y?", "Is X safe in Z?").

    The yes/no part may come after a statement, as in article titles: "Autoxidation products
    are increased in uremic plasma: is there oxidative stress in uremia?".
    """
    text = question.strip().lstrip("\"'(\u00bf").strip()
    if _YES_NO_START.match(text):
        return True
    last = _LAST_CLAUSE.split(text)[-1].strip().lstrip("\"'(")
    if not text.endswith("?") or last == text:
        return False
    # "... . Is it always necessary?", and the title forms "Aripiprazole: a new risk factor
    # for pathological gambling?" and "Malnutrition, a new inducer for arterial calcification?"
    # (a noun phrase asked about: yes or no), but not "What are the effects of A, B and C?".
    if _YES_NO_START.match(last):
        return True
    return not _WH_START.match(last) and not _WH_START.match(text)


def question_sentences(text: str) -> str:
    """The question sentences of ``text`` (lower-cased, as typed), joined by " . "; all of it
    when none looks like a question."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p.strip()]
    asking = [p for p in parts if p.endswith("?") or QUESTION_START.match(p)]
    return " . ".join(asking) if asking else text


def _asked(asking: str, match: re.Match[str]) -> bool:
    """Whether the words of change ``match`` are asked, not a noun named in a list ("A, B and
    damage in Z", "X and increase in Y": an item, not what the subject does)."""
    return not (
        _NOUN.fullmatch(match.group(0))
        and _LISTED_BEFORE.search(asking, 0, match.start())
        and _NOUN_AFTER.match(asking, match.end())
    )


def _direction(asking: str) -> tuple[Direction | None, str, tuple[int, int]]:
    """The one direction ``asking`` asks about (cues ``frame.up``/``down``/``better``/
    ``worse``), its words and where they are; ``None`` when none, or two opposite ones ("does
    X increase or decrease Y")."""
    found: list[tuple[int, int, Direction]] = []
    for name in _DIRECTIONS:
        matches = cue(f"frame.{name}").finditer(asking)
        match = next((m for m in matches if _asked(asking, m)), None)
        if match:
            found.append((match.start(), match.end(), name))
    names = {name for *_, name in found}
    if not found or any(OPPOSITE[name] in names for name in names):
        return None, "", (0, 0)
    start, end, name = min(found)
    return name, asking[start:end], (start, end)


def asked_direction(text: str) -> Direction | None:
    """The one direction of change ``text`` (an article's title, a question) names, as a
    frame reads its question's (:attr:`QuestionFrame.direction`), without reading the rest of
    a frame: "Does X reduce Y?" and "X reduces Y" name ``"down"``."""
    return _direction(asking_part(text))[0]


def _phrase(text: str) -> str:
    """The head of ``text`` up to where a population, a setting or a comparison begins; of
    people with a condition ("patients with gallbladder cancer"), the condition."""
    text = _OPENING.sub("", _ARTICLE.sub("", text.strip()))
    people = _PEOPLE_WITH.match(text)
    if people is not None:
        text = people["what"]
    end = _PHRASE_END.search(text)
    return text[: end.start() if end else len(text)].strip(" ,;:?")


# People with a condition, as what a question is asked for: the condition.
_PEOPLE_WITH = re.compile(
    r"^(?:patients|people|persons|subjects|individuals|adults|children|women|men|infants)"
    r"\s+(?:with|having|suffering from)\s+(?P<what>\S.*)$"
)


def _unlinked(subject: str, relation: str) -> tuple[str, str]:
    """What is asked about before a direction verb, without the words linking it to the
    change ("is X effective in preventing Y", "is X associated with increased Y"; "is X
    superior to Y for preventing Z", the link setting X against what follows), which join the
    relation."""
    link = cue("frame.link").search(subject)
    if link is None or link.start() == 0:
        return subject, relation
    against = re.search(r"\b(?:to|than)$", link.group(0)) is not None
    if subject[link.end() :].strip() and not against:
        return subject, relation
    return subject[: link.start()], f"{link.group(0).strip()} {relation}"


def _subject_outcome(question: str, asking: str, span: tuple[int, int]) -> tuple[str, str, str]:
    """What the question asks about (before its direction verb) and what of it changes (after
    it); with no direction, what it asks about and what it links it to ("is X effective for
    Y", "is X associated with Y": cue ``frame.link``), or nothing; and the words that link
    them ("effective for", "cure"), which name neither."""
    relation = asking[span[0] : span[1]]
    if span == (0, 0):
        subject, outcome = _LEADING.sub("", asking).rstrip(" ?"), ""
        subject = _IT_TO.sub("", subject)
        how = _HOW.match(subject)
        subject = how["rest"] if how is not None else subject
        link = cue("frame.link").search(subject)
        between, wh_of = _BETWEEN.match(subject), _WH_OF.match(subject)
        wh_by, caused = _WH_BY.match(subject), _CAUSED_BY.match(subject)
        caused = caused if _BEING.match(asking) else None
        if caused is not None:
            # "is X caused by Y": Y is asked about, X what it causes.
            relation = caused["how"]
            subject, outcome = caused["by"], _phrase(caused["what"])
        elif between is not None:
            subject, outcome = between["a"], _phrase(between["b"])
        elif wh_of is not None:
            subject, outcome = wh_of["of"], _phrase(wh_of["what"])
        elif wh_by is not None:
            subject, outcome = wh_by["by"], _phrase(wh_by["what"])
        elif link is not None and link.start() > 0:
            relation = link.group(0).strip()
            subject, outcome = subject[: link.start()], _phrase(subject[link.end() :])
        elif _DOING.match(asking) and (verb := _main_verb(subject)) is not None:
            # "does X cure Y?": a yes/no question on "do" or a modal has its verb after X.
            relation = verb.group(0)
            rest = _PARTICLE.sub("", subject[verb.end() :])
            subject, outcome = subject[: verb.start()], _phrase(rest)
        elif (purpose := _FOR.search(subject)) is not None and purpose.start() > 0:
            subject, outcome = subject[: purpose.start()], _phrase(subject[purpose.end() :])
    else:
        subject, relation = _unlinked(_IT_TO.sub("", _LEADING.sub("", asking[: span[0]])), relation)
        outcome = _phrase(_RISK_OF.sub("", _ARTICLE.sub("", asking[span[1] :].strip())))
    subject = cue("frame.asker").sub("", subject.strip())
    subject = _TRAILING_DETERMINER.sub("", _phrase(subject))
    if _WH_START.match(subject):
        # "what causes migraine?": what it asks about is what the answer names, not a word of
        # the question (its searches are then the question's words, names kept longest).
        subject = ""
    if _PRONOUN.match(subject) or not subject:
        # "Transgastric endoscopic splenectomy: is it possible?": the title says what "it" is.
        head = question.strip().lower()
        subject = _phrase(head[: head.find(asking)].strip(" :.-")) if asking in head else subject
    elif not outcome and asking != question.strip().lower():
        # "Nasal fractures: is closed reduction satisfying?": the title names what it is for.
        head = question.strip().lower()
        before = head[: head.find(asking)].strip(" :.-") if asking in head else ""
        outcome = _phrase(before) if before and len(before.split()) <= 6 else ""
    return subject, outcome, relation


def _done_with(asking: str) -> tuple[str, str, str] | None:
    """What "can X be managed with Y?" asks about (Y), what it acts on (X) and the words
    linking them; None for a question of another shape."""
    done = _DONE_WITH.match(asking)
    if done is None:
        return None
    return _TRAILING_DETERMINER.sub("", _phrase(done["by"])), _phrase(done["what"]), done["how"]


def _aliases(subject: str) -> tuple[str, tuple[str, ...]]:
    """``subject`` without the other names it gives in parentheses, and those names
    ("oxlumo (lumasiran)": "oxlumo", ("lumasiran",))."""
    aliases = tuple(a.strip() for a in _ALIAS.findall(subject) if a.strip())
    return " ".join(_ALIAS.sub(" ", subject).split()), aliases


def _paired(subject: str, comparison: str) -> tuple[str, str]:
    """ "metformin or insulin" asks of metformin, compared with insulin; "loq and lod (the
    same)" of loq, compared with lod. A subject of one thing is left as it is."""
    pair = _PAIR.match(subject)
    if comparison or pair is None:
        return subject, comparison
    return pair["a"].strip(), pair["b"].strip()


def _places(text: str) -> list[Population]:
    """The settings (cues ``frame.setting``, ``frame.procedure``) and the sites (``frame.site``,
    ``frame.organ``) ``text`` (lower-cased) names."""
    found = [
        Population("setting", m.group(1), m.group(0)) for m in cue("frame.setting").finditer(text)
    ]
    for match in cue("frame.site").finditer(text):
        site = match.group(1)
        found.append(Population("site", site[:-1] if site.endswith("s") else site, match.group(0)))
    for match in cue("frame.organ").finditer(text):
        organ = next(g for g in match.groups() if g)
        found.append(Population("site", organ, organ))
    for match in cue("frame.procedure").finditer(text):
        # Its words, not "undergoing" (a search for them loses the abstracts saying "underwent").
        found.append(Population("setting", match.group(1), match.group(1)))
    return found


#: The people a question names by a condition of their own ("in current smokers").
_CONDITION_HEADS = frozenset({"smokers", "drinkers", "athletes"})
#: A word before the people named rarer in English than this (Zipf) names their condition
#: ("diabetic", "cancer", "healthy"); commoner ones ("current", "at-risk", "former") do not,
#: unless MeSH names them.
_CONDITION_ZIPF = 5.0


def _names_condition(words: str) -> bool:
    """Whether ``words``, said before the people a question asks of, name their condition: a
    word of them rare in English, or a MeSH term."""
    return any(frequency.zipf(w) < _CONDITION_ZIPF for w in words.split()) or bool(
        mesh.named_by(words)
    )


def _populations(question: str, text: str) -> tuple[Population, ...]:
    ages = age_mentions(text)
    found = [Population("age", group, ages[group]) for group in sorted(ages)]
    for sex in ("male", "female"):
        match = cue(f"sex.{sex}").search(text)
        if match:
            found.append(Population("sex", sex, match.group(0)))
    pregnancy = cue("pregnancy.named").search(text)
    if pregnancy:
        found.append(Population("pregnancy", "pregnancy", pregnancy.group(0)))
    for name in ("frame.condition_with", "frame.condition_of"):
        for match in cue(name).finditer(text):
            condition = _LOOSE_ENDS.sub("", match.group(1).strip())
            if name == "frame.condition_of" and not _names_condition(condition):
                # "current smokers", "at-risk patients": the word before the people names no
                # condition; a head that does ("smokers") is the population.
                head = match.group(0).split()[-1]
                if head in _CONDITION_HEADS:
                    found.append(Population("condition", head, match.group(0)))
                continue
            if condition and not cue("sex.female").fullmatch(condition):
                found.append(Population("condition", condition, match.group(0)))
    found += _places(text)
    for match in _TYPED.finditer(text):
        words = match.group(1).split()
        number = _TYPE_NUMBER.get(words[1], words[1])
        found.append(
            Population("condition", " ".join(["type", number, *words[2:]]), match.group(0))
        )
    place = _PLACE.search(question.strip())
    if place:
        found.append(Population("setting", place.group(1).lower(), place.group(0)))
    for match in _PLACE_WITHIN.finditer(question.strip()):
        found.append(Population("setting", match.group(1).lower(), match.group(0)))
    # One population read twice ("in Poland?": a place within and at the end) is one.
    return tuple({(p.kind, p.name): p for p in reversed(found)}.values())[::-1]


@cache
def _drug_names() -> dict[str, str]:
    """A drug's other names -> its canonical name (``drug_names.tsv``)."""
    return {term: group[0] for group in synonym_groups("drug_names.tsv") for term in group}


@lru_cache(maxsize=65536)
def word_key(raw: str) -> str:
    """A word of a question as the guard compares it: its singular by its ending, a drug by
    its canonical name ("tylenol" -> "acetaminophen")."""
    word = plural_lemma(raw.strip("'-"))
    return _drug_names().get(word, word)


@lru_cache(maxsize=65536)
def is_content_word(raw: str) -> bool:
    """A word of a question (lower case) that says something: not a stop word of a lay
    question, a number or a word under three letters."""
    word = word_key(raw)
    return not (raw in stop_words("lay_question") or len(word) < 3 or word.isdigit())


@cache
def _findings() -> frozenset[str]:
    # Through the same keys as the question's words ("diabetes" -> "diabete"), so a finding
    # whose word ends like a plural is still one.
    return frozenset(word_key(word) for word in word_set("findings.txt"))


def _asked_of(typed: str) -> dict[str, Any]:
    """What the guard compares of the question ``typed`` (lower case, as typed): see
    :class:`QuestionFrame`."""
    asking = question_sentences(typed)
    negated: set[str] = set()
    asserted: set[str] = set()
    # A negation covers the first content word after it, at most three tokens on ("no fever",
    # "not pregnant", "don't have any fever"); hedges ("not sure if") negate nothing.
    for raw, in_scope in negation_scopes(HYPHENATED_WORDS.findall(typed), is_content_word):
        (negated if in_scope else asserted).add(word_key(raw))
    findings, negator = _findings(), cue("negation.token")
    return {
        "intents": tuple(sorted(n for n, rx in cue_group("intent").items() if rx.search(asking))),
        "treatments": tuple(
            sorted(n for n, rx in cue_group("modality").items() if rx.search(asking))
        ),
        "asks_alternatives": cue("question.excludes").search(asking) is not None,
        "negated_ask": any(negator.match(t) for t in HYPHENATED_WORDS.findall(asking)),
        "negated": tuple(sorted((negated - asserted) & findings)),
        "asserted": tuple(sorted(asserted & findings)),
    }


@lru_cache(maxsize=4096)
def _read(question: str) -> QuestionFrame:
    text = question.lower()
    asking = asking_part(question)
    yes_no = _asks_yes_no(question)
    # Only a yes/no question asks a direction: "what causes X?" and "how can I prevent X?"
    # ask for causes and ways, and a verdict is never turned on them; "What can cause X? Can
    # Y be a cause?" asks it in its yes/no part.
    asks = yes_no or bool(_YES_NO.match(asking))
    direction, words, span = _direction(asking) if asks else (None, "", (0, 0))
    subject, outcome, relation = _done_with(asking) or _subject_outcome(question, asking, span)
    subject, aliases = _aliases(subject)
    compared = _COMPARISON.search(asking)
    subject, comparison = _paired(subject, _phrase(compared["what"]) if compared else "")
    if outcome and _SET_AGAINST.search(relation):
        # "X an alternative to Y for Z": Y is what X is set against; Z what they are for.
        after = asking.find(outcome, asking.find(relation) + len(relation))
        purpose = _FOR_WHAT.match(asking, after + len(outcome)) if after >= 0 else None
        comparison = comparison or outcome
        outcome = _phrase(asking[purpose.end() :]) if purpose else ""
    populations = _populations(question, text)
    if any(outcome in (p.words, p.name) for p in populations):
        outcome = ""  # "is X more common in men?": who, not what of it
    typed = as_typed(text)
    return QuestionFrame(
        question=question,
        kind=question_kind(question),
        yes_no=yes_no,
        direction=direction,
        direction_words=words,
        changes_named=tuple(sorted(directions(question_sentences(typed)))),
        populations=populations,
        subject=subject,
        subject_aliases=aliases,
        relation=relation,
        comparison=comparison,
        outcome=outcome,
        **_asked_of(typed),
    )


def read_frame(question: str, sources: Iterable[str] = ()) -> QuestionFrame:
    """The frame of ``question`` (its standalone form), asked of ``sources``."""
    return _read_asked(question.strip(), tuple(sorted(set(sources))))


@lru_cache(maxsize=4096)
def _read_asked(question: str, sources: tuple[str, ...]) -> QuestionFrame:
    """:func:`read_frame`, remembered with its sources (a server's hits ask the same
    questions of the same sources over and over)."""
    frame = _read(question)
    return frame.with_sources(sources) if sources else frame


_FRAME_FIELDS = tuple(f.name for f in fields(QuestionFrame))

#: The stored frame's format (:meth:`QuestionFrame.stored`): a frame stored in another one is
#: read again.
FRAME_FORMAT = 1
_STORED_FIELDS = frozenset(_FRAME_FIELDS) - {"sources"}
_TEXT_FIELDS = ("question", "direction_words", "subject", "relation", "comparison", "outcome")
_FLAGS = ("yes_no", "asks_alternatives", "negated_ask")
_TEXTS_FIELDS = ("changes_named", "subject_aliases", "intents", "treatments", "negated", "asserted")
_KINDS = frozenset(get_args(QuestionKind))
_POPULATION_KINDS = frozenset(get_args(PopulationKind))


def _reading_code() -> str:
    """The answering code (its hash, words tables included): a frame read by other code may
    be read otherwise now."""
    from medlit.code_version import answering_code

    return answering_code()


def _texts(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


def _loaded(question: str, stored: str) -> QuestionFrame | None:
    """The frame ``stored`` for ``question`` (:meth:`QuestionFrame.stored`), or None unless
    every field of it loads: the same format, the same code, the same question, each field
    there and of its type (a frame used in part would be a reading no code made)."""
    try:
        data = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FRAME_FORMAT:
        return None
    shown = data.get("frame")
    if data.get("code") != _reading_code() or not isinstance(shown, dict):
        return None
    if shown.keys() != _STORED_FIELDS or shown["question"] != question.strip():
        return None
    values = _values(shown)
    populations = _populations_loaded(shown["populations"])
    if values is None or populations is None:
        return None
    return QuestionFrame(populations=populations, **values)


def _values(shown: dict[str, Any]) -> dict[str, Any] | None:
    """The stored frame's fields but its populations, each of its type; None if one is not."""
    values: dict[str, Any] = {}
    for name in (*_TEXT_FIELDS, *_FLAGS):
        if not isinstance(shown[name], bool if name in _FLAGS else str):
            return None
        values[name] = shown[name]
    for name in _TEXTS_FIELDS:
        if (texts := _texts(shown[name])) is None:
            return None
        values[name] = texts
    if shown["kind"] not in _KINDS or shown["direction"] not in (None, *OPPOSITE):
        return None
    return {**values, "kind": shown["kind"], "direction": shown["direction"]}


def _populations_loaded(items: Any) -> tuple[Population, ...] | None:
    """The stored frame's populations; None if one is not a population."""
    if not isinstance(items, list):
        return None
    populations = []
    for item in items:
        if not (
            isinstance(item, dict)
            and item.keys() == {"kind", "name", "words"}
            and item["kind"] in _POPULATION_KINDS
            and isinstance(item["name"], str)
            and isinstance(item["words"], str)
        ):
            return None
        populations.append(Population(item["kind"], item["name"], item["words"]))
    return tuple(populations)


def frame_of(question: str | QuestionFrame, stored: str = "") -> QuestionFrame:
    """The frame of ``question``: itself when it is a frame; the frame stored with it
    (``stored``: :meth:`QuestionFrame.stored`) when that loads whole; else the question read
    now (:func:`read_frame`). The one place a question that arrives without its frame (an
    answer cached before frames were stored, a tool or a benchmark handing in text) is read."""
    if isinstance(question, QuestionFrame):
        return question
    loaded = _loaded(question, stored) if stored else None
    return loaded if loaded is not None else read_frame(question)
