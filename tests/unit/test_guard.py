"""QuestionGuard's related-question checks (check_related): the differences known to matter.

The cache's word-by-word rule (QuestionGuard.check) is tested in test_guard_words.py.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from medlit.cache.guard import QuestionGuard, question_features
from medlit.config import CacheSettings, Settings
from tests.conftest import shared_data_path


@pytest.fixture
def guard() -> QuestionGuard:
    return QuestionGuard(word_rule=False)


@pytest.mark.parametrize(
    ("new", "cached", "reason"),
    [
        (
            "Can I take ibuprofen for a tension headache?",
            "Can I take Tylenol for a tension headache?",
            "different drug: ibuprofen vs acetaminophen",
        ),
        (
            "Is 10 mg of melatonin safe every night?",
            "Is 5 mg of melatonin safe every night?",
            "different number: 10 mg vs 5 mg",
        ),
        (
            "What are the complications of type 1 diabetes?",
            "What are the complications of type 2 diabetes?",
            "different name: type 1 vs type 2",
        ),
        (
            "Nausea every day and a missed period but I am not pregnant, what could be wrong?",
            "Nausea every day and a missed period, am I pregnant?",
            "negation differs: pregnant",
        ),
        (
            # A finding whose word ends like a plural is still one, named as written.
            "I have no diabetes, should I take aspirin daily?",
            "I have diabetes, should I take aspirin daily?",
            "negation differs: diabetes",
        ),
        (
            "What is the treatment of strep throat in children?",
            "What is the treatment of strep throat in adults?",
            "different population",
        ),
        (
            # A follow-up rewritten by appending: it widens the population, so no hit.
            "Does aspirin prevent stroke in adults in children?",
            "Does aspirin prevent stroke in adults?",
            "different population",
        ),
        (
            # A follow-up rewritten with the population: the cached answer names none, so it
            # rests on adult studies.
            "Is meropenem interstitial fluid concentration lower than plasma in critically ill "
            "children?",
            "Is meropenem interstitial fluid concentration lower than plasma in critically ill "
            "patients?",
            "different population: children named on one side only",
        ),
        (
            "Is ibuprofen safe to take for headaches and muscle pain during pregnancy?",
            "Is ibuprofen safe to take for headaches and muscle pain?",
            "different population: pregnancy",
        ),
        (
            "Is ibuprofen safe to take for headaches while breastfeeding?",
            "Is ibuprofen safe to take for headaches?",
            "different population: pregnancy or breastfeeding",
        ),
        (
            "Is paediatric asthma controlled by montelukast?",
            "Is asthma controlled by montelukast?",
            "different population: children named on one side only",
        ),
        (
            "My 4 year old has a fever of 39, what should I give?",
            "I am 40 years old and have a fever of 39, what should I take?",
            "different population",
        ),
        ("How is psoriasis treated?", "What causes psoriasis?", "different question intent"),
        (
            "What are the symptoms of gout?",
            "How can gout be prevented?",
            "different question intent",
        ),
        (
            "Apart from cetirizine, what can I take for swollen lips?",
            "Does cetirizine help for swollen lips?",
            "one asks for alternatives",
        ),
        (
            "Are there medications for athlete's foot?",
            "Are there home remedies for athlete's foot?",
            "different treatment",
        ),
        (
            "My strep test was negative, should I take antibiotics for a sore throat?",
            "My strep test was positive, should I take antibiotics for a sore throat?",
            "different outcome",
        ),
        # One letter or number names another thing (COX-2 / COX-1 embed at 0.955).
        ("Is COX-2 inhibition safe after surgery?", "is cox-1 inhibition safe after surgery?",
         "different name: COX-2 vs COX-1"),
        ("Is HIV-1 transmitted by breastfeeding?", "Is HIV 2 transmitted by breastfeeding?",
         "different name: HIV-1 vs HIV 2"),
        ("Are TNF-alpha levels raised in sepsis?", "Are TNF-beta levels raised in sepsis?",
         "different name: TNF-α vs TNF-β"),
        ("Does vitamin D prevent colds?", "does vitamin c prevent colds?",
         "different name: vitamin D vs vitamin C"),
        ("Is hepatitis B vaccine safe in pregnancy?", "Is hepatitis C vaccine safe in pregnancy?",
         "different name: hepatitis B vs hepatitis C"),
    ],
)  # fmt: skip
def test_rejects_medical_differences(guard: QuestionGuard, new: str, cached: str, reason: str):
    verdict = guard.check(new, cached)
    assert not verdict.ok
    assert verdict.reason is not None and reason in verdict.reason


@pytest.mark.parametrize(
    ("new", "cached"),
    [
        (
            "What are the side effects of Adderall? Can it cause headaches?",
            "Can Adderall cause ear pressure and slight headaches at the end of the day?",
        ),
        (
            "How do I know if I have depression and anxiety?",
            "What are the symptoms of depression and anxiety?",
        ),
        (
            "What is the 5-year prognosis with stomach cancer?",
            "What are the chances of survival following a stomach cancer diagnosis?",
        ),
        (
            "I take omeprazole for burping and pain in my esophagus. What should I do?",
            "Dull pain at my esophagus and burping, a bit better with omeporazale. What to do?",
        ),
        (
            "Can I take Tylenol for a tension headache?",
            "Is it ok to take paracetamol for a tension headache?",
        ),
        (
            "I'm not sure if I am pregnant, what could cause nausea?",
            "What could cause nausea if I might be pregnant?",
        ),
        ("Is stage II colon cancer treated with chemotherapy?",
         "Is stage 2 colon cancer treated with chemotherapy?"),
        ("Does vitamin D3 prevent falls in older adults?",
         "does vitamin d prevent falls in older adults?"),
        # Lactate is a laboratory value, not lactation.
        ("Does metformin raise serum lactate levels in diabetes?",
         "Does metformin raise lactic acid levels in diabetes?"),
        # An age that is not a person's ("2 weeks ago") is no population.
        ("Is cheek swelling normal 2 weeks after oral surgery?",
         "After 2 weeks of oral surgery my cheek is still swollen, is that normal?"),
        ("Is it safe for my child to swim with a scab?",
         "Can my child go swimming with a scab?"),
        # The same name with and without its accent.
        ("Is fatigue in primary Sjogren's syndrome due to fibromyalgia?",
         "Is fatigue in primary Sjögren’s syndrome due to fibromyalgia?"),
    ],
)  # fmt: skip
def test_accepts_rewordings(guard: QuestionGuard, new: str, cached: str):
    verdict = guard.check(new, cached)
    assert verdict.ok, verdict.reason
    assert verdict.reason is None


def test_an_accent_changes_no_word():
    assert question_features("Ménière’s disease in Sjögren's syndrome?").content == (
        question_features("Meniere's disease in Sjogren's syndrome?").content
    )
    # Only accents: the micro sign stays one, and "10 µg" a dose.
    assert question_features("Is 10 µg of vitamin B12 enough in Sjögren's syndrome?").doses == {
        ("mcg", "10")
    }


def test_features_are_cached_and_case_insensitive():
    a = question_features("Can I take ADVIL with a beer?")
    assert a is question_features("Can I take ADVIL with a beer?")
    assert a.drugs == {"ibuprofen", "alcohol"}
    assert "safety" in a.intents


def test_guard_is_symmetric_on_drugs(guard: QuestionGuard):
    a, b = "Does metformin cause diarrhea?", "Does lisinopril cause diarrhea?"
    assert not guard.check(a, b).ok and not guard.check(b, a).ok


def _mqp_slice() -> tuple[list[list[str]], dict[str, np.ndarray]]:
    """Every fifth question_1 of mqp_dev (both of its rows, 310 pairs) with real embeddings."""
    from medlit.embeddings import load_embedder

    path = shared_data_path("mqp", "mqp_dev.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = [r for i, r in enumerate(csv.reader(fh)) if (i // 2) % 5 == 0]
    embedder = load_embedder(Settings())
    texts = sorted({q for r in rows for q in (r[1], r[2])})
    return rows, dict(zip(texts, np.asarray(embedder.embed(texts)), strict=True))


@pytest.fixture(scope="module")
def mqp_slice() -> tuple[list[list[str]], dict[str, np.ndarray]]:
    return _mqp_slice()


def _hits(
    data: tuple[list[list[str]], dict[str, np.ndarray]], tau: float, use_guard: bool
) -> list[int]:
    rows, vectors = data
    guard = QuestionGuard(word_rule=False)
    return [
        int(label)
        for _, q1, q2, label in rows
        if float(vectors[q1] @ vectors[q2]) >= tau and (not use_guard or guard.check(q2, q1).ok)
    ]


@pytest.mark.shared_data
def test_default_settings_precision_on_mqp_slice(mqp_slice):
    """Real embeddings, default tau and guard: served pairs are >= 99% true rewordings."""
    guarded = _hits(mqp_slice, CacheSettings().tau, use_guard=True)
    assert len(guarded) >= 15, "too few hits to measure precision"
    assert sum(guarded) / len(guarded) >= 0.99


@pytest.mark.shared_data
def test_guard_removes_wrong_hits_on_mqp_slice(mqp_slice):
    """At a looser tau the plain cosine serves wrong answers; the guard removes most of them."""
    plain = _hits(mqp_slice, 0.80, use_guard=False)
    guarded = _hits(mqp_slice, 0.80, use_guard=True)
    wrong_plain, wrong_guarded = plain.count(0), guarded.count(0)
    assert wrong_plain >= 4, "the slice no longer tests the guard"
    assert wrong_guarded <= wrong_plain // 2
    assert sum(guarded) >= 0.85 * sum(plain), "the guard refuses too many true rewordings"


@pytest.mark.parametrize(
    ("new", "cached", "reason"),
    [
        (
            "Does aspirin increase the risk of stroke?",
            "Does aspirin reduce the risk of stroke?",
            "different direction",
        ),
        (
            "Does aspirin not reduce the risk of stroke?",
            "Does aspirin reduce the risk of stroke?",
            "negation differs",
        ),
        ("Does 300 mg aspirin prevent stroke?", "Does aspirin prevent stroke?", "different number"),
        (
            "Is low-dose aspirin effective for stroke prevention?",
            "Is aspirin effective for stroke prevention?",
            "different number",
        ),
    ],
)
def test_answer_inverting_differences_are_refused(new: str, cached: str, reason: str) -> None:
    verdict = QuestionGuard().check_related(new, cached)
    assert not verdict.ok
    assert verdict.reason is not None and verdict.reason.startswith(reason)


@pytest.mark.parametrize(
    ("new", "cached"),
    [
        ("Does aspirin prevent stroke?", "Does aspirin reduce the risk of stroke?"),
        ("Why can't I sleep at night?", "What causes insomnia?"),
        ("Does low-dose aspirin prevent stroke?", "Does low dose aspirin prevent strokes?"),
    ],
)
def test_same_direction_and_same_dose_pass(new: str, cached: str) -> None:
    assert QuestionGuard().check_related(new, cached).ok


def test_the_frame_reads_yes_no_for_the_guard_in_title_form():
    # A title then its question: the frame reads it as yes/no, so a negated ask is refused
    # by the related checks alone (the guard once read only questions opening with a verb).
    verdict = QuestionGuard(word_rule=False).check(
        "Laparoscopic colectomy in the elderly: is it safe?",
        "Laparoscopic colectomy in the elderly: is it not safe?",
    )
    assert not verdict.ok
    assert verdict.reason == "negation differs: one yes/no question is negated"


def test_children_are_named_by_word_not_by_an_age_of_something_else():
    guard = QuestionGuard(word_rule=False)
    assert guard.check(
        "Is cheek swelling normal 2 weeks after oral surgery?",
        "Is cheek swelling normal after oral surgery?",
    ).ok
    refused = guard.check(
        "Is cheek swelling normal in babies after oral surgery?",
        "Is cheek swelling normal after oral surgery?",
    )
    assert refused.reason == "different population: children named on one side only"
