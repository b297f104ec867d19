"""Uncited conclusions that no retrieved article supports.

A small model may open with the question said back as its answer ("The evidence shows that X does
prevent Y."), citing nothing, over articles none of which says it. Attribution cannot cite it (no
article says it), yet it is the answer the reader takes away, and the verdict may be read from it.
Such a sentence is left out here: one that cites nothing, uses most of the question's subject words
(at least two, and :data:`MIN_SHARE` of them: it states an answer), and whose subject words no
single retrieved article holds together without naming otherwise what the sentence names
(:mod:`medlit.words.qualified_names`). A sentence the evidence can carry, or one that only connects
("These trials were small."), stays.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from medlit.checks.apply import apply
from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.checks.policy import TOGETHER, warnings_of
from medlit.log import get_logger
from medlit.text import all_of
from medlit.types import Article
from medlit.words import mesh
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import abbreviation_said, said_in, word_stem, word_stems
from medlit.words.qualified_names import Names, mismatched, qualified_names
from medlit.words.search_plan import Role, concept_words
from medlit.words.topics import anchor_terms, normalise_topic
from medlit.words.word_rarity import is_technical

__all__ = [
    "MIN_SHARE",
    "UnheldReader",
    "Unsupported",
    "says_all",
    "unsupported_conclusions",
    "unsupported_line",
]

MIN_SHARE = 0.6
"""Share of the question's subject words an uncited sentence must use to be checked."""


@dataclass
class Unsupported:
    """The answer after the ``unsupported-conclusions`` check, what it warns of, and the
    subject words of the sentences left out (as they wrote them, in their order; lower case
    but for an abbreviation)."""

    text: str
    warnings: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    # the word stems of every retrieved article
    spoken: set[str] = field(default_factory=set, compare=False, repr=False)

    def unaddressed(self) -> set[str]:
        """Subject words the sentences left out used and nothing left in the text does (in
        any form of the word, "inheritance" says "inherited", or a synonym, "mortality" says
        "death"). A word common in English that no retrieved article says is the question's
        own wording, which no answer from this evidence could address ("mildly raised",
        "higher death rates" over an article on impaired fasting glucose and mortality)."""
        said = word_stems(self.text)
        return {w for w in self.words if not _said(w, said) and _subject(w, self.spoken)}


def _said(word: str, stems: set[str]) -> bool:
    """Whether ``word`` (as written) is among ``stems`` in one of its forms: each part of a
    hyphenated word but a framing one ("age-related" is said by "age"), or another form or
    synonym of it (:func:`said_in`)."""
    lower = word.lower()
    parts = anchor_terms(lower.replace("-", " ")) if "-" in lower else set()
    if parts and all(said_in(part, stems) for part in parts):
        return True
    return word_stems(lower) <= stems or said_in(normalise_topic(word), stems)


def _subject(word: str, spoken: set[str]) -> bool:
    """Whether ``word`` can be held to the evidence: rare in English, or said by one of the
    retrieved articles (``spoken``: their word stems)."""
    return is_technical(word.lower()) or said_in(normalise_topic(word), spoken)


def says_all(article: Article, words: set[str]) -> bool:
    """Whether ``article`` says each of ``words`` in one of its forms (:func:`said_in`)."""
    said = word_stems(article.everything_said)
    return all(said_in(normalise_topic(word), said) for word in words)


class UnheldReader:
    """Reads a sentence as an uncited conclusion no retrieved article supports: the subject
    words it uses, as written, or None (the articles read once, when a sentence is first held
    to them; ``spoken``: their word stems, once read)."""

    def __init__(
        self, articles: Mapping[str, Article], question: str, frame: QuestionFrame | None = None
    ) -> None:
        # Words compare in any of their forms ("inherited", "inheritance"): a sentence is not
        # left out for using another form of its article's word. With the question's frame,
        # the words of its concepts, not those that frame it ("used", "treatment").
        every: tuple[Role, ...] = ("subject", "outcome", "comparison", "population", "qualifier")
        words = concept_words(frame, every) if frame is not None and frame.subject else set()
        self.anchors = {word_stem(word) for word in words or anchor_terms(question)}
        self.articles = articles
        self.evidence: list[tuple[set[str], Names, str]] = []
        self.spoken: set[str] = set()

    @property
    def reads(self) -> bool:
        """Whether a sentence can be held at all (two subject words or more, and articles)."""
        return len(self.anchors) >= 2 and bool(self.articles)

    def __call__(self, sentence: str) -> list[str] | None:
        if not self.reads or not _checked(sentence, self.anchors):
            return None
        if not self.evidence:
            self.evidence.extend(_evidence(self.articles))
            self.spoken.update(*(held for held, _, _ in self.evidence))
        return _unheld(sentence, self.anchors, self.evidence, self.spoken)


def unsupported_line(words: str, times: str = "1") -> str:
    """What the reader is told of ``times`` uncited sentences left out that used ``words``."""
    return f"{_how_many(times)} left out: no retrieved article speaks of {words} together"


def _evidence(articles: Mapping[str, Article]) -> list[tuple[set[str], Names, str]]:
    """Each article's word stems, qualified names and text (title and abstract)."""
    evidence = []
    for article in articles.values():
        content = f"{article.title} {article.abstract_text}"
        evidence.append((word_stems(content), qualified_names(content), content))
    return evidence


def _checked(sentence: str, anchors: set[str]) -> bool:
    """Whether ``sentence`` is an uncited conclusion: it cites nothing and uses most of the
    question's subject words (at least two, and :data:`MIN_SHARE` of them)."""
    if extract_pmids(sentence):
        return False
    return len(anchors & word_stems(sentence)) >= max(2, MIN_SHARE * len(anchors))


def _unheld(
    sentence: str,
    anchors: set[str],
    evidence: list[tuple[set[str], Names, str]],
    spoken: set[str],
) -> list[str] | None:
    """The subject words, as written, of an uncited conclusion no retrieved article holds
    together (without naming otherwise what it names); None when the sentence is no such
    conclusion or an article holds them."""
    if not _checked(sentence, anchors):
        return None
    used = anchors & word_stems(sentence)
    names = qualified_names(sentence)
    written = _as_written(sentence, used)
    # An adverb common in English that no retrieved article says is the question's own
    # wording ("mildly raised"), which no article could hold; a noun is its subject.
    wording = {w for w in written if w.endswith("ly") and not _subject(w, spoken)}

    def holds(held: set[str], content: str) -> bool:
        # "HoLEP" is held by "holmium laser enucleation of the prostate", "hs-CRP" by
        # "C-reactive protein" (another name of its MeSH concept)
        unheld = [w for w in written if w not in wording and not _said(w, held)]
        return all(
            abbreviation_said(word, content) or mesh.said_otherwise(word, sentence, content)
            for word in unheld
        )

    if any(
        holds(held, content) and not mismatched(names, named) for held, named, content in evidence
    ):
        return None
    return written


def _as_written(sentence: str, stems: set[str]) -> list[str]:
    """The words of ``sentence`` whose stems are ``stems``, the first of each, in order and as
    written ("polyposis", "CMV", "HoLEP"; lower case but for an abbreviation)."""
    found: dict[str, str] = {}
    for word in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", sentence):
        key = normalise_topic(word)
        if key and word_stem(key) in stems:
            abbreviation = any(c.isupper() for c in word[1:])  # "CMV", "HoLEP"
            found.setdefault(word_stem(key), word if abbreviation else word.lower())
    return list(found.values())


def _how_many(count: str) -> str:
    return "an uncited sentence was" if count == "1" else f"{count} uncited sentences were"


@check("unsupported-conclusions", "sentence")
def unsupported_conclusions(ctx: CheckContext) -> list[Finding]:
    """An uncited conclusion that uses the question's subject words together where no single
    retrieved article holds them together."""

    read = UnheldReader(ctx.articles, ctx.question, ctx.frame)
    findings: list[Finding] = []
    words: list[str] = []
    for sentence in ctx.draft.sentences:
        written = read(sentence.text)
        if written is None:
            continue
        words.extend(word for word in written if word not in words)
        said = all_of(written)
        findings.append(
            Finding(
                "unsupported-conclusions", "drop", unsupported_line(said), (), sentence.index,
                sentence.text, data={TOGETHER: unsupported_line(said, "{n}")},
            )
        )  # fmt: skip
    if findings:
        get_logger("agent.unsupported").warning(
            "answer_unsupported_dropped", sentences=len(findings)
        )
    left = apply(ctx.draft, findings).text  # what the notes hold the words to
    told = warnings_of(findings)
    ctx.data["unsupported-conclusions"] = Unsupported(left, told, words, read.spoken)
    return findings
