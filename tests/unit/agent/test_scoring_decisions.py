"""Scoring and stop rules of the ask loop (pure functions, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from medlit.agent.decisions import decide, decision_message, is_stagnant, should_cache
from medlit.agent.scoring import recency_score, score_evidence
from medlit.agent.state import AgentState, Decision, StopReason, initial_state
from medlit.config import AgentSettings, CacheSettings
from medlit.types import Article, Chunk, Citation, Evidence, VerdictCause


def _ev(
    pmid: str,
    ordinal: int,
    similarity: float,
    *,
    year: int | None = 2020,
    types: list[str] | None = None,
) -> Evidence:
    article = Article(pmid=pmid, title=f"Study {pmid}", year=year, publication_types=types or [])
    chunk = Chunk(
        id=f"{article.key}#{ordinal}",
        article_key=article.key,
        ordinal=ordinal,
        text=f"text {pmid} {ordinal}",
    )
    return Evidence(chunk=chunk, article=article, similarity=similarity)


def test_recency_halves_every_half_life() -> None:
    assert recency_score(2020, half_life_years=10, now_year=2020) == 1.0
    assert abs(recency_score(2010, half_life_years=10, now_year=2020) - 0.5) < 1e-9
    assert recency_score(None, half_life_years=10) == 0.5


def test_study_type_orders_equal_relevance() -> None:
    settings = AgentSettings()
    meta = _ev("1", 1, 0.7, types=["Meta-Analysis"])
    rct = _ev("2", 1, 0.7, types=["Randomized Controlled Trial"])
    cohort = _ev("3", 1, 0.7, types=["Observational Study"])
    case = _ev("4", 1, 0.7, types=["Case Reports"])
    report = score_evidence([case, cohort, rct, meta], settings)
    order = [ev.article.pmid for ev in report.evidence]
    assert order == ["1", "2", "3", "4"]


def test_relevance_dominates_study_type() -> None:
    settings = AgentSettings()
    irrelevant_meta = _ev("1", 1, 0.2, types=["Systematic Review"])
    relevant_case = _ev("2", 1, 0.7, types=["Case Reports"])
    report = score_evidence([irrelevant_meta, relevant_case], settings)
    assert report.evidence[0].article.pmid == "2"


def test_diversity_bonus_spreads_evidence_over_articles() -> None:
    settings = AgentSettings(top_k=2, diversity_bonus=0.05)
    a1 = _ev("1", 1, 0.70)
    a2 = _ev("1", 2, 0.69)
    b1 = _ev("2", 1, 0.68)
    report = score_evidence([a1, a2, b1], settings)
    assert [ev.chunk.id for ev in report.evidence] == ["pmid:1#1", "pmid:2#1"]


def test_retrieval_score_confident_and_thin_evidence() -> None:
    settings = AgentSettings(min_docs=3, min_relevance=0.5)
    strong = [_ev(str(i), 1, 0.8, year=None) for i in range(3)]
    report = score_evidence(strong, settings)
    assert report.confident and report.num_docs == 3
    assert set(report.doc_scores) == {"pmid:0", "pmid:1", "pmid:2"}
    thin = score_evidence(strong[:1], settings)
    # One document out of the three needed: the score is a third of a full set's.
    assert not thin.confident
    assert abs(thin.retrieval_score - report.retrieval_score / 3) < 1e-6
    assert score_evidence([], settings).retrieval_score == 0.0


def _state(**fields: object) -> AgentState:
    state = initial_state("Does aspirin prevent stroke?")
    state.update(fields)  # type: ignore[typeddict-item]
    return state


def test_stop_on_threshold_only_when_confident() -> None:
    settings = AgentSettings(score_threshold=0.5)
    on = _state(retrieval_score=0.6, confident=True, on_subject=1)
    assert decide(on, settings).stop_reason == "threshold"
    assert decide(_state(retrieval_score=0.6, confident=False), settings).decision == "fetch_more"


def test_no_threshold_stop_on_evidence_about_something_else() -> None:
    # Stored articles scoring high for a question, none of them about its subject (chunks
    # kept from other questions), do not stop the search before PubMed is asked.
    settings = AgentSettings(score_threshold=0.5)
    off = _state(retrieval_score=0.9, confident=True, on_subject=0)
    assert decide(off, settings).decision == "fetch_more"


def test_stop_on_limits() -> None:
    settings = AgentSettings(max_iterations=2, max_api_calls=5)
    ev = [_ev("1", 1, 0.3)]
    state = _state(iteration=2, evidence=ev, last_fetch_count=20, last_fetch_new=5)
    assert decide(state, settings).stop_reason == "max_iterations"
    state = _state(iteration=1, api_calls=5, evidence=ev, last_fetch_count=20, last_fetch_new=5)
    assert decide(state, settings).stop_reason == "max_api_calls"


def test_stagnation() -> None:
    assert not is_stagnant([0.3, 0.31], rounds=2, min_gain=0.01)
    assert is_stagnant([0.3, 0.305, 0.309], rounds=2, min_gain=0.01)
    assert not is_stagnant([0.3, 0.305, 0.32], rounds=2, min_gain=0.01)
    settings = AgentSettings(max_iterations=10, stagnation_rounds=2)
    state = _state(
        iteration=2,
        evidence=[_ev("1", 1, 0.3)],
        prev_retrieval_scores=[0.3, 0.3, 0.3],
        last_fetch_count=20,
        last_fetch_new=3,
    )
    assert decide(state, settings).stop_reason == "stagnation"


def test_no_results_after_broad_query_never_loops() -> None:
    settings = AgentSettings(max_iterations=10)
    narrow_empty = _state(iteration=1, last_fetch_count=0, last_fetch_new=0, query_mode="narrow")
    assert decide(narrow_empty, settings).decision == "fetch_more"  # try the broad query once
    broad_empty = _state(iteration=2, last_fetch_count=0, last_fetch_new=0, query_mode="broad")
    assert decide(broad_empty, settings).stop_reason == "no_results"


def test_exhausted_when_broad_query_brings_nothing_new() -> None:
    settings = AgentSettings(max_iterations=10)
    state = _state(
        iteration=2,
        evidence=[_ev("1", 1, 0.3)],
        last_fetch_count=4,
        last_fetch_new=0,
        query_mode="broad",
        prev_retrieval_scores=[0.1, 0.3],
    )
    assert decide(state, settings).stop_reason == "exhausted"


def test_first_round_fetches_when_tier2_is_empty() -> None:
    assert decide(_state(), AgentSettings()).decision == "fetch_more"


def _answered(**fields: object) -> AgentState:
    cite = Citation(pmid="11", title="t")
    base: dict[str, object] = dict(
        final_answer="Yes [PMID:11].",
        citations=[cite],
        confident=True,
        retrieval_score=0.7,
        stop_reason="threshold",
    )
    base.update(fields)
    return _state(**base)


def test_should_cache_admits_confident_cited_answer() -> None:
    verdict = should_cache(_answered(), AgentSettings(), CacheSettings(), retrieved_pmids=["11"])
    assert verdict.admit and verdict.reason == "ok"


def test_should_cache_refusals() -> None:
    agent, cache = AgentSettings(), CacheSettings(min_score=0.45)
    cases = {
        "not_confident": _answered(confident=False),
        "low_score": _answered(retrieval_score=0.2),
        "no_citations": _answered(citations=[]),
        "invented_citations": _answered(removed_citations=["999"]),
        "sentences_left_out": _answered(left_out=1),
        "no_answer": _answered(stop_reason="no_results"),
        "already_cached": _answered(cache_hit=True),
        "cache_disabled": _answered(use_cache=False),
    }
    for reason, state in cases.items():
        verdict = should_cache(state, agent, cache, retrieved_pmids=["11"])
        assert not verdict.admit and verdict.reason == reason
    outside = should_cache(_answered(), agent, cache, retrieved_pmids=["12"])
    assert outside.reason == "citation_not_in_evidence"


#: A question one article answers, and that article (its retrieval score, alone: 0.32).
ONE_ARTICLE = "Is oral contraceptive use associated with colorectal cancer risk in women?"


def _one_article(title: str, **fields: object) -> AgentState:
    """An answer citing article 11 (``title``) alone, its evidence confident (one article
    studied this question) but scoring 0.32, the mean over ``min_docs`` articles."""
    from medlit.words.frame import read_frame

    article = Article(pmid="11", title=title)
    base: dict[str, object] = dict(
        frame=read_frame(ONE_ARTICLE),
        documents={article.key: article},
        retrieval_score=0.32,
    )
    base.update(fields)
    return _answered(**base)


ABOUT = "Oral contraceptive use and the risk of colorectal cancer in women"


def test_an_answer_from_the_one_article_about_the_question_is_admitted() -> None:
    agent, cache = AgentSettings(), CacheSettings(min_score=0.45, subject_min_score=0.3)
    for confident in (True, False):
        state = _one_article(ABOUT, confident=confident)
        verdict = should_cache(state, agent, cache, retrieved_pmids=["11"])
        assert verdict.admit and verdict.path == "subject"
    # Enough articles clear the confident bar as before.
    assert should_cache(_answered(), agent, cache, retrieved_pmids=["11"]).path == "confident"


@pytest.mark.parametrize(
    ("title", "fields", "cache", "reason"),
    [
        # the one article is about the subject but not the outcome, or about neither
        ("Oral contraceptive use and breast density in women", {}, {}, "low_score"),
        ("Endometrial polyps in premenopausal women", {"confident": False}, {}, "not_confident"),
        # the score under the subject bar's floor, or the bar off
        (ABOUT, {"retrieval_score": 0.2}, {}, "low_score"),
        (ABOUT, {}, {"subject_min_score": None}, "low_score"),
        (ABOUT, {"confident": False}, {"subject_min_score": None}, "not_confident"),
        # checked answers that lost what their verdict rested on, or had nothing to rest on
        (ABOUT, {"verdict_cause": VerdictCause(kind="check", check="x")}, {},
         "verdict_support_dropped"),
        (ABOUT, {"verdict_cause": VerdictCause(kind="no_evidence")}, {}, "no_evidence"),
        (ABOUT, {"left_out": 1}, {}, "sentences_left_out"),
        (ABOUT, {"removed_citations": ["999"]}, {}, "invented_citations"),
        (ABOUT, {"frame": None}, {}, "low_score"),
    ],
)  # fmt: skip
def test_one_article_that_does_not_answer_it_is_kept_out(
    title: str, fields: dict[str, object], cache: dict[str, object], reason: str
) -> None:
    settings = CacheSettings.model_validate({"min_score": 0.45, "subject_min_score": 0.3, **cache})
    verdict = should_cache(
        _one_article(title, **fields), AgentSettings(), settings, retrieved_pmids=["11"]
    )
    assert not verdict.admit and verdict.reason == reason and verdict.path is None


#: The one article that answers it, wording its subject otherwise than the question.
WORDED_OTHERWISE = "Hormonal contraception and bowel neoplasms in premenopausal patients"


def test_one_article_its_checks_left_standing_is_admitted() -> None:
    cache = CacheSettings(min_score=0.45, subject_min_score=0.25)
    stood = _one_article(WORDED_OTHERWISE, verdict="yes", confident=False)
    verdict = should_cache(stood, AgentSettings(), cache, retrieved_pmids=["11"])
    assert verdict.admit and verdict.path == "subject"


@pytest.mark.parametrize(
    "fields",
    [
        {"verdict": "uncertain"},  # no yes or no
        {"verdict": None},
        {"verdict": "yes", "drafted_verdict": "no"},  # a check turned the model's verdict
        {"verdict": "yes", "retrieval_score": 0.2},  # under the floor
        # two articles: the one article that answers it is not known
        {"verdict": "yes", "citations": [Citation(pmid=p, title="t") for p in ("11", "12")]},
    ],
)
def test_one_article_answer_its_checks_changed_is_kept_out(fields: dict[str, object]) -> None:
    cache = CacheSettings(min_score=0.45, subject_min_score=0.25)
    state = _one_article(WORDED_OTHERWISE, confident=False, **fields)
    verdict = should_cache(state, AgentSettings(), cache, retrieved_pmids=["11", "12"])
    assert not verdict.admit


def test_a_direct_match_is_confident_alone() -> None:
    settings = AgentSettings(min_docs=3, direct_match_similarity=0.85)
    report = score_evidence([_ev("1", 0, 0.97)], settings)
    assert report.confident and report.num_docs == 1


@pytest.mark.parametrize(
    ("state", "decision", "reason", "told"),
    [
        ({}, "fetch_more", None, "no stored evidence answers it yet: searching"),
        ({"evidence": [object()], "num_docs": 2}, "fetch_more", None,
         "not enough evidence yet (2 articles): searching further"),
        ({"evidence": [object()], "num_docs": 1}, "stop", "stagnation",
         "further searches added nothing better: answering from 1 article"),
        ({}, "stop", "no_results", "no evidence found"),
        ({}, "stop", "cache_hit", None),
    ],
)  # fmt: skip
def test_the_decision_says_what_it_decided(
    state: dict[str, Any], decision: Decision, reason: StopReason | None, told: str | None
) -> None:
    assert decision_message(state, decision, reason) == told  # type: ignore[arg-type]


def test_the_articles_about_the_subject_are_counted_by_the_frame() -> None:
    from medlit.agent.query import about_subject
    from medlit.words.frame import read_frame

    frame = read_frame("Is a D-dimer blood test useful for diagnosing appendicitis?")
    about = Article(pmid="1", title="D-dimer levels in acute appendicitis")
    other = Article(pmid="2", title="Clinical assessment is the key to diagnose appendicitis")
    assert about_subject(frame, [about, other]) == 1
    assert about_subject(frame, [other]) == 0


def test_the_articles_naming_the_question_are_counted_by_the_frame() -> None:
    """An article names the question when it names its subject and its outcome, each in one
    of its forms or by a word of it rare in English (not by every word the question uses)."""
    from medlit.agent.query import names_question
    from medlit.words.frame import read_frame

    frame = read_frame(
        "Does dobutamine stress testing cause myocardial injury detectable as a troponin rise?"
    )
    named = Article(pmid="1", title="Can dobutamine stress echocardiography raise troponin?")
    subject_only = Article(pmid="2", title="Dobutamine stress echocardiography in the elderly")
    assert names_question(frame, [named, subject_only]) == 1
    assert names_question(frame, [subject_only]) == 0
