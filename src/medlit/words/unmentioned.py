"""What a question asks about that no retrieved article mentions.

A search can find articles on the question's drug or condition that never mention the
outcome it asks about (a question on a drug's side effect answered from trials of its other
effects), and an answer built from them reads as if it covered the question. Here the
question's subject terms that no retrieved article says (title, abstract or MeSH) are found, so
the answer can say so first and a yes/no verdict read from those articles becomes "uncertain":
evidence that never names the thing asked about cannot answer for it.

A subject term is a word of the question that is rare in English (:func:`~medlit.words.word_rarity.
is_technical`, judged as written: "always" is common even though its topic key "alway" is not a
word), not one of the planner's generic words ("risk", "effect", "children": the populations
have a check of their own), and not a participle ("underdiagnosed", "coexisting": how the
question frames its subject). A term counts as said in any form sharing its first six letters
(:func:`~medlit.research.grounding.word_stem`, British and American spellings alike), written
with or without its spaces and hyphens ("shockwave", "shock wave"), with accents or without
("Sjogren", "Sjögren"), and an abbreviation counts as said when an article says what it
abbreviates (:func:`~medlit.research.grounding.abbreviation_said`: "CABG", "coronary artery
bypass grafting"; "CMV", "cytomegalovirus"), and a term of the question naming a MeSH concept
counts as said by an article naming that concept otherwise (:mod:`medlit.words.mesh`: "hs-CRP",
"C-reactive protein"), and a word of the subject by an article saying another name the question
gives it ("OXLUMO (lumasiran)").

How many PubMedQA questions have a term flagged against their own article (and against its
abstract alone, the title left out) is measured by ``python benchmarks/unmentioned_terms.py``
(figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medlit.text import fold_accents
from medlit.types import Article
from medlit.words import mesh
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import abbreviation_said, said_in, word_stems
from medlit.words.memo import remembered
from medlit.words.search_plan import asked_terms, named_otherwise
from medlit.words.tokens import TERMS
from medlit.words.topics import anchor_terms, normalise_topic
from medlit.words.word_rarity import is_technical

__all__ = ["mentioned", "subject_terms", "unmentioned_terms"]

_WORD = TERMS


def _compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def subject_terms(question: str, frame: QuestionFrame | None = None) -> dict[str, str]:
    """The question's subject terms: topic key -> the word as the question writes it. With
    its ``frame``, the words of the frame's concepts (:func:`asked_terms`) and of the change
    it asks ("impair"), not those framing the question ("used", "treatment")."""
    anchors: set[str] = set()
    if frame is not None and frame.subject:
        asked = anchor_terms(f"{frame.direction_words} {frame.relation}")
        anchors = asked_terms(frame) | asked
    question = fold_accents(question)
    anchors = anchors or anchor_terms(question)
    terms: dict[str, str] = {}
    for word in _WORD.findall(question):
        key = normalise_topic(word)
        lower = word.lower()
        if key in anchors and is_technical(lower) and not lower.endswith(("ed", "ing")):
            terms.setdefault(key, word)
    return terms


def mentioned(terms: dict[str, str], texts: Iterable[str]) -> set[str]:
    """The keys of ``terms`` (:func:`subject_terms`) that one of ``texts`` says, in any form
    of the word, with or without its spaces, or as the abbreviation of what a text says."""
    read = [_read(text) for text in texts]
    texts = [folded for folded, _, _ in read]
    stems: set[str] = set().union(*(said for _, said, _ in read))
    compact = " ".join(written for _, _, written in read)
    return {
        key
        for key, word in terms.items()
        if said_in(key, stems)
        or _compact(word) in compact
        or any(abbreviation_said(word, text) for text in texts)
    }


@remembered(4096)
def _read(text: str) -> tuple[str, frozenset[str], str]:
    """``text`` without accents, its word stems, and its letters and digits run together."""
    folded = fold_accents(text)
    return folded, frozenset(word_stems(folded)), _compact(folded)


def unmentioned_terms(
    question: str, articles: Iterable[Article], frame: QuestionFrame | None = None
) -> list[str]:
    """The subject terms of ``question`` (as it writes them; of its ``frame``'s concepts when
    given) that none of ``articles`` says; empty when there are no articles (saying nothing
    was found is another message's job)."""
    texts = [article.everything_said for article in articles]
    if not texts:
        return []
    terms = subject_terms(question, frame)
    said = mentioned(terms, texts) if terms else set()
    return [
        word
        for key, word in terms.items()
        if key not in said
        and not any(
            mesh.said_otherwise(word, question, t) or named_otherwise(frame, word, t) for t in texts
        )
    ]
