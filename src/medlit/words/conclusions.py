"""What a study concluded, and whether an article is about a question: the readings of an
abstract that the checks and the evidence digest (:mod:`medlit.digest`) share."""

from __future__ import annotations

import re
from collections.abc import Callable

from medlit.text import split_sentences
from medlit.types import Article
from medlit.words import cue
from medlit.words.grounding import abbreviation_said, said_in, word_stems
from medlit.words.topics import anchor_terms, normalise_topic
from medlit.words.word_rarity import is_technical

__all__ = [
    "ON_QUESTION",
    "about_question",
    "conclusion_sentences",
    "states_aim",
    "states_no_finding",
]

_LABEL_PREFIX = re.compile(r"^(?:[A-Z][A-Z /&-]{2,40}):\s+")
# A sentence that states what a study set out to do: it restates the question (so it reads as
# relevant) and finds nothing ("To determine whether X is more common in ...").
_AIM = cue("aim.opening")


def states_aim(sentence: str) -> bool:
    """Whether ``sentence`` states what a study set out to do ("To determine whether ...",
    "The aim of this study was ..."): no finding."""
    return _AIM.match(_LABEL_PREFIX.sub("", sentence.strip())) is not None


_OPEN_QUESTION = cue("question.open")


def states_no_finding(sentence: str) -> bool:
    """Whether ``sentence`` states no finding: a study's aim, a question (asked, or put as
    "whether ..."), a hypothesis."""
    text = sentence.strip()
    return states_aim(text) or text.endswith("?") or _OPEN_QUESTION.search(text) is not None


def conclusion_sentences(article: Article) -> list[str]:
    """The sentences of the article's conclusion (an unstructured abstract's last one)."""
    if article.conclusion:
        return split_sentences(article.conclusion)
    if len(article.abstract) == 1 and not article.abstract[0].label:
        # An unstructured abstract usually ends with its conclusion.
        sentences = split_sentences(article.abstract[0].text)
        return sentences[-1:] if len(sentences) >= 3 else []
    return []


ON_QUESTION = 0.5
"""Share of the question's words (:func:`medlit.words.topics.anchor_terms`, in any form)
an article must say for its conclusion to lean the verdict, and for the digest to quote it
when some article does."""


_ABBREVIATION = re.compile(r"\b[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*(?:-[A-Za-z0-9]+)*s?\b")


def about_question(question: str) -> Callable[[Article], bool]:
    """Whether an article says :data:`ON_QUESTION` of ``question``'s words: an article on
    another subject that shares a few of the question's common words ("public", "campaigns")
    must not lean the digest's verdict. One of them must be a technical word of the question
    when it has any (rare in English: :func:`medlit.words.word_rarity.is_technical`): the
    common words of a question ("permanent", "treatment") are said by many articles on
    other subjects.
    And one of the abbreviations the question writes in capitals, when it writes any (as
    itself or by what it abbreviates): an abbreviation often names the question's very
    subject (a marker, a procedure), which an article on the same organ or disease may never
    name; a word that only holds its letters ("chemoradiotherapy" holds C, R and P) does not
    count.
    """
    asked = {normalise_topic(word) for word in anchor_terms(question)}
    technical = {word for word in asked if is_technical(word)}
    written = [
        (w, key) for w in _ABBREVIATION.findall(question) if (key := normalise_topic(w)) in asked
    ]
    read: dict[str, bool] = {}  # by article key: an article has several conclusion sentences

    def on_question(article: Article) -> bool:
        if article.key not in read:
            text = article.everything_said
            said = word_stems(text.lower())
            read[article.key] = (
                sum(said_in(w, said) for w in asked) >= ON_QUESTION * len(asked)
                and (not technical or any(said_in(w, said) for w in technical))
                and (
                    not written
                    or any(
                        said_in(key, said) or abbreviation_said(w, text, in_one_word=False)
                        for w, key in written
                    )
                )
            )
        return read[article.key]

    return on_question
