"""Conservative yes/no reading of study conclusions, for the no-LLM evidence digest.

This is not a language model and does not pretend to be one: it reads the *conclusion* sentences
of the retrieved abstracts for explicit cues ("no significant difference", "did not", "was
associated with", "improved") and only commits to ``yes``/``no`` when the cues are clear, are
about the question's subject, and agree across sources. Anything else is ``uncertain``. A wrong
verdict on a medical question is worse than none, so every doubtful case abstains.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from medlit.text import counted, fold_accents
from medlit.words import cue, cue_source, guarded, prefix_stem, stop_words
from medlit.words.frame import OPPOSITE, Direction, read_frame
from medlit.words.memo import remembered
from medlit.words.tokens import ASCII_WORDS

__all__ = [
    "AS_COMPARISON",
    "FALLING",
    "RISING",
    "Stance",
    "Verdict",
    "change_said",
    "content_terms",
    "decide_verdict",
    "opposite_of_asked",
    "outcome_change",
    "sentence_stance",
    "speaks_elsewhere",
    "states_no_change",
    "verdict_rule",
    "whole_study",
]

Stance = Literal["yes", "no", "uncertain"]
Verdict = Literal["yes", "no", "uncertain"]


_STOP = stop_words("stance")

_HEDGE = cue("hedge.conclusion")
_NEGATIVE = cue("negation.finding")
# A negation cue and the few words it governs (:func:`_without_negated`).
_NEGATED = re.compile(_NEGATIVE.pattern + r"(?:\W+\w+){0,4}", re.I)
AS_COMPARISON = r"(?=\s+(?:to|in|for|than)\b|\s*[.,;)]|\s*$)"
"""What must follow "superior" (or "inferior") for it to compare: "superior to", "was
superior.", not the anatomical "superior wall of the mandibular canal"."""
# The cues of a finding and of a question (words/data/cues.toml says what each catches).
_EQUIVALENT = cue("finding.equivalent")
_SUBGROUP = cue("finding.subgroup")  # see :func:`whole_study`
_POSITIVE = guarded(rf"\b(?:{cue_source('finding.positive')}|superior{AS_COMPARISON})\b", re.I)
_REPORTED = cue("finding.reported")
_DIFFERENCE_THAN = cue("finding.difference_than")
_CONCESSIVE = cue("finding.concessive")
_ADVERSE = cue("outcome.adverse")
_POOR_OUTCOME = cue("outcome.poor")
_SKEPTICAL_QUESTION = cue("question.skeptical")
_EQUIV_QUESTION = cue("question.equivalence")
_SAMENESS_QUESTION = cue("question.sameness")
# Negations that do not negate the finding: "worse than those who had not received X"; a
# tumour's grade ("poorly differentiated"); a concession.
_BENIGN_NEGATION = cue("negation.benign")
_NO_DIFFERENCE = cue("negation.no_difference")
RISING = cue_source("direction.rising")
"""Words saying a quantity goes up (a regular-expression alternation)."""
FALLING = cue_source("direction.falling")
"""Words saying a quantity goes down."""
_UP = guarded(rf"\b(?:{RISING}|worse\w*)\b", re.I)
_DOWN = guarded(rf"\b(?:{FALLING})\b", re.I)
# What a conclusion states of a change, by the question frame's directions.
_STATED: dict[Direction, tuple[re.Pattern[str], ...]] = {
    "up": (guarded(rf"\b(?:{RISING})\b", re.I), cue("stated.up_extra")),
    "down": (_DOWN, cue("stated.down_extra")),
    "better": (cue("stated.better"), guarded(rf"\bsuperior{AS_COMPARISON}", re.I)),
    "worse": (cue("stated.worse"), guarded(rf"\binferior{AS_COMPARISON}", re.I)),
}
# A null finding said with "without" ("increased bleeding without fewer strokes").
_WITHOUT_CHANGE = cue("negation.without_change")
# The predicate an equivalence question asks, itself negated ("Exclusive CRT is not safe to
# treat ...", "CT cannot replace bone scintigraphy"): a no, where other negations under such a
# question ("no complications") are too subtle for cues.
_NOT_AS_ASKED = cue("negation.not_as_asked")
# A finding said to have no evidence ("There is little evidence that the campaigns were
# effective"): what follows is negated as a whole, where a negation cue governs a few words.
_NO_EVIDENCE_THAT = cue("negation.no_evidence_that")
# Harm said to be absent ("with no significant adverse effects", "without complications").
_NO_HARM = cue("negation.no_harm")
_NEGATED_QUESTION = cue("negation.question")
_CLAUSE_SPLIT = re.compile(r";\s+|,?\s+(?:but|however|whereas|while|although|though|yet)\s+", re.I)
_WORD = ASCII_WORDS


_stem = prefix_stem


def content_terms(text: str) -> set[str]:
    """Lower-cased, crudely stemmed content words (stop words removed; accents off, so
    "Sjögren's" is one word and the same as "Sjogren's")."""
    return set(_content_terms(text))


@remembered(16384)
def _content_terms(text: str) -> frozenset[str]:
    words = _WORD.findall(fold_accents(text.lower()))
    return frozenset(_stem(w) for w in words if w not in _STOP and len(w) > 2)


def _without_negated(clause: str) -> str:
    """The clause minus each negation cue and the few words it governs; a negated enabling
    verb governs what it would have enabled ("did not allow for ... an algorithm to predict
    X": no prediction)."""
    clause = _NOT_ENABLED.sub(" ", clause)
    clause = _NOT_FOR_DOING.sub(" ", clause)
    clause = _NOT_APPEARING.sub(r"\g<1> ", clause)
    return _NEGATED.sub(" ", clause)


# "does not appear (seem) to possess the predictive value": the negation reaches past the
# verb of seeming to what does not seem so.
_NOT_APPEARING = cue("negation.not_appearing")
# A negated predicate governs what it is for: "X does not prove to be a useful parameter for
# predicting Y" is a no, whose "predicting" lies beyond the negation's four words.
_NOT_FOR_DOING = cue("negation.not_for_doing")


_NOT_ENABLED = cue("negation.not_enabled")


_RATHER_THAN = guarded(r"\brather than\b", re.I)


def _clause_stance(clause: str, question: str) -> Stance | None:
    """A clause's answer to the question: yes, no, uncertain (mixed) or None (no cue)."""
    decided, stance = _framed_stance(clause, question)
    return stance if decided else _cued_stance(clause, question)


def _framed_stance(clause: str, question: str) -> tuple[bool, Stance | None]:
    """The answer a clause's framing gives (a hedge, "rather than", "shows that", "no
    evidence that"), and whether it gives one."""
    if _HEDGE.search(clause):
        return True, "uncertain"
    rather = _RATHER_THAN.search(clause)
    if rather and not _NEGATIVE.search(_RATHER_THAN.sub(" ", clause)):
        # "X is linked to other complications rather than to Y": asked about what comes
        # after "rather than", the answer is no; about what comes before, it is what the
        # finding says.
        asked = content_terms(question)
        before = content_terms(clause[: rather.start()]) & asked
        after = content_terms(clause[rather.end() :]) & asked
        if after - before and _POSITIVE.search(clause[: rather.start()]):
            return True, "no"
        if before - after:
            return True, _clause_stance(clause[: rather.start()], question)
    reported = _REPORTED.search(clause)
    if reported and not _NEGATIVE.search(clause[: reported.start()]):
        # "The evidence shows that X is not justified": what is shown answers, not the showing.
        said = _clause_stance(clause[reported.end() :], question)
        if said is not None:
            return True, said
    unevidenced = _NO_EVIDENCE_THAT.search(clause)
    if unevidenced and _clause_stance(clause[unevidenced.end() :], question) == "yes":
        return True, "no"
    return False, None


def _cued_stance(clause: str, question: str) -> Stance | None:
    """The answer a clause's own cues give (negation, sameness, benefit, direction)."""
    clause = _BENIGN_NEGATION.sub(" ", clause)
    clause = _POOR_OUTCOME.sub(r"\g<link> worse", clause)
    equivalence_question = bool(_EQUIV_QUESTION.search(question))
    if equivalence_question and _NOT_AS_ASKED.search(clause):
        return "no"
    if (
        _SAMENESS_QUESTION.search(question)
        and _DIFFERENCE_THAN.search(clause)
        and not _NEGATIVE.search(clause)
    ):
        return "no"  # asked whether A and B are the same: A is "longer than" B
    if _NO_DIFFERENCE.search(clause) or (
        _EQUIVALENT.search(clause) and not _NEGATIVE.search(clause)
    ):
        # "No difference"/"similar" is a *no* to "is A better than B?" but a *yes* to "is A as
        # good as B?" / "is A safe?".
        return "yes" if equivalence_question else "no"
    negative = bool(_NEGATIVE.search(clause) or _WITHOUT_CHANGE.search(clause))
    positive = bool(_POSITIVE.search(_WITHOUT_CHANGE.sub(" ", _without_negated(clause))))
    if equivalence_question and (negative or _ADVERSE.search(clause)):
        return _safety_stance(clause)
    if negative:
        return "uncertain" if positive else "no"
    if positive:
        if opposite_of_asked(clause, question):
            return "uncertain"  # the effect goes the other way than the question asks
        return "yes"
    return None


def _states(clause: str, direction: Direction) -> bool:
    """Whether ``clause`` states a change of ``direction``; less of a harm ("lowered the risk",
    "fewer complications") is for the better, more of one for the worse."""
    if any(rx.search(clause) for rx in _STATED[direction]):
        return True
    if direction in ("better", "worse") and _ADVERSE.search(clause):
        return _states(clause, "down" if direction == "better" else "up")
    return False


def _changes(clause: str) -> list[tuple[int, Direction]]:
    """The changes ``clause`` states, each as (where, direction), in the frame's directions."""
    found = [
        (match.start(), direction)
        for direction, patterns in _STATED.items()
        for rx in patterns
        for match in rx.finditer(clause)
    ]
    return sorted(found)


@remembered(4096)
def _phrase_words(phrase: str) -> tuple[frozenset[str], str]:
    """A phrase of the frame (its subject, its outcome) as its stemmed content words, and
    their initials as an abbreviation would write them ("AF" for atrial fibrillation; "" for
    a one-word phrase)."""
    words = [w for w in _WORD.findall(fold_accents(phrase.lower())) if w not in _STOP]
    initials = "".join(w[0] for w in words).upper() if len(words) > 1 else ""
    return frozenset(content_terms(phrase)), initials


def _said(clause: str, phrase: str, share: float) -> list[int]:
    """Where ``clause`` says ``phrase``: each of its words, when at least ``share`` of them
    are said (stemmed), and its initials as an abbreviation; [] when neither."""
    words, initials = _phrase_words(phrase)
    if not words:
        return []
    found = [
        (m.start(), _stem(m[0]))
        for m in _WORD.finditer(fold_accents(clause.lower()))
        if _stem(m[0]) in words
    ]
    where = [at for at, _ in found] if len({w for _, w in found}) >= share * len(words) else []
    if initials:
        where += [m.start() for m in re.finditer(rf"\b{initials}s?\b", clause)]
    return sorted(where)


def outcome_change(clause: str, question: str) -> Direction | None:
    """The change ``clause`` states of the question's outcome (its frame's ``outcome``): the
    stated change nearest a word of the outcome ("aspirin reduced stroke, at the cost of more
    bleeding" states stroke going down); None when the clause names no outcome or states no
    change."""
    mentions = _said(clause, read_frame(question).outcome, share=0)
    changes = _changes(clause)
    if not mentions or not changes:
        return None

    def apart(change: int, mention: int) -> tuple[int, int]:
        # A comma between parts a change from what it is said of: "reduced stroke, at the
        # cost of more bleeding".
        low, high = sorted((change, mention))
        return clause.count(",", low, high), high - low

    _, direction = min(changes, key=lambda c: min(apart(c[0], m) for m in mentions))
    return direction


#: The share of the words of a directional question's subject or outcome a clause must say
#: (or their initials) for the change it states to answer the question.
ON_FRAME = 0.5


def speaks_elsewhere(sentence: str, question: str) -> bool:
    """Whether ``sentence`` (a conclusion's) speaks of neither the subject nor the outcome of
    a question that asks a direction ("do statins increase atrial fibrillation?" over
    "epinephrine increases perfusion pressures"): the change it states is not the one asked
    about, and leans no verdict yes (the digest: fail closed). It must say :data:`ON_FRAME` of
    either's words, or their initials. False when the question asks no direction, or its
    frame has no outcome."""
    frame = read_frame(question)
    if frame.direction is None or not _phrase_words(frame.outcome)[0]:
        return False
    return not any(_said(sentence, part, ON_FRAME) for part in (frame.outcome, frame.subject))


def opposite_of_asked(clause: str, question: str) -> bool:
    """Whether ``clause`` states the change opposite to the one the question asks about (its
    frame's direction: "lowered the risk" under "does X cause Y?") and not the one asked: it
    answers no (or nothing), never yes. Where the clause names the question's outcome, the
    change it states of the outcome decides (:func:`outcome_change`)."""
    asked = read_frame(question).direction
    if asked is None:
        return False
    of_outcome = outcome_change(clause, question)
    if of_outcome in (asked, OPPOSITE[asked]):
        return of_outcome == OPPOSITE[asked]
    return _states(clause, OPPOSITE[asked]) and not _states(clause, asked)


def change_said(sentence: str, question: str) -> Literal["asked", "opposite"] | None:
    """Which change of a question asking a direction ``sentence`` states, its negated parts
    left out ("did not worsen" states none): the one asked, the opposite, or None (neither,
    both, a question asking no direction, or a sentence speaking of neither its subject nor
    its outcome)."""
    asked = read_frame(question).direction
    if asked is None or speaks_elsewhere(sentence, question):
        return None
    said = _without_negated(sentence)
    # As :func:`opposite_of_asked` reads it, with the outcome's change read once.
    of_outcome = outcome_change(said, question)
    if of_outcome in (asked, OPPOSITE[asked]):
        return "asked" if of_outcome == asked else "opposite"
    if _states(said, OPPOSITE[asked]) and not _states(said, asked):
        return "opposite"
    return "asked" if of_outcome is None and _states(said, asked) else None


def states_no_change(sentence: str) -> bool:
    """Whether ``sentence`` states a null finding: no difference, or a change "without" the
    one that mattered ("increased bleeding without fewer strokes")."""
    return bool(_NO_DIFFERENCE.search(sentence) or _WITHOUT_CHANGE.search(sentence))


def _safety_stance(clause: str) -> Stance:
    """Asked whether something is safe: "no complications" answers yes, "a significant
    complication rate" no, too subtle for cues, so uncertain; unless the clause says so
    itself ("X is a safe alternative to surgery, with no significant adverse effects")."""
    rest = _NO_HARM.sub(" ", clause)
    if (
        rest != clause
        and _POSITIVE.search(rest)
        and not (_NEGATIVE.search(rest) or _ADVERSE.search(rest))
    ):
        return "yes"
    return "uncertain"


def sentence_stance(sentence: str, question: str) -> Stance | None:
    """How a conclusion sentence answers a yes/no question, from explicit cues only.

    A sentence opening with a concession ("Although X, Y") answers by its main clause Y when
    that has a cue, unless only the concession shares content words with the question. The
    sentence is split at contrasts ("but", "however", ";"); clauses that share content words
    with the question count (all of them when none does); if they disagree the sentence is
    ``uncertain``; with no cue at all it is ``None``.
    """
    q_terms = content_terms(question)
    conceded = _CONCESSIVE.match(sentence)
    if conceded:
        # "Although X is correlated with Y, it is not a reliable prognostic marker": what the
        # authors conclude is the main clause, unless only what they concede is about the
        # question.
        main = sentence[conceded.end() :]
        if content_terms(main) & q_terms or not content_terms(conceded.group(0)) & q_terms:
            stance = sentence_stance(main, question)
            if stance is not None:
                return stance
    clauses = [c for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]
    on_topic = [c for c in clauses if content_terms(c) & q_terms] or clauses
    stances = [st for c in on_topic if (st := _clause_stance(c, question)) is not None]
    if not stances:
        return None
    if "uncertain" in stances or len(set(stances)) > 1:
        return "uncertain"
    return stances[0]


def whole_study(read: list[tuple[str, Stance]]) -> list[tuple[str, Stance]]:
    """The readings (sentence, stance) of one article's conclusion that answer for the whole
    study: when they read different ways, a subgroup's finding set against the study's own
    ("We did not find a lower risk of X ... However, a subgroup ... had a reduced risk") is
    left out, unless nothing else is left."""
    if len({stance for _, stance in read}) > 1:
        whole = [(s, stance) for s, stance in read if not _SUBGROUP.search(s)]
        if whole:
            return whole
    return read


@dataclass(frozen=True)
class SourceStance:
    """The stance of one article's conclusion, whether the article is strong evidence, and
    whether an ``uncertain`` stance is its conclusion stating the change opposite to the one
    asked (:func:`opposite_of_asked`), not a hedge."""

    key: str
    stance: Stance
    strong: bool
    opposite: bool = False


def decide_verdict(
    question: str, sources: Iterable[SourceStance], *, min_sources: int = 2
) -> tuple[Verdict | None, str]:
    """The verdict for a question from its sources' stances, and the reason in words
    (:func:`verdict_rule` says which rule of the policy decided it)."""
    verdict, reason, _rule = verdict_rule(question, sources, min_sources=min_sources)
    return verdict, reason


def verdict_rule(
    question: str, sources: Iterable[SourceStance], *, min_sources: int = 2
) -> tuple[Verdict | None, str, str]:
    """The verdict for a question from its sources' stances, the reason in words, and the id
    of the policy's rule that decided it ("too-few-sources", "agreeing-sources", ...).

    ``None`` for a question that is not yes/no. ``yes``/``no`` needs at least ``min_sources``
    agreeing sources, or one strong one (systematic review, RCT), with none against and at least
    as many agreeing as hedging; anything else is ``uncertain``.
    """
    if not read_frame(question).yes_no:
        return None, "not a yes/no question", "not-yes-no"
    if _NEGATED_QUESTION.search(question) or _SKEPTICAL_QUESTION.search(question):
        return "uncertain", "the question is phrased negatively or rhetorically", "negated-question"
    listed = list(sources)
    yes = [s for s in listed if s.stance == "yes"]
    no = [s for s in listed if s.stance == "no"]
    hedged = [s for s in listed if s.stance == "uncertain"]
    if yes and no:
        return (
            "uncertain",
            f"the conclusions conflict ({len(yes)} for, {len(no)} against)",
            "conflicting-conclusions",
        )
    for side, name in ((yes, "yes"), (no, "no")):
        if not side:
            continue
        enough = len(side) >= min_sources or any(s.strong for s in side)
        point = "points" if len(side) == 1 else "point"
        if enough and len(side) >= len(hedged):
            verdict: Verdict = "yes" if name == "yes" else "no"
            strong = sum(s.strong for s in side)
            extra = f", {strong} from a systematic review or RCT" if strong else ""
            statements = counted(len(side), "concluding statement")
            return verdict, f"{statements} {point} to {name}{extra}", "agreeing-sources"
        few = counted(len(side), "source")
        return (
            "uncertain",
            f"too little evidence to say ({few} {point} to {name})",
            "too-few-sources",
        )
    opposite = sum(s.opposite for s in hedged)
    if opposite:
        said = f"{counted(opposite, 'conclusion')} state{'s' if opposite == 1 else ''}"
        rest = len(hedged) - opposite
        more = f", {rest} {'is' if rest == 1 else 'are'} hedged" if rest else ""
        return "uncertain", f"{said} the change opposite to the one asked{more}", "opposite-change"
    if hedged:
        return "uncertain", "the conclusions are hedged", "hedged-conclusions"
    return "uncertain", "no conclusion states a clear answer", "no-clear-conclusion"
