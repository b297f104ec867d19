"""An article's finding copied word for word, with another subject put in front of it.

A model can copy a finding word for word and put the question's subject in front of it
("The device was well tolerated in all patients except ..." over the article's "Arrhythmias
were well tolerated in all patients except ..."). Every word after the subject is the
article's, and the new subject is the article's subject too, so the word-share and subject
checks pass it; the finding was about something else, and the answer gives it for the
question's subject.

Here a cited sentence that repeats a run of at least :data:`RUN` words of one of its cited
article's sentences is read by what stands before that run in each, back to the start of the
clause ("that", "which", a comma): the subjects. When the article's subject names a technical
word (rare in English: :func:`~medlit.words.word_rarity.is_technical`) that the answer's sentence
never says, and the answer's subject names one the article's sentence never says (the long
forms of the article's abbreviations counted as said, and a word's forms as one), the finding
was given another subject. When every sentence of the article that the answer's sentence copies
such a run from says so, the citation goes (and a sentence left citing nothing).

Hand-written: no natural-language-inference model can be loaded here. How many of the
PubMedQA abstracts' sentences are flagged against their own article (as written or framed
"The study found that ..."), and how many given the subject of another sentence of their
article are caught, is measured by ``python benchmarks/swapped_subjects.py`` (figures in
``docs/benchmarks.md``); what it does on recorded model answers, by
``python benchmarks/ablation.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import fold_accents, split_sentences
from medlit.types import Article
from medlit.words import word_set
from medlit.words.defined_terms import long_forms
from medlit.words.grounding import said_in, word_stems
from medlit.words.memo import remembered
from medlit.words.topics import normalise_topic
from medlit.words.word_rarity import is_technical

__all__ = ["RUN", "SwappedSubject", "swapped_subject", "swapped_subjects"]

RUN = 6
"""Words in a row an answer's sentence must share with an article's sentence to copy it."""
_HEAD = 8
"""Words at most before the shared run that are read as its subject (a longer opening is a
clause of its own, not the subject of the run)."""

_TOKEN = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*|[,;:()]")
# Where the subject of the shared run starts: after a comma or another clause mark, "that",
# "which", "whereas", "while" ("The study found that X was ...").
_CLAUSE_START = frozenset([",", ";", ":", "that", "which", "whereas", "while"])
_AUXILIARY = word_set("auxiliary_verbs.txt")


@dataclass(frozen=True)
class SwappedSubject:
    """What an answer's sentence gave a finding to (``brought``), and what the article's
    sentence gave it to (``dropped``), as written there."""

    brought: str
    dropped: str


@remembered(16384)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(fold_accents(text)))


@remembered(16384)
def _positions(tokens: tuple[str, ...]) -> dict[str, list[int]]:
    """Where each token stands in ``tokens`` (case aside), counting from 1."""
    at: dict[str, list[int]] = {}
    for j, token in enumerate(tokens, 1):
        at.setdefault(token.lower(), []).append(j)
    return at


@remembered(16384)
def _runs(text: str) -> frozenset[tuple[str, ...]]:
    """Every :data:`RUN` tokens in a row of ``text`` (case aside): two texts that share none
    share no run as long (:func:`_swap` reads none)."""
    tokens = [token.lower() for token in _tokens(text)]
    return frozenset(tuple(tokens[i : i + RUN]) for i in range(len(tokens) - RUN + 1))


def _longest_run(a: Sequence[str], b: tuple[str, ...]) -> tuple[int, int, int]:
    """(length, start in ``a``, start in ``b``) of the longest run of tokens ``a`` and ``b``
    share (the first one, if several are as long), case aside."""
    at = _positions(b)
    best = (0, 0, 0)
    previous: dict[int, int] = {}  # end in b -> length of the run ending there
    for i, token in enumerate(a, 1):
        current: dict[int, int] = {}
        for j in at.get(token.lower(), ()):
            run = current[j] = previous.get(j - 1, 0) + 1
            if run > best[0]:
                best = (run, i - run, j - run)
        previous = current
    return best


def _subject(tokens: Sequence[str], start: int) -> list[str]:
    """The words before ``start`` back to the start of their clause, or none when they are
    more than :data:`_HEAD` (an opening clause of its own)."""
    head: list[str] = []
    for token in reversed(tokens[:start]):
        if token.lower() in _CLAUSE_START:
            break
        head.append(token)
    head = [token for token in head if token not in ("(", ")")]
    if len(head) > _HEAD:
        return []
    head.reverse()
    while head and head[-1].lower() in _AUXILIARY:  # "LVAD support was": its verb
        head.pop()
    if any(token.lower() in _AUXILIARY for token in head):
        return []  # a clause with its own verb ("MRIs were analyzed"), not a subject
    return head


def _technical(words: list[str]) -> list[str]:
    return [w for w in words if len(w) > 2 and is_technical(w.lower()) and normalise_topic(w)]


def _unsaid(words: list[str], said: set[str]) -> list[str]:
    """The technical ``words`` that ``said`` (:func:`word_stems`) does not hold in any form."""
    return [w for w in _technical(words) if not said_in(normalise_topic(w), said)]


def _swap(sentence: str, said: str, article: Article) -> SwappedSubject | bool:
    """How ``sentence`` copies the article's sentence ``said``: a swapped subject, ``True``
    when it copies a run of it with the subject it has there, ``False`` when it copies none."""
    mine, theirs = _tokens(sentence), _tokens(said)
    length, at_mine, at_theirs = _longest_run(mine, theirs)
    while length and mine[at_mine].lower() in _CLAUSE_START:  # the run's own clause opens it
        length, at_mine, at_theirs = length - 1, at_mine + 1, at_theirs + 1
    if length < RUN:
        return False
    head_mine, head_theirs = _subject(mine, at_mine), _subject(theirs, at_theirs)
    if not head_mine or not head_theirs:
        return True
    dropped = _unsaid(head_theirs, word_stems(f"{sentence} {long_forms(sentence, article)}"))
    brought = _unsaid(head_mine, word_stems(f"{said} {long_forms(said, article)}"))
    if not dropped or not brought:
        return True
    return SwappedSubject(" ".join(head_mine), " ".join(head_theirs))


def swapped_subject(sentence: str, article: Article) -> SwappedSubject | None:
    """The subject ``sentence`` (an answer's, cited to ``article``) gives a finding that every
    sentence of the article it copies a run of :data:`RUN` words from gives another subject;
    None when one of them gives it the same, or none is copied."""
    text = without_citations(sentence)
    runs = _runs(text)
    found = None
    for section in article.abstract:
        every_run, sentences = _section_runs(section.text)
        if runs.isdisjoint(every_run):
            continue  # it copies no run of any sentence of it
        for said, theirs in sentences:
            if runs.isdisjoint(theirs):
                continue  # it copies no run of it (:func:`_swap` would say False)
            swap = _swap(text, said, article)
            if swap is True:
                return None
            if isinstance(swap, SwappedSubject) and found is None:
                found = swap
    return found


@remembered(16384)
def _section_runs(
    text: str,
) -> tuple[frozenset[tuple[str, ...]], tuple[tuple[str, frozenset[tuple[str, ...]]], ...]]:
    """The runs of every sentence of a section's ``text``, and each sentence with its own
    (:func:`_runs`): an article's, read once for every answer that cites it."""
    sentences = tuple((said, _runs(said)) for said in split_sentences(text))
    return frozenset().union(*(runs for _, runs in sentences)), sentences


def swapped_subjects_in(articles: Mapping[str, Article]) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article whose
    finding it gives another subject (:func:`swapped_subject`)."""

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in extract_pmids(sentence):
            if pmid in articles and (swap := swapped_subject(sentence, articles[pmid])):
                why = f"a finding on {swap.brought!r} that article gives for {swap.dropped!r}"
                wrong.append((pmid, why))
        return wrong

    return wrong_in


@check("swapped-subjects", "sentence")
def swapped_subjects(ctx: CheckContext) -> list[Finding]:
    """A citation to an article whose finding the sentence copies word for word with another
    subject in front of it."""
    return logged(
        cited_findings("swapped-subjects", ctx, swapped_subjects_in(ctx.articles)),
        "answer_subjects_swapped",
    )
