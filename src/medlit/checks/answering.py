"""What the checks left that answers the question: a cited statement about what it asks.

A note can say that a word of the question went unaddressed (the sentence that restated the
question, citing nothing, was left out; no retrieved article uses the question's own word
for its outcome). When a statement is left that names the question's subject (as the
question's frame reads it, :func:`medlit.words.search_plan.names_concept`, with the
abbreviations its cited articles define spelled out: "DSE") and cites an article that names
the subject and the outcome (:func:`medlit.words.search_plan.names_asked`: in one of their
forms, or by a word of theirs rare in English, not by every word the question frames them
with; or, with the shipped embedder, in other words keeping one of theirs, near enough:
:func:`names_near`), the verdict can be read off what is left: it follows the
statements the evidence carries, and the note stays as a caveat. Not when the word unaddressed
is the change the question asks about ("Does X impair Y?" over articles that never say
impair): :func:`asks_unheld_change`; nor when no retrieved article mentions the question's
outcome (:func:`outcome_unmentioned`). (A statement naming only the
outcome was tried on the tune half of the expert-style questions, ``benchmarks/
uncertain_causes.py --expert``: it earned nothing there nor on the check half.)

The verdict then follows the cited articles of those statements: what their conclusions
answer (:func:`medlit.checks.contradicted.concludes`) when those that conclude agree; when none
concludes, the model's reading of what is left; when they conclude both ways, Uncertain
(:func:`followed_verdict`). A small model reads a statement it has not understood ("hearing
loss ... reduced by BM", BM a corticosteroid) the wrong way; the articles' conclusions are read
by rule.

A verdict withheld only because the question's words are not the articles' (a note that a
word or the subject went unsaid, :data:`VOCABULARY_NOTES`) is earned back by an article the
answer still cites that asks the question itself (:func:`title_matched_verdict`): its title
near the whole question (the shipped embedder's cosine at least :data:`TITLE_MATCH`), naming
the same direction of change, its conclusion read by rule answering yes or no, and the
model's own verdict the same. Two readers that share no words agree on one article about the
question as asked; the notes stay as caveats. Never over a population the cited articles do
not speak of, nor over misnamed citations (those notes withhold whatever the title).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping

from medlit.checks.citations import Verdict, extract_pmids
from medlit.checks.contradicted import concludes
from medlit.checks.draft import Draft
from medlit.embeddings.base import Embedder
from medlit.types import Article, VerdictCause
from medlit.words.defined_terms import spell_out
from medlit.words.frame import QuestionFrame, asked_direction
from medlit.words.search_plan import (
    Role,
    concept_words,
    phrases_sharing_a_word,
    unnamed_asked,
)

__all__ = [
    "NEAR_NAME",
    "TITLE_MATCH",
    "VOCABULARY_NOTES",
    "answering_statements",
    "asks_unheld_change",
    "followed_verdict",
    "names_as_asked",
    "names_near",
    "nearest_name",
    "outcome_unmentioned",
    "title_matched_verdict",
]

#: The cosine (all-MiniLM-L6-v2) of a question and an article's title from which the article
#: asks the question itself. Set on the tune half of ``benchmarks/data/reworded_questions.tsv``
#: (``benchmarks/title_match.py``): the least value above the nearest title of every other
#: article of the 500 to each tune question (0.71); 31 of 46 tune and 21 of 43 check questions
#: reach it with their own article's title, no other article's title reaches it on either half.
TITLE_MATCH = 0.75

#: The cosine (all-MiniLM-L6-v2) of the question's subject or outcome and a run of an article's
#: words holding one of its words from which the article names it otherwise ("cognitive
#: decline" for "cognitive deterioration", "respiratory symptoms" for "respiratory symptoms
#: alone"). Set on the tune half of ``benchmarks/data/reworded_questions.tsv`` (``python
#: benchmarks/near_names.py``).
NEAR_NAME = 0.75

#: The notes that withhold a verdict for words alone (the question's words unsaid by the
#: articles), which an article asking the question itself can answer for.
VOCABULARY_NOTES = frozenset(
    {"unaddressed-words", "untold-subjects", "cited-off-subject", "unmentioned-terms"}
)


def asks_unheld_change(frame: QuestionFrame | None, unheld: Collection[str]) -> bool:
    """Whether a word of ``unheld`` (the words of the question a note says went unaddressed)
    is one the question asks its change or relation by ("impair", "improve", "predict"): then
    no statement left answers the question as asked, whatever its articles conclude (they
    conclude of another change)."""
    if frame is None:
        return False
    asked = {w.lower() for w in f"{frame.direction_words} {frame.relation}".split()}
    return any(word.lower() in asked for word in unheld)


def outcome_unmentioned(frame: QuestionFrame | None, unmentioned: Collection[str]) -> bool:
    """Whether a word of ``frame``'s outcome is among ``unmentioned`` (the question's words no
    retrieved article mentions): then what is left speaks of other outcomes ("Does aspirin
    cause tinnitus?" over aspirin trials of stroke), and answers nothing of the question."""
    if frame is None or not unmentioned:
        return False
    outcome = {w.lower() for w in concept_words(frame, ("outcome",))}
    return any(term.lower() in outcome for term in unmentioned)


def nearest_name(phrase: str, text: str, embedder: Embedder) -> tuple[float, str]:
    """The run of ``text``'s words holding a word of ``phrase`` (:func:`medlit.words.
    search_plan.phrases_sharing_a_word`) nearest it, and its cosine; (0.0, "") when none."""
    runs = phrases_sharing_a_word(phrase, text)
    if not runs:
        return 0.0, ""
    vectors = embedder.embed([phrase, *runs])
    near = vectors[1:] @ vectors[0]
    best = int(near.argmax())
    return float(near[best]), runs[best]


def names_near(phrase: str, text: str, embedder: Embedder) -> bool:
    """Whether ``text`` names ``phrase`` (a concept of the question) otherwise: its nearest
    run (:func:`nearest_name`) at least :data:`NEAR_NAME` from it."""
    return nearest_name(phrase, text, embedder)[0] >= NEAR_NAME


def names_as_asked(
    frame: QuestionFrame,
    text: str,
    embedder: Embedder | None,
    roles: tuple[Role, ...] = ("subject", "outcome"),
) -> bool:
    """Whether ``text`` names each of ``frame``'s concepts of ``roles`` (its subject and its
    outcome), as asked (:func:`medlit.words.search_plan.names_concept`) or, with
    ``embedder``, otherwise (:func:`names_near`)."""
    unnamed = unnamed_asked(frame, text, roles)
    return not unnamed or (
        embedder is not None and all(names_near(c, text, embedder) for c in unnamed)
    )


def answering_statements(
    frame: QuestionFrame | None,
    draft: Draft,
    articles: Mapping[str, Article],
    embedder: Embedder | None = None,
) -> list[str]:
    """The sentences of ``draft`` that name ``frame``'s subject (the abbreviations their
    cited articles define spelled out) and cite an article of ``articles`` that names its
    subject and its outcome (a conclusion counts toward a verdict only from an article about
    what the question asks); with ``embedder``, a concept a sentence or an article does not
    name as asked may be named otherwise (:func:`names_near`). None without a frame or a
    subject."""
    if frame is None or not frame.subject:
        return []
    # (a text, the roles asked) -> whether the text names the frame's concepts of those roles
    about: dict[tuple[str, tuple[Role, ...]], bool] = {}

    def names(text: str, roles: tuple[Role, ...] = ("subject", "outcome")) -> bool:
        if (text, roles) not in about:
            about[text, roles] = names_as_asked(frame, text, embedder, roles)
        return about[text, roles]

    found = []
    for sentence in draft.sentences:
        cited = [articles[p] for p in extract_pmids(sentence.text) if p in articles]
        if not cited or not names(spell_out(sentence.text, cited), ("subject",)):
            continue
        if any(names(article.everything_said) for article in cited):
            found.append(sentence.text)
    return found


async def followed_verdict(
    frame: QuestionFrame | None,
    draft: Draft,
    articles: Mapping[str, Article],
    question: str,
    read: Callable[[], Awaitable[Verdict | None]],
    embedder: Embedder | None = None,
) -> tuple[Verdict | None, VerdictCause | None]:
    """The verdict that follows the statements of ``draft`` that answer the question
    (:func:`answering_statements`), and the cause when it is Uncertain: what their cited
    articles conclude when those that conclude agree, the model's reading (``read``) when
    none concludes, Uncertain when they conclude both ways."""
    cited = {
        pmid
        for sentence in answering_statements(frame, draft, articles, embedder)
        for pmid in extract_pmids(sentence)
        if pmid in articles
    }
    stances = {concludes(articles[pmid], question) for pmid in sorted(cited)}
    stated = stances & {"yes", "no"}
    if len(stated) == 1:
        return next(iter(stated)), None
    if stated:
        return "uncertain", VerdictCause(
            kind="policy",
            rule="cited-conclusions-differ",
            detail="the articles cited for the answer conclude both ways",
        )
    verdict = await read()
    if verdict == "uncertain":
        return verdict, VerdictCause(
            kind="model", detail="the model read its checked answer as uncertain"
        )
    return verdict, None


async def title_matched_verdict(
    frame: QuestionFrame | None,
    question: str,
    text: str,
    articles: Mapping[str, Article],
    embedder: Embedder,
    model_verdict: Callable[[], Awaitable[Verdict | None]],
) -> tuple[Verdict, str] | None:
    """The verdict, and the PMID it stands on, that an article ``text`` cites gives when it
    asks ``question`` itself: its title the nearest of the cited ones to the question, at least
    :data:`TITLE_MATCH`; the same direction of change named (none in both, or the frame's);
    its conclusion read by rule (:func:`medlit.checks.contradicted.concludes`) yes or no; and
    ``model_verdict`` (the model's verdict on ``text``, asked last) the same. None otherwise."""
    if frame is None or not frame.yes_no or not text.strip():
        return None
    cited = [articles[p] for p in dict.fromkeys(extract_pmids(text)) if p in articles]
    titled = [a for a in cited if a.title]
    if not titled:
        return None
    vectors = embedder.embed([question, *(a.title for a in titled)])
    nearness = vectors[1:] @ vectors[0]
    best = int(nearness.argmax())
    article = titled[best]
    if float(nearness[best]) < TITLE_MATCH or asked_direction(article.title) != frame.direction:
        return None
    ruled = concludes(article, question)
    if ruled not in ("yes", "no") or not article.pmid or await model_verdict() != ruled:
        return None
    return ruled, article.pmid
