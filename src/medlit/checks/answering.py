"""What the checks left that answers the question: a cited statement about what it asks.

A note can say that a word of the question went unaddressed (the sentence that restated the
question, citing nothing, was left out; no retrieved article uses the question's own word
for its outcome). When a statement is left that cites an article about the question's subject
and names what the question asks about (its subject or its outcome, as the question's frame
reads them), the verdict can be read off what is left: it follows the statements the
evidence carries, and the note stays as a caveat. The roles a statement must name are
:data:`NAMED`, set on the tune half of the expert-style questions
(``benchmarks/uncertain_causes.py --expert``).

The verdict then follows the cited articles of those statements: what their conclusions
answer (:func:`medlit.checks.contradicted.concludes`) when those that conclude agree; when none
concludes, the model's reading of what is left; when they conclude both ways, Uncertain
(:func:`followed_verdict`). A small model reads a statement it has not understood ("hearing
loss ... reduced by BM", BM a corticosteroid) the wrong way; the articles' conclusions are read
by rule.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Mapping

from medlit.checks.citations import Verdict, extract_pmids
from medlit.checks.contradicted import concludes
from medlit.checks.draft import Draft
from medlit.types import Article, VerdictCause
from medlit.words.frame import QuestionFrame
from medlit.words.search_plan import concepts_of, speaks_of, speaks_of_subject

__all__ = ["NAMED", "about_subject", "answering_statements", "followed_verdict"]

#: What a statement must name of the question, any one of: its ``subject`` (by a naming word
#: or all its words) or its ``outcome`` (in any of its forms).
NAMED: frozenset[str] = frozenset({"subject", "outcome"})


#: Key words of a subject of common words from which an article may leave some out and still
#: speak of it: a modifier of the asker's ("mildly raised fasting glucose", "a structured
#: exercise programme", "respiratory symptoms alone") is not the article's wording.
_LOOSE_SUBJECT = 3
_WORD = re.compile(r"[a-z0-9]+(?:['\u2019-][a-z0-9]+)*")


def about_subject(frame: QuestionFrame, text: str) -> bool:
    """Whether ``text`` speaks of ``frame``'s subject: by one of its naming words
    (:func:`speaks_of_subject`), or, for a subject of :data:`_LOOSE_SUBJECT` key words or
    more, by at least half of them in one of their forms."""
    if speaks_of_subject(frame, text):
        return True
    subject = next((c for c in concepts_of(frame) if c.role == "subject"), None)
    if subject is None or len(subject.words) < _LOOSE_SUBJECT:
        return False
    found = _WORD.findall(text.lower())
    joined, words = f" {' '.join(found)} ", frozenset(found)
    said = sum(
        dataclasses.replace(subject, phrases=(), words=(variants,)).found_in(joined, words)
        for variants in subject.words
    )
    return 2 * said >= len(subject.words)


def _names(frame: QuestionFrame, sentence: str) -> bool:
    """Whether ``sentence`` names the question's subject or outcome (:data:`NAMED`)."""
    if "subject" in NAMED and about_subject(frame, sentence):
        return True
    return "outcome" in NAMED and bool(frame.outcome) and speaks_of(frame, sentence, ("outcome",))


def answering_statements(
    frame: QuestionFrame | None, draft: Draft, articles: Mapping[str, Article]
) -> list[str]:
    """The sentences of ``draft`` that cite an article of ``articles`` speaking of ``frame``'s
    subject and that name what the question asks about; none without a frame or a subject."""
    if frame is None or not frame.subject:
        return []
    found = []
    for sentence in draft.sentences:
        cited = [articles[p] for p in extract_pmids(sentence.text) if p in articles]
        if not cited or not _names(frame, sentence.text):
            continue
        if any(about_subject(frame, article.everything_said) for article in cited):
            found.append(sentence.text)
    return found


async def followed_verdict(
    frame: QuestionFrame | None,
    draft: Draft,
    articles: Mapping[str, Article],
    question: str,
    read: Callable[[], Awaitable[Verdict | None]],
) -> tuple[Verdict | None, VerdictCause | None]:
    """The verdict that follows the statements of ``draft`` that answer the question
    (:func:`answering_statements`), and the cause when it is Uncertain: what their cited
    articles conclude when those that conclude agree, the model's reading (``read``) when
    none concludes, Uncertain when they conclude both ways."""
    cited = {
        pmid
        for sentence in answering_statements(frame, draft, articles)
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
