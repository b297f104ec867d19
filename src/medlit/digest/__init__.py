"""The evidence digest: the answer when no language model is configured (or none is usable).

``build_evidence_digest`` picks the sentences of the retrieved abstracts most relevant to the
question (conclusions first), each followed by its citation ``[PMID:12345678]``, and labels the
result as a digest, not a generated answer. For a yes/no question it adds a cautious reading of
the conclusions (:mod:`medlit.words.stance`) only when the cues are clear and agree; otherwise
``uncertain``. Only the conclusions of articles that say at least half the question's words
(:data:`medlit.words.conclusions.ON_QUESTION`) lean it. Every sentence is quoted from evidence
actually retrieved, so every citation is real. This is what a fresh install answers with
before the user configures a model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from medlit.checks import unspoken_in
from medlit.text import all_of, either_of, split_sentences
from medlit.types import Article, Evidence, StudyType, VerdictCause
from medlit.words.conclusions import (
    ON_QUESTION,
    about_question,
    conclusion_sentences,
    states_aim,
    states_no_finding,
)
from medlit.words.defined_terms import long_forms
from medlit.words.frame import QuestionFrame, frame_of
from medlit.words.grounding import said_in, word_stems
from medlit.words.search_plan import speaks_of
from medlit.words.stance import (
    SourceStance,
    Stance,
    Verdict,
    content_terms,
    opposite_of_asked,
    sentence_stance,
    speaks_elsewhere,
    states_no_change,
    verdict_rule,
    whole_study,
)
from medlit.words.tokens import ASCII_WORDS, TERMS
from medlit.words.topics import anchor_terms, normalise_topic

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DIGEST_HEADER",
    "NO_MODEL",
    "ON_QUESTION",
    "Digest",
    "DigestSentence",
    "about_question",
    "build_evidence_digest",
    "conclusion_sentences",
    "not_about",
    "rank_sentences",
    "split_sentences",
    "states_aim",
    "states_no_finding",
]

#: Why a digest answers when none is said: the usual reason.
NO_MODEL = "no language model configured"
DIGEST_HEADER = (
    "Evidence digest ({why}): the most relevant sentences from the retrieved abstracts, quoted "
    "as written. This is not a generated answer."
)


class _Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


EmbedderLike = _Embedder | Callable[[Sequence[str]], "np.ndarray"]
"""An ``Embedder`` (``.embed(texts)``) or a plain function; rows must be L2-normalised."""

_LABEL_PREFIX = re.compile(r"^(?:[A-Z][A-Z /&-]{2,40}):\s+")
_MIN_WORDS = 5
_CONCLUSION_BONUS = 0.15
# What a section says about the answer: results are findings; background, aims and methods
# are not (an objective restates the question, which reads as relevant but answers nothing).
_SECTION_WEIGHT = {
    "RESULTS": 0.05,
    "FINDINGS": 0.05,
    "BACKGROUND": -0.15,
    "INTRODUCTION": -0.15,
    "OBJECTIVE": -0.15,
    "OBJECTIVES": -0.15,
    "PURPOSE": -0.15,
    "AIM": -0.15,
    "AIMS": -0.15,
    "METHODS": -0.15,
    "DESIGN": -0.15,
}
_ARTICLE_SCORE_WEIGHT = 0.10
_DUPLICATE_JACCARD = 0.8
_DUPLICATE_COSINE = 0.92
# all-MiniLM cosine below which a sentence is taken as off-topic (lexical: no shared word).
_RELEVANT_COSINE = 0.25


@dataclass(frozen=True)
class DigestSentence:
    """One quoted sentence of the digest."""

    text: str
    citation: str
    article_key: str
    pmid: str | None
    relevance: float
    is_conclusion: bool


@dataclass(frozen=True)
class Digest:
    """An extractive answer.

    Attributes:
        text: the digest, ready to print (header, optional leaning, cited sentences).
        verdict: ``yes``/``no``/``uncertain`` for a yes/no question, else ``None``.
        verdict_reason: why that verdict (or why none), in words.
        pmids: PMIDs cited, in order of first appearance.
        sentences: the quoted sentences, in the order printed.
        verdict_rule: the id of the policy's rule that decided the verdict
            (:func:`medlit.words.stance.verdict_rule`; "off-question" and
            "population-unspoken" are the digest's own).
    """

    text: str
    verdict: Verdict | None
    verdict_reason: str
    pmids: list[str] = field(default_factory=list)
    sentences: list[DigestSentence] = field(default_factory=list)
    verdict_rule: str = ""

    @property
    def cause(self) -> VerdictCause | None:
        """Why the verdict is Uncertain (None unless it is): no evidence when nothing was
        quoted, else the policy's rule."""
        if self.verdict != "uncertain":
            return None
        if not self.sentences:
            return VerdictCause(kind="no_evidence", detail="no evidence was retrieved to quote")
        return VerdictCause(kind="policy", rule=self.verdict_rule, detail=self.verdict_reason)


@dataclass(eq=False)
class _Candidate:
    text: str
    article: Article
    is_conclusion: bool
    article_score: float
    terms: set[str]
    section_weight: float = 0.0
    spelled: str = ""  # the long forms of its abbreviations, for ranking ("FM": fibromyalgia)
    relevance: float = 0.0
    vector: np.ndarray | None = None

    @property
    def rank(self) -> float:
        bonus = _CONCLUSION_BONUS if self.is_conclusion else self.section_weight
        return self.relevance + bonus + _ARTICLE_SCORE_WEIGHT * min(1.0, self.article_score)


def _citation(article: Article) -> str:
    if article.pmid:
        return f"PMID:{article.pmid}"
    if article.doi:
        return f"DOI:{article.doi}"
    return f"title:{article.title[:60]}"


def _gather(evidence: Sequence[Evidence]) -> list[_Candidate]:
    by_article: dict[str, tuple[Article, float, list[Evidence]]] = {}
    for item in evidence:
        key = item.article.key
        article, best, items = by_article.get(key, (item.article, item.score, []))
        items.append(item)
        by_article[key] = (article, max(best, item.score), items)
    seen: set[str] = set()
    candidates: list[_Candidate] = []

    def add(
        text: str, article: Article, is_conclusion: bool, score: float, section: str | None
    ) -> None:
        text = _LABEL_PREFIX.sub("", text.strip())
        norm = " ".join(ASCII_WORDS.findall(text.lower()))
        if len(text.split()) < _MIN_WORDS or text.endswith("?") or norm in seen:
            return
        seen.add(norm)
        if states_aim(text):
            return
        weight = _SECTION_WEIGHT.get((section or "").strip().upper().rstrip(":"), 0.0)
        spelled = long_forms(text, article)
        terms = content_terms(f"{text} {spelled}")
        candidates.append(
            _Candidate(text, article, is_conclusion, score, terms, weight, spelled=spelled)
        )

    for article, score, items in by_article.values():
        for sentence in conclusion_sentences(article):
            add(sentence, article, True, score, "CONCLUSIONS")
        for item in items:
            if item.chunk.ordinal == 0 and item.chunk.text.strip() == article.title.strip():
                continue  # the title chunk: a title is not a finding
            for sentence in split_sentences(item.chunk.text):
                add(sentence, article, item.chunk.is_conclusion, score, item.chunk.section)
    return candidates


def _score(question: str, candidates: list[_Candidate], embedder: EmbedderLike | None) -> float:
    """Set each candidate's relevance; return the relevance a sentence needs to count."""
    if not candidates:
        return 0.0
    if embedder is not None:
        embed = embedder.embed if hasattr(embedder, "embed") else embedder
        ranked = [f"{c.text} ({c.spelled})" if c.spelled else c.text for c in candidates]
        vectors = embed([question, *ranked])
        query = vectors[0]
        for candidate, vector in zip(candidates, vectors[1:], strict=True):
            candidate.vector = vector
            candidate.relevance = float(vector @ query)
        return _RELEVANT_COSINE
    q_terms = content_terms(question)
    for candidate in candidates:
        shared = len(q_terms & candidate.terms)
        if not shared or not q_terms:
            continue
        # Mostly: how much of the question the sentence covers; a little: how focused it is.
        candidate.relevance = 0.8 * shared / len(q_terms) + 0.2 * shared / math.sqrt(
            len(candidate.terms) * len(q_terms)
        )
    return 1e-9


def _is_duplicate(a: _Candidate, b: _Candidate) -> bool:
    if a.vector is not None and b.vector is not None:
        return float(a.vector @ b.vector) >= _DUPLICATE_COSINE
    union = a.terms | b.terms
    return bool(union) and len(a.terms & b.terms) / len(union) >= _DUPLICATE_JACCARD


def _select(
    candidates: list[_Candidate], max_sentences: int, per_article: int, floor: float
) -> list[_Candidate]:
    ranked = sorted(candidates, key=lambda c: c.rank, reverse=True)
    # Off-topic evidence is still quoted when nothing better exists, but never preferred.
    relevant = [c for c in ranked if c.relevance >= floor] or ranked
    chosen: list[_Candidate] = []
    per: dict[str, int] = {}

    def take(candidate: _Candidate) -> None:
        key = candidate.article.key
        if per.get(key, 0) >= per_article or any(_is_duplicate(candidate, c) for c in chosen):
            return
        chosen.append(candidate)
        per[key] = per.get(key, 0) + 1

    # First each article's best on-topic conclusion (up to half the digest): a conclusion says
    # what a study found in its authors' words, even when a results sentence shares more words.
    conclusion_slots = max(1, math.ceil(max_sentences / 2))
    for candidate in relevant:
        if len(chosen) >= conclusion_slots:
            break
        if (
            candidate.is_conclusion
            and candidate.relevance >= floor
            and not per.get(candidate.article.key)
        ):
            take(candidate)
    for candidate in relevant:
        if len(chosen) >= max_sentences:
            break
        if all(candidate is not c for c in chosen):
            take(candidate)
    # Conclusions first, each group by rank.
    return sorted(chosen, key=lambda c: (not c.is_conclusion, -c.rank))


def _asked_words(question: str) -> dict[str, str]:
    """The question's words (:func:`medlit.words.topics.anchor_terms`) in the order it
    writes them: topic key -> the word as written."""
    asked = {normalise_topic(word) for word in anchor_terms(question)}
    words: dict[str, str] = {}
    for word in TERMS.findall(question):
        key = normalise_topic(word)
        if key in asked:
            words.setdefault(key, word)
    return words


def not_about(question: str, articles: Sequence[Article], frame: QuestionFrame) -> str:
    """What none of ``articles`` is about, in words, or "" when they are about the question.

    The frame's subject, as it reads it ("oral contraceptive use"), when no article speaks
    of it; its subject and outcome together when none speaks of both
    (:func:`medlit.words.search_plan.speaks_of`). With no subject read, the question's first
    word (:func:`_asked_words`) is what it is about. Then, when none says
    :data:`ON_QUESTION` of the question's words (:func:`about_question`), those words
    together ("statins, muscle and pain together").
    """
    words = _asked_words(question)
    if not articles:
        return ""
    if frame.subject:
        if not any(speaks_of(frame, a.everything_said, ("subject",)) for a in articles):
            return frame.subject
        if frame.outcome and not any(speaks_of(frame, a.everything_said) for a in articles):
            return f"{frame.subject} and {frame.outcome} together"
    if not words:
        return ""
    said: set[str] = set()
    for article in articles:
        said |= word_stems(article.everything_said.lower())
    first_key, first_word = next(iter(words.items()))
    if not frame.subject and not said_in(first_key, said):
        return first_word
    if any(map(about_question(question), articles)):
        return ""
    return f"{all_of(list(words.values()))} together" if len(words) > 1 else first_word


def _source_stances(
    question: str,
    candidates: list[_Candidate],
    floor: float,
    on_question: Callable[[Article], bool],
) -> list[SourceStance]:
    per_article: dict[str, tuple[Article, list[tuple[str, Stance]]]] = {}
    for candidate in candidates:
        if not candidate.is_conclusion or candidate.relevance < floor:
            continue
        if candidate.article.key not in per_article and not on_question(candidate.article):
            continue
        stance = sentence_stance(candidate.text, question)
        if stance == "yes" and speaks_elsewhere(candidate.text, question):
            stance = None  # a change of something else: no lean (fail closed)
        article, read = per_article.setdefault(candidate.article.key, (candidate.article, []))
        if stance is not None:
            read.append((candidate.text, stance))
    sources = []
    for key, (article, read) in per_article.items():
        # The study's own finding answers, not a subgroup's set against it (a conclusion
        # would otherwise read "hedged").
        stances = {stance for _, stance in whole_study(read)}
        if not stances:
            continue
        combined: Stance = stances.pop() if len(stances) == 1 else "uncertain"
        strong = article.study_type >= StudyType.RCT
        opposite = combined == "uncertain" and all(
            opposite_of_asked(text, question) and not states_no_change(text)
            for text, stance in read
            if stance == "uncertain"
        )
        sources.append(SourceStance(key=key, stance=combined, strong=strong, opposite=opposite))
    return sources


def _population_unspoken(
    frame: QuestionFrame,
    unspoken: str,
    stances: list[SourceStance],
    candidates: list[_Candidate],
    verdict: str,
) -> tuple[str, str]:
    """Why a population the question names withholds the verdict, or "": none of the articles
    quoted speaks of it; or, for a yes or no, none of the articles whose conclusions it is
    read from does, though another article quoted does (a trial in wrist fractures says
    nothing of hip fractures beside a cohort of hip fractures that concluded nothing); and
    in the latter case the population, in words."""
    if unspoken:
        return f"none of the articles quoted speaks of {unspoken}", ""
    if verdict not in ("yes", "no"):
        return "", ""
    by_key = {c.article.key: c.article for c in candidates}
    behind = [by_key[s.key] for s in stances if s.stance == verdict and s.key in by_key]
    unbacked = either_of(unspoken_in(frame, behind))
    if not unbacked:
        return "", ""
    return f"none of the articles it is read from speaks of {unbacked}", unbacked


def _assembled(
    chosen: list[_Candidate],
    why: str,
    verdict: Verdict | None,
    reason: str,
    rule: str,
    missing: str,
    off_topic: bool,
    unspoken: str,
    unbacked: str,
) -> Digest:
    """The digest of the sentences ``chosen``, its verdict and the reasons said first."""
    sentences = [
        DigestSentence(
            text=c.text,
            citation=_citation(c.article),
            article_key=c.article.key,
            pmid=c.article.pmid,
            relevance=round(c.relevance, 4),
            is_conclusion=c.is_conclusion,
        )
        for c in chosen
    ]
    pmids: list[str] = []
    for s in sentences:
        if s.pmid and s.pmid not in pmids:
            pmids.append(s.pmid)
    text = _digest_text(
        why,
        sentences,
        verdict,
        reason,
        missing=missing,
        off_topic=off_topic,
        unspoken=unspoken,
        unbacked=unbacked if rule == "population-unspoken" else "",
    )
    return Digest(
        text=text,
        verdict=verdict,
        verdict_reason=reason,
        pmids=pmids,
        sentences=sentences,
        verdict_rule=rule,
    )


def build_evidence_digest(
    question: str,
    evidence: list[Evidence],
    *,
    embedder: EmbedderLike | None = None,
    max_sentences: int = 6,
    per_article: int = 2,
    min_sources: int = 2,
    why: str = NO_MODEL,
    unmentioned: Sequence[str] = (),
    frame: QuestionFrame | None = None,
) -> Digest:
    """The extractive answer to ``question`` from the retrieved ``evidence``.

    Args:
        question: the (standalone) question.
        evidence: scored chunks with their articles, as retrieved for this question.
        embedder: ranks sentences by cosine similarity; without one, by word overlap.
        max_sentences: sentences quoted at most.
        per_article: sentences quoted from one article at most (diversity).
        min_sources: agreeing sources a yes/no verdict needs (one systematic review or RCT
            is enough on its own).
        why: why no generated answer is given, for the header (by default, no model).
        unmentioned: the question's subject terms that no retrieved article says
            (:func:`medlit.words.unmentioned.unmentioned_terms`): the digest says so first, and
            a yes/no verdict is "uncertain", since the conclusions it would be read from are
            about something else.
        frame: the question's frame, as the ask read it (a caller without one, a test or a
            benchmark, has it read by :func:`medlit.words.frame.frame_of`). The populations
            it names (children, women, pregnancy, a condition, a setting) that no quoted
            article speaks of (the checks' :func:`unspoken_in`) are said first, and a yes/no
            verdict is then "uncertain", as the generated answer does.

    When no retrieved article is about the question (none says enough of its words, see
    :func:`about_question`, or a subject term is said by none), the digest says first what
    none of them is about, and its sentences stand under "Nearest evidence", never under
    "Conclusions".

    Returns:
        The digest: text, verdict (``None`` unless a yes/no question), cited PMIDs, sentences.
    """
    frame = frame_of(question if frame is None else frame)
    candidates = _gather(evidence)
    floor = _score(question, candidates, embedder)
    on_question = about_question(question)
    # Quoted from the articles about the question when there are any: conclusions of
    # articles on another subject are not listed beside those of the one about it.
    on_topic = [c for c in candidates if on_question(c.article)]
    about = on_topic or candidates
    chosen = _select(about, max_sentences, per_article, floor)

    # A conclusion counts toward the verdict only where its article speaks of the question's
    # subject and its outcome, as the frame reads them: not of another drug, site or disease.
    def counts(article: Article) -> bool:
        return on_question(article) and speaks_of(frame, article.everything_said)

    stances = _source_stances(question, candidates, floor, counts)
    verdict, reason, rule = verdict_rule(question, stances, min_sources=min_sources)
    missing = either_of(unmentioned)
    if chosen and not missing:
        held = list({c.article.key: c.article for c in candidates}.values())
        missing = not_about(question, held, frame)
    off_topic = bool(chosen and missing)
    if verdict is not None and missing:
        verdict, reason = "uncertain", f"none of the retrieved articles is about {missing}"
        rule = "off-question"
    quoted = list({c.article.key: c.article for c in chosen}.values())
    unspoken = either_of(unspoken_in(frame, quoted)) if quoted else ""
    unbacked = ""
    if verdict is not None and not off_topic:
        withheld, unbacked = _population_unspoken(frame, unspoken, stances, candidates, verdict)
        if withheld:
            verdict, reason, rule = "uncertain", withheld, "population-unspoken"

    return _assembled(chosen, why, verdict, reason, rule, missing, off_topic, unspoken, unbacked)


def rank_sentences(
    question: str, evidence: list[Evidence], *, embedder: EmbedderLike | None = None
) -> list[DigestSentence]:
    """Every sentence of ``evidence`` a digest of ``question`` would quote, uncapped, in its
    order (conclusions first, each group by rank), without the verdict and caveats a digest
    reads: what the answer prompt's evidence is cut by
    (:func:`medlit.agent.prompt.focus_blocks`)."""
    candidates = _gather(evidence)
    floor = _score(question, candidates, embedder)
    on_question = about_question(question)
    about = [c for c in candidates if on_question(c.article)] or candidates
    every = 10_000  # no cap
    return [
        DigestSentence(
            c.text,
            _citation(c.article),
            c.article.key,
            c.article.pmid,
            round(c.relevance, 4),
            c.is_conclusion,
        )
        for c in _select(about, every, every, floor)
    ]


def _digest_text(
    why: str,
    sentences: list[DigestSentence],
    verdict: Verdict | None,
    reason: str,
    *,
    missing: str,
    off_topic: bool,
    unspoken: str,
    unbacked: str = "",
) -> str:
    """The digest's text: header, what the articles are not about (``missing`` when
    ``off_topic``, else the ``unspoken`` populations, else the ``unbacked`` ones: those the
    articles the leaning is read from never speak of), the leaning, the quoted sentences."""
    lines = [DIGEST_HEADER.format(why=why), ""]
    if not sentences:
        lines.append("No evidence was retrieved for this question.")
    elif off_topic:
        lines += [
            f"None of the retrieved articles is about {missing}: the sentences below are the "
            "nearest evidence found, and may not answer the question.",
            "",
        ]
    elif unspoken:
        lines += [
            f"None of the articles quoted speaks of {unspoken}: what they found may not hold "
            f"for {unspoken}.",
            "",
        ]
    elif unbacked:
        lines += [
            f"None of the articles the leaning is read from speaks of {unbacked}: what they "
            f"found may not hold for {unbacked}.",
            "",
        ]
    if verdict is not None and sentences:
        leaning = verdict.capitalize()  # "Yes", as the verdict line and the page spell it
        # A yes or no is stated only by the default policy (two agreeing sources, or one
        # systematic review or RCT): right in every verdict it gave on the unseen half of
        # PubMedQA (benchmarks/digest_verdicts.py, turned_questions.py). One source's reading
        # is not (0.83 there): it is shown as a leaning, said not to be a verdict.
        kind = "a cue-based reading" if verdict != "uncertain" else "not a verdict"
        lines += [f"Leaning of the conclusions ({kind}): {leaning}: {reason}.", ""]
    conclusions = [s for s in sentences if s.is_conclusion]
    findings = [s for s in sentences if not s.is_conclusion]
    groups = (("Conclusions:", conclusions), ("Other findings:", findings))
    if off_topic:  # what articles about something else concluded is no conclusion here
        groups = (("Nearest evidence (not about the question):", sentences), ("", []))
    for title, group in groups:
        if group:
            lines.append(title)
            lines += [f"- {s.text} [{s.citation}]" for s in group]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
