"""A statement that says the opposite of its answer's verdict and of the articles it cites.

A model may open with the answer a question's wording suggests ("Yes, X is a contraindication
to Y") and go on to cite an article that concludes the other way, so that the verdict read off
the whole answer and its own first sentence disagree.

A cited sentence that states the other answer (a negation cue, or the question's own words
said as a statement: :func:`stated_answer`) goes, with a warning, when every article it cites
contradicts it: the article concludes what the verdict says (the conclusion's cue-based
stance, :func:`medlit.words.stance.sentence_stance`), or, where its conclusion's sentences read
different ways, the one of them nearest the sentence does. Two readings against one sentence:
either alone may be wrong.

A sentence its article says (the article's sentence nearest it states the same answer) is
the article's own finding, whatever the conclusion says, and stays; so does a sentence stating
no finding (an aim, a question, a hypothesis), a sentence citing an article that concludes
otherwise or nothing clear, and any answer with no other cited sentence left. How many of the
PubMedQA abstracts' own sentences go when cited to their article, and how many of their
questions said as the other answer do, is measured by
``python benchmarks/contradicted_sentences.py`` (figures in ``docs/benchmarks.md``).

A verdict that agrees with its wrong sentence is held the same way
(:func:`against_in`): a cited sentence stating the verdict's answer goes when
every article it cites contradicts it, and the verdict is then Uncertain (the evidence digest
answers when no cited sentence is left). Where a conclusion reads both ways and the question,
worded apart from the article, picks none of its sentences, the article's title picks one
(:data:`TITLED` of its words).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from medlit.checks.citations import (
    Verdict,
    extract_pmids,
    without_citations,
)
from medlit.checks.draft import rewrite_sentences
from medlit.log import get_logger
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.conclusions import conclusion_sentences, states_no_finding
from medlit.words.memo import remembered
from medlit.words.stance import Stance, whole_study
from medlit.words.stance import content_terms as _content_terms
from medlit.words.stance import sentence_stance as _sentence_stance

__all__ = [
    "ASKED",
    "RESTATED",
    "against_in",
    "concludes",
    "stated_answer",
    "states_only_otherwise",
]

log = get_logger("agent.contradicted")

RESTATED = 0.75
"""Share of the question's content words a sentence must say to state its answer as a
statement (the question "Is X a risk factor for Y?" said as "X is a risk factor for Y")."""
ASKED = 0.5
"""Share of the question's content words a conclusion sentence must say to decide what a
conclusion whose sentences read different ways answers."""


TITLED = 2
"""Words of its article's title a conclusion sentence must say to decide, when the question
picks none, what a conclusion whose sentences read different ways answers."""


@remembered()
def sentence_stance(sentence: str, question: str) -> Stance | None:
    """:func:`medlit.words.stance.sentence_stance`, read once a sentence and question."""
    return _sentence_stance(sentence, question)


@remembered(16384)
def content_terms(text: str) -> frozenset[str]:
    """:func:`medlit.words.stance.content_terms`, read once a text."""
    return frozenset(_content_terms(text))


@remembered()
def stated_answer(sentence: str, question: str) -> Stance | None:
    """The answer to a yes/no ``question`` that ``sentence`` states: its cue-based stance, else
    "yes" when it says the question's words as a statement; None when it states neither, or
    states no finding (a study's aim, a question, a hypothesis)."""
    text = without_citations(sentence)
    if states_no_finding(text):
        return None
    stance = sentence_stance(text, question)
    if stance is not None:
        return stance if stance in ("yes", "no") else None
    asked = content_terms(question)
    if asked and len(asked & content_terms(text)) >= RESTATED * len(asked):
        return "yes"
    return None


def states_only_otherwise(text: str, verdict: Verdict, question: str) -> bool:
    """Whether the cited sentences of ``text`` that state an answer (:func:`stated_answer`) all
    state the other one than ``verdict`` (a yes or a no), and one at least does.

    A model's verdict line can say the opposite of every answer its own cited sentences
    state; the verdict line is then not to be trusted, and the written answer is read again
    (:func:`medlit.checks.verdict.read_verdict`).
    """
    if verdict not in ("yes", "no"):
        return False
    stated: set[Stance] = set()

    def read(sentence: str) -> str:
        if extract_pmids(sentence) and (answer := stated_answer(sentence, question)):
            stated.add(answer)
        return sentence

    rewrite_sentences(text, read)
    return stated == {"no" if verdict == "yes" else "yes"}


def concludes(article: Article, question: str) -> Stance | None:
    """What the article's conclusion answers: what its sentences with a cue say, when they
    agree; when they read different ways, what the one of them that says the most of the
    question says, if it says at least :data:`ASKED` of the question's words (a conclusion
    may first report side findings that read one way, then answer the question the other)."""
    read = [(s, st) for s in conclusion_sentences(article) if (st := sentence_stance(s, question))]
    # What a subgroup showed does not answer for the whole study.
    read = whole_study(read)
    stances = {stance for _, stance in read}
    if len(stances) == 1:
        return stances.pop()
    asked = content_terms(question)
    nearest = _nearest(question, [s for s, _ in read])
    if len(nearest) != 1 or len(content_terms(nearest[0]) & asked) < ASKED * len(asked):
        # The question, worded apart from the article (a synonym for the article's term),
        # picks none: its title, worded as the article is, may.
        nearest = _nearest(article.title, [s for s, _ in read])
        titled = content_terms(article.title)
        if len(nearest) != 1 or len(content_terms(nearest[0]) & titled) < TITLED:
            return None
    stance = dict(read)[nearest[0]]
    return stance if stance in ("yes", "no") else None


def _cited(text: str, articles: Mapping[str, Article]) -> list[tuple[str, list[str]]]:
    """The sentences of ``text`` citing evidence articles, with the PMIDs they cite."""
    sentences: list[str] = []

    def collect(sentence: str) -> str:
        sentences.append(sentence)
        return sentence

    rewrite_sentences(text, collect)
    cited = [(s, [p for p in extract_pmids(s) if p in articles]) for s in sentences]
    return [(s, pmids) for s, pmids in cited if pmids]


def _nearest(sentence: str, candidates: list[str]) -> list[str]:
    """The ``candidates`` sharing the most content words with ``sentence`` (all of them tied
    for most), or none if none shares one."""
    wanted = content_terms(without_citations(sentence))
    shared = [len(wanted & content_terms(candidate)) for candidate in candidates]
    most = max(shared, default=0)
    return [c for c, n in zip(candidates, shared, strict=True) if most and n == most]


def _contradicts(
    sentence: str, stated: Stance, verdict: str, article: Article, question: str
) -> bool:
    """Whether ``article`` contradicts ``sentence``, which states ``stated`` where the
    verdict is ``verdict`` (see the module doc)."""
    said = [s for section in article.abstract for s in split_sentences(section.text)]
    if any(stated_answer(s, question) == stated for s in _nearest(sentence, said)):
        return False  # the article says it
    if concludes(article, question) == verdict:
        return True
    nearest = _nearest(sentence, conclusion_sentences(article))
    return len(nearest) == 1 and sentence_stance(nearest[0], question) == verdict


def contradicted_in(
    text: str, verdict: str, articles: Mapping[str, Article], question: str
) -> Callable[[str], list[tuple[str, str]]] | None:
    """What is wrong with the citations of ``text``'s sentences stating the answer opposite
    to ``verdict`` that every article they cite contradicts: (PMID, why) for each; None when
    there is none, or nothing cited would be left."""
    if verdict not in ("yes", "no"):
        return None
    other: Stance = "no" if verdict == "yes" else "yes"
    cited = _cited(text, articles)
    wrong = {
        s
        for s, pmids in cited
        if stated_answer(s, question) == other
        and all(_contradicts(s, other, verdict, articles[p], question) for p in pmids)
    }
    if not wrong or len(wrong) == len(cited):
        return None  # nothing to drop, or nothing cited would be left
    return _cited_in(wrong, articles, other, verdict)


def _cited_in(
    wrong: set[str], articles: Mapping[str, Article], stated: str, concluded: str
) -> Callable[[str], list[tuple[str, str]]]:
    """(PMID, why) for each citation of a ``wrong`` sentence, which states ``stated`` where
    its articles conclude ``concluded``."""
    why = f"the answer {stated!r}, where the article concludes {concluded!r}"

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        return (
            [(p, why) for p in extract_pmids(sentence) if p in articles]
            if sentence in wrong
            else []
        )

    return wrong_in


def against_in(
    text: str, verdict: str, articles: Mapping[str, Article], question: str
) -> Callable[[str], list[tuple[str, str]]] | None:
    """What is wrong with the citations of ``text``'s sentences that state ``verdict``'s
    answer where every article they cite contradicts it (concludes the other answer, and its
    sentence nearest them does not say theirs): (PMID, why) for each; None when there is
    none."""
    if verdict not in ("yes", "no"):
        return None
    other: Stance = "no" if verdict == "yes" else "yes"
    wrong = {
        s
        for s, pmids in _cited(text, articles)
        if stated_answer(s, question) == verdict
        and all(_contradicts(s, verdict, other, articles[p], question) for p in pmids)
    }
    return _cited_in(wrong, articles, verdict, other) if wrong else None
