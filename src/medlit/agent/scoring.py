"""Evidence scoring (seed 001, ``score``): how good is what we hold for this question?

Each chunk gets a score from four parts:

- **relevance**: cosine similarity of the chunk to the standalone question (the main term);
- **recency**: ``0.5 ** (age / half_life)``; an unknown year counts as neutral (0.5);
- **study type**: the publication types' evidence level (meta-analysis and systematic review >
  RCT > other trials > observational > case report > other), scaled to 0..1;
- **diversity**: a bonus for the best chunk of each article, so that the chunks chosen for the
  answer spread over articles instead of quoting one abstract eight times.

Recency and study type modulate relevance (a factor around 1) instead of being added to it:
an irrelevant meta-analysis from this year must not outrank a relevant cohort study. A
document's score is its best chunk's; ``retrieval_score`` is the mean of the best
``min_docs`` document scores (missing documents count as zero, so thin evidence scores low);
the evidence is ``confident``
when at least ``min_docs`` distinct articles clear ``min_relevance``, or when one chunk is so
close to the question (``direct_match_similarity``) that its article studied exactly this
question (its evidence may still be thin, which the answer must say).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from medlit.config import AgentSettings
from medlit.types import Article, Evidence, StudyType

__all__ = ["ScoreReport", "chunk_score", "recency_score", "score_evidence", "study_type_score"]


def recency_score(
    year: int | None, *, half_life_years: float, now_year: int | None = None
) -> float:
    """1.0 for this year's work, halving every ``half_life_years``; 0.5 when the year is unknown."""
    if year is None:
        return 0.5
    current = now_year or _dt.date.today().year
    age = max(0, current - year)
    return float(0.5 ** (age / half_life_years))


def study_type_score(article: Article) -> float:
    """Evidence level in 0..1 (systematic review / meta-analysis = 1, other = 0)."""
    return int(article.study_type) / int(StudyType.SYSTEMATIC_REVIEW)


def chunk_score(similarity: float, article: Article, settings: AgentSettings) -> float:
    """A chunk's score before the diversity bonus."""
    relevance = max(0.0, similarity)
    recency = recency_score(article.year, half_life_years=settings.recency_half_life_years)
    # Centred on a typical article (ten years old, observational), so that recency and design
    # move a score both ways instead of only penalising.
    modifier = (
        1.0
        + settings.recency_weight * (recency - 0.5)
        + settings.study_type_weight * (study_type_score(article) - 0.4)
    )
    return relevance * modifier


@dataclass
class ScoreReport:
    """The outcome of scoring one set of evidence."""

    evidence: list[Evidence] = field(default_factory=list)  # best first, at most top_k
    doc_scores: dict[str, float] = field(default_factory=dict)  # article key -> best chunk
    retrieval_score: float = 0.0
    num_docs: int = 0  # distinct articles clearing min_relevance
    confident: bool = False
    excluded: dict[str, str] = field(default_factory=dict)  # article key -> why not evidence


def score_evidence(candidates: list[Evidence], settings: AgentSettings) -> ScoreReport:
    """Score chunks for one question and pick the ones the answer will use.

    Args:
        candidates: chunks with their cosine ``similarity`` to the question (any order, any
            number; duplicates of the same chunk are ignored after the first).
        settings: weights, ``top_k``, ``min_docs`` and ``min_relevance``.

    Returns:
        The report: chosen evidence (best first, with ``score`` filled), per-document scores,
        ``retrieval_score``, ``num_docs`` and ``confident``.
    """
    seen: set[str] = set()
    base: list[tuple[float, Evidence]] = []
    excluded: dict[str, str] = {}
    for item in candidates:
        if item.chunk.id in seen:
            continue
        seen.add(item.chunk.id)
        if item.article.retraction is not None:  # PubMed marks it retracted: never evidence
            excluded[item.article.key] = item.article.retraction
            continue
        base.append((chunk_score(item.similarity, item.article, settings), item))
    base.sort(key=lambda pair: (-pair[0], pair[1].chunk.id))

    doc_scores: dict[str, float] = {}
    relevant_docs: set[str] = set()
    scored: list[Evidence] = []
    for value, item in base:
        key = item.article.key
        bonus = 0.0
        if key not in doc_scores:
            doc_scores[key] = value
            bonus = settings.diversity_bonus
        if item.similarity >= settings.min_relevance:
            relevant_docs.add(key)
        scored.append(item.model_copy(update={"score": round(value + bonus, 6)}))
    scored.sort(key=lambda ev: (-ev.score, ev.chunk.id))

    best_docs = sorted(doc_scores.values(), reverse=True)[: settings.min_docs]
    retrieval = sum(best_docs) / settings.min_docs if best_docs else 0.0
    num_docs = len(relevant_docs)
    best = max((item.similarity for _, item in base), default=0.0)
    return ScoreReport(
        evidence=[ev for ev in scored if ev.similarity >= settings.min_evidence_similarity][
            : settings.top_k
        ],
        doc_scores={k: round(v, 6) for k, v in doc_scores.items()},
        retrieval_score=round(retrieval, 6),
        num_docs=num_docs,
        confident=num_docs >= settings.min_docs or best >= settings.direct_match_similarity,
        excluded=excluded,
    )
