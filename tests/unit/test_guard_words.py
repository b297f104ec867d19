"""The cache guard's word-by-word rule: a hit only when every differing word is accounted for.

The tune part of the contrast set (benchmarks/data/cache_contrast.csv, made by
benchmarks/make_cache_contrast.py from tune-half PubMedQA titles, MQP questions and the issue's
examples) is checked through the guard and through the real answer cache lookup (real embedder,
SQLite store, default tau). Its check-half parts are measured by benchmarks/cache_contrast.py,
never held here: a rule may be written from tune-half cases only.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medlit.cache import AnswerCache, CachedAnswer
from medlit.cache.guard import QuestionGuard
from medlit.cache.wording import function_words, spelling, word_difference, wording
from medlit.config import CacheSettings
from medlit.embeddings.memo import MemoEmbedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.storage.sqlite import SqliteStore
from medlit.types import Citation
from tests.guard_cases import BREAST, NEAR

CONTRAST = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "cache_contrast.csv"


def _contrast() -> list[dict[str, str]]:
    """The contrast set's tune part."""
    with CONTRAST.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["part"] == "tune"]


@pytest.mark.parametrize(
    ("asked", "reason"),
    [*NEAR, (BREAST.replace("Does", "Doesn't"), "only in one question: not")],
)
def test_the_issue_examples_are_refused_with_the_words(asked: str, reason: str) -> None:
    verdict = QuestionGuard().check(asked, BREAST)
    assert not verdict.ok and verdict.reason == reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Is ischemic stroke more common in women?", "Is ischaemic stroke more common in women?"),
        (
            "Does a familiarization session improve walking tests?",
            "Does a familiarisation session improve walking tests?",
        ),
        ("Is sleep apnea linked to obesity?", "Is sleep apnoea associated with obesity?"),
        ("Do tumours recur in children?", "Does a tumor recur in a child?"),
        ("Are randomised trials of oedema reliable?", "Are randomized trials of edema reliable?"),
        ("Does paracetamol reduce fever in kids?", "Does acetaminophen decrease pyrexia in kids?"),
        ("Do heart attacks kill women?", "Does myocardial infarction kill women?"),
        ("Is follow-up imaging needed?", "Is followup imaging needed?"),
        ("Does the drug help in the elderly?", "Can the drug help in the elderly?"),
        ("In adults, does aspirin prevent stroke?", "Does aspirin prevent stroke in adults?"),
        ("Is there evidence that statins prevent stroke?", "Do statins prevent stroke?"),
        (
            "In older adults, is aspirin safe for stroke prevention?",
            "Is aspirin safe for stroke prevention in older adults?",
        ),
        ("Can metronidazole cream be used vaginally?", "Can I use metronidazole cream vaginally?"),
        (
            "Is the delivery of adjuvant chemotherapy compromised by immediate breast "
            "reconstruction?",
            BREAST,
        ),
    ],
)
def test_spelling_inflection_synonyms_framing_and_order_still_hit(a: str, b: str) -> None:
    assert QuestionGuard().check(a, b).ok
    assert QuestionGuard().check(b, a).ok


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Does aspirin prevent stroke?", "Does aspirin not prevent stroke?"),
        ("Is 5 mg of melatonin safe?", "Is 10 mg of melatonin safe?"),
        ("Is COX-2 inhibition safe?", "Is COX-1 inhibition safe?"),
        ("Is it safe for him to take ibuprofen?", "Is it safe for her to take ibuprofen?"),
        ("Is surgery better before radiotherapy?", "Is surgery better after radiotherapy?"),
        ("Is the older drug safer?", "Is the old drug safer?"),  # adjectives as written
        ("What causes psoriasis?", "How is psoriasis treated?"),
        ("Is A or B effective?", "Is A and B effective?"),
    ],
)
def test_what_is_never_a_function_word_refuses(a: str, b: str) -> None:
    assert not QuestionGuard().check(a, b).ok
    assert not QuestionGuard().check(b, a).ok


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        (
            "Is surgery better than radiotherapy?",
            "Is radiotherapy better than surgery?",
            "differs in order: than radiotherapy / than surgery",
        ),
        (
            "What is the effect of smoking on pregnancy?",
            "What is the effect of pregnancy on smoking?",
            "differs in order: of smoking / of pregnancy",
        ),
        (
            "Does obesity cause depression?",
            "Does depression cause obesity?",
            "differs in order: obesity cause depression / depression cause obesity",
        ),
        (
            "What is cervical cancer a risk factor for?",
            "What are the risk factors for cervical cancer?",
            "differs in order: for (end) / for cervical",
        ),
    ],
)
def test_the_same_words_in_other_roles_refuse(a: str, b: str, reason: str) -> None:
    assert QuestionGuard().check(a, b).reason == reason
    assert not QuestionGuard().check(b, a).ok


def test_the_vocabularies_load_from_the_package() -> None:
    words = function_words()
    assert {"the", "does", "whether"} <= words
    assert words.isdisjoint({"not", "no", "without", "before", "after", "over", "than", "more"})
    assert spelling("ischaemic") == spelling("ischemic")
    assert spelling("familiarisation") == spelling("familiarization")
    assert spelling("shoe") != spelling("she") and spelling("toes") == "toes"


def test_words_are_read_as_typed_and_cached() -> None:
    assert wording("Is Sjögren’s syndrome inherited?") is wording(
        "Is Sjögren’s syndrome inherited?"
    )
    assert not word_difference(
        "Is Sjögren’s syndrome inherited?", "is sjogren's syndrome inherited?"
    )


def test_the_same_words_need_no_lemma(monkeypatch: pytest.MonkeyPatch) -> None:
    # Case, typing and spelling aside, the same words in the same order and roles: no lemma
    # (the lemmatiser's table takes most of a fresh process's time to load).
    import medlit.cache.wording as wording_module

    def no_lemmas(word: str) -> frozenset[str]:
        raise AssertionError(f"lemmas({word!r}) looked up")

    monkeypatch.setattr(wording_module, "lemmas", no_lemmas)
    wording_module._keys.cache_clear()
    same = (
        "Does ischaemic stroke recur in older adults?",
        "does ischemic stroke recur in older adults",
    )
    assert not word_difference(*same)
    assert QuestionGuard().check(*same).ok
    # Other words, or the same words in other roles, still compare by lemma.
    for pair in (
        (
            "Does ischaemic stroke recur in older adults?",
            "Do ischemic strokes recur in older adults?",
        ),
        ("Is aspirin better than clopidogrel?", "Is clopidogrel better than aspirin?"),
    ):
        with pytest.raises(AssertionError, match="looked up"):
            word_difference(*pair)


def test_the_contrast_sets_tune_part_through_the_guard() -> None:
    rows = _contrast()
    edits = [r for r in rows if r["group"] == "edit"]
    rewordings = [r for r in rows if r["group"] == "reword"]
    assert len(edits) >= 150 and len(rewordings) >= 80
    kinds = {r["kind"] for r in edits}
    assert kinds == {
        "direction", "population", "timing", "intervention", "outcome", "site", "actor",
        "comparison",
    }  # fmt: skip
    guard = QuestionGuard()
    wrong = [r for r in edits if guard.check(r["asked"], r["cached"]).ok]
    assert wrong == []
    for r in edits:  # each refusal names a word of one of the two questions
        reason = guard.check(r["asked"], r["cached"]).reason
        assert reason is not None and reason.startswith(("differs: ", "only in one question: "))
    # Plain rewordings differ by a word pair the vetted table does not hold ("elderly" /
    # "older"): the guard alone refuses them; a judged or approved pair serves them
    # (tests/unit/test_word_pairs.py). Every other rewording, phrase forms included, passes.
    missed = [
        r
        for r in rewordings
        if r["kind"] != "plain" and not guard.check(r["asked"], r["cached"]).ok
    ]
    assert missed == []
    plain = [r for r in rewordings if r["kind"] == "plain"]
    assert sum(not guard.check(r["asked"], r["cached"]).ok for r in plain) >= 20


@pytest.fixture(scope="module")
def embedder() -> MemoEmbedder:
    return MemoEmbedder(OnnxEmbedder())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "c.sqlite3") as s:
        yield s


@pytest.mark.slow
def test_the_contrast_sets_tune_part_through_the_answer_cache(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    """Embedding, tau and guard as a lookup runs them: no edit is served."""
    rows = _contrast()
    texts = sorted({q for r in rows for q in (r["cached"], r["asked"])})
    vectors = dict(zip(texts, np.asarray(embedder.embed(texts), dtype=np.float32), strict=True))
    cache = AnswerCache(store, CacheSettings(flush_interval_s=3600))
    payload = CachedAnswer(
        answer="Cached [1].", citations=[Citation(pmid="1", title="T")], retrieval_score=1.0
    )
    served: dict[str, list[dict[str, str]]] = {"edit": [], "reword": []}
    refused_at_tau = 0
    for i, r in enumerate(rows):
        ns = f"row-{i}"
        cache.add_query(r["cached"], vectors[r["cached"]], payload, namespace=ns, fingerprint="f")
        found = cache.search_query(r["asked"], vectors[r["asked"]], namespace=ns, fingerprint="f")
        if found.hit:
            served[r["group"]].append(r)
        elif found.miss_reason == "guard_rejected":
            refused_at_tau += 1
            assert found.guard_reason
        cache.clear(ns)
    assert served["edit"] == []
    edits = sum(r["group"] == "edit" for r in rows)
    assert refused_at_tau >= 0.6 * edits  # most edits are near enough for cosine alone to serve
    # Rewordings by spelling, inflection, a vetted synonym or a phrase form that reach tau are
    # served.
    reached = [
        r
        for r in rows
        if r["group"] == "reword"
        and r["kind"] in ("spelling", "inflection", "synonym", "form")
        and float(vectors[r["cached"]] @ vectors[r["asked"]]) >= cache.settings.tau
    ]
    assert len(reached) >= 80
    assert all(r in served["reword"] for r in reached)


@pytest.mark.slow
def test_the_issues_rewordings_are_served_through_the_answer_cache(
    store: SqliteStore, embedder: MemoEmbedder
) -> None:
    """Phrase forms, no judge: the issue's rewordings (constructed examples) are served."""
    pairs = [
        ("Is vitamin D deficiency common among elderly nursing home residents?",
         "Is vitamin D deficiency common in older nursing home residents?"),
        ("Does exercise lower blood pressure in adults with hypertension?",
         "Does exercise reduce blood pressure in adults with hypertension?"),
        ("Do statins prevent dementia in diabetes patients?",
         "Do statins prevent dementia in patients with diabetes?"),
        ("Is obesity associated with greater risk of knee osteoarthritis?",
         "Is obesity associated with increased risk of knee osteoarthritis?"),
    ]  # fmt: skip
    cache = AnswerCache(store, CacheSettings(flush_interval_s=3600))
    payload = CachedAnswer(
        answer="Cached [1].", citations=[Citation(pmid="1", title="T")], retrieval_score=1.0
    )
    for i, (cached, asked) in enumerate(pairs):
        vectors = np.asarray(embedder.embed([cached, asked]), dtype=np.float32)
        cache.add_query(cached, vectors[0], payload, namespace=f"n{i}", fingerprint="f")
        found = cache.search_query(asked, vectors[1], namespace=f"n{i}", fingerprint="f")
        assert found.hit and found.word_pair is None, (asked, found.guard_reason)
