"""A verdict follows the direction the conclusions state, not the question's wording."""

from __future__ import annotations

import pytest

from medlit.checks import unspoken_in
from medlit.digest import build_evidence_digest
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame
from medlit.words.stance import (
    opposite_of_asked,
    outcome_change,
    sentence_stance,
    speaks_elsewhere,
)
from tests.unit.test_extractive import ASPIRIN_YES_1, ASPIRIN_YES_2, make_evidence

LOWERED = "Aspirin lowered the risk of stroke in adults."
NULL = "Higher aspirin doses increased gastrointestinal bleeding without fewer strokes."
# Two changes in one clause, one of them of the outcome asked (the sample corpus's).
TWO_CHANGES = (
    "Low-dose aspirin reduced the incidence of ischaemic stroke in adults, at the cost of more "
    "major bleeding."
)


@pytest.mark.parametrize(
    "question",
    [
        "Does aspirin cause stroke in adults?",
        "Does aspirin increase the risk of stroke in adults?",
        "Does aspirin raise the risk of stroke in adults?",
    ],
)
def test_a_lowered_risk_never_answers_a_turned_question_yes(question: str) -> None:
    assert opposite_of_asked(LOWERED, question)
    assert sentence_stance(LOWERED, question) != "yes"
    assert sentence_stance(LOWERED, "Does aspirin prevent stroke in adults?") == "yes"


def test_improved_never_answers_worsen_yes() -> None:
    assert sentence_stance("Aspirin improved outcomes.", "Does aspirin worsen outcomes?") != "yes"
    assert sentence_stance(LOWERED, "Does aspirin worsen outcomes in adults?") != "yes"
    assert sentence_stance("Aspirin improved outcomes.", "Does aspirin improve outcomes?") == "yes"


@pytest.mark.parametrize(
    "question",
    ["Does aspirin prevent stroke in adults?", "Does aspirin increase stroke in adults?"],
)
def test_a_null_finding_never_counts_toward_yes(question: str) -> None:
    assert sentence_stance(NULL, question) != "yes"


def test_the_digest_never_says_yes_to_the_turned_question() -> None:
    evidence = ASPIRIN_YES_1 + ASPIRIN_YES_2
    asked = "Does aspirin reduce the risk of recurrent stroke?"
    turned = "Does aspirin increase the risk of recurrent stroke?"
    assert build_evidence_digest(asked, evidence, min_sources=1).verdict == "yes"
    assert build_evidence_digest(turned, evidence, min_sources=1).verdict != "yes"


def _article(text: str) -> Article:
    return Article(pmid="1", title="A study", abstract=[AbstractSection(text=text)])


@pytest.mark.parametrize(
    ("question", "said", "unspoken"),
    [
        ("Does aspirin prevent stroke in women?", "In 400 men aspirin lowered stroke.", "women"),
        ("Does aspirin prevent stroke in children?", "In 400 adults aspirin worked.", "children"),
        ("Does aspirin prevent stroke in pregnancy?", "In 400 adults aspirin worked.", "pregnancy"),
        (
            "Does aspirin prevent stroke in patients with atrial fibrillation?",
            "In 400 adults aspirin lowered stroke.",
            "atrial fibrillation",
        ),
        (
            "Does aspirin prevent stroke in nursing homes?",
            "In 400 adults aspirin lowered stroke.",
            "nursing homes",
        ),
        (
            "Does vitamin C prevent pain syndrome after hip fractures?",
            "In 400 adults with wrist fractures vitamin C prevented pain syndrome.",
            "hip",
        ),
        (
            "Does insulin exposure raise atherosclerosis in type 2 diabetes?",
            "In 300 adults with type 1 diabetes (2 cohorts) insulin raised atherosclerosis.",
            "type 2 diabetes",
        ),
        (
            "Does aspirin prevent stroke in patients with diabetic kidney disease?",
            "In 400 adults with kidney disease aspirin lowered stroke.",
            "diabetic kidney disease",
        ),
        (
            "Is laparoscopic ultrasound reliable for staging gastric cancer?",
            "Laparoscopic ultrasound staged 100 colorectal cancers; the liver was imaged.",
            "gastric",
        ),
        (
            "Does heparin prevent pneumonia in patients on home mechanical ventilation?",
            "Heparin in 200 patients on mechanical ventilation in the intensive care unit.",
            "home mechanical ventilation",
        ),
        (
            "Is HIV control in Haiti making a difference?",
            "HIV incidence fell in Jamaica from 1990 to 2000.",
            "haiti",
        ),
    ],
)
def test_every_population_gets_its_caveat_alike(question: str, said: str, unspoken: str) -> None:
    assert unspoken_in(read_frame(question), [_article(said)]) == [unspoken]


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Does aspirin prevent stroke in women?", "Aspirin in postmenopausal patients."),
        ("Does aspirin prevent stroke in women?", "Aspirin in 300 women."),
        ("Does aspirin prevent stroke in pregnancy?", "Aspirin in the second trimester."),
        ("Does aspirin prevent stroke in children?", "Aspirin in 7-year-old patients."),
        (
            "Does aspirin prevent stroke in patients with atrial fibrillation?",
            "Aspirin in atrial fibrillation.",
        ),
        ("Does vitamin C prevent pain after hip fractures?", "Vitamin C in 400 hip fractures."),
        ("Does insulin raise atherosclerosis in type 2 diabetes?", "Insulin in type II diabetes."),
        ("Does insulin raise atherosclerosis in type 2 diabetes?", "Insulin in T2DM."),
        ("Is ultrasound reliable for staging gastric cancer?", "Staging of stomach cancer."),
        ("Does anemia worsen colorectal surgery outcomes?", "Anemia before colon surgery."),
        ("Is HIV control in Haiti making a difference?", "HIV incidence in Haitian adults."),
    ],
)
def test_a_population_spoken_of_gets_no_caveat(question: str, said: str) -> None:
    assert unspoken_in(read_frame(question), [_article(said)]) == []


def test_the_digest_withholds_its_verdict_for_an_unspoken_population() -> None:
    evidence = ASPIRIN_YES_1 + ASPIRIN_YES_2
    digest = build_evidence_digest(
        "Does aspirin reduce the risk of recurrent stroke in women?", evidence, min_sources=1
    )
    assert digest.verdict == "uncertain"
    assert "speaks of women" in digest.text


def test_the_digest_withholds_a_verdict_on_hip_fractures_from_wrist_fracture_trials() -> None:
    wrist = [
        make_evidence(
            pmid,
            "Vitamin C significantly reduced complex regional pain syndrome after wrist fractures.",
            "Complex regional pain syndrome occurred in 2% of the vitamin C group and 10% of "
            "the placebo group.",
            title="Vitamin C and wrist fractures",
        )
        for pmid in ("31", "32")
    ]
    question = "Does vitamin C prevent complex regional pain syndrome in patients with {}?"
    evidence = wrist[0] + wrist[1]
    asked_hip = build_evidence_digest(question.format("hip fractures"), evidence, min_sources=1)
    assert asked_hip.verdict == "uncertain"
    assert asked_hip.verdict_rule == "population-unspoken"
    assert asked_hip.text.count("hip") == asked_hip.text.count("hip fractures")  # one caveat
    wrist_asked = question.format("wrist fractures")
    assert build_evidence_digest(wrist_asked, evidence, min_sources=1).verdict == "yes"


def test_a_verdict_is_withheld_when_only_articles_it_is_not_read_from_speak_of_them() -> None:
    # A cohort of hip fractures is quoted but concludes nothing on vitamin C; the yes is read
    # from the wrist trials alone.
    wrist = make_evidence(
        "41",
        "Vitamin C significantly reduced complex regional pain syndrome after wrist fractures.",
        "Complex regional pain syndrome occurred in 2% of the vitamin C group and 10% of the "
        "placebo group.",
        publication_types=("Randomized Controlled Trial",),
        title="Vitamin C and wrist fractures: a randomised trial",
    )
    hip = make_evidence(
        "42",
        "Complex regional pain syndrome after hip fractures was seen in 30 of 500 patients "
        "given vitamin C.",
        "Complex regional pain syndrome after hip fractures was rare.",
        title="Complex regional pain syndrome after hip fractures and vitamin C",
    )
    question = "Does vitamin C prevent complex regional pain syndrome after hip fractures?"
    digest = build_evidence_digest(question, wrist + hip, min_sources=1)
    assert digest.verdict == "uncertain"
    assert "leaning is read from speaks of hip" in digest.text


def _study(pmid: str, conclusion: str) -> Article:
    return Article(
        pmid=pmid,
        title="Aspirin and stroke in adults",
        abstract=[
            AbstractSection(label="RESULTS", category="RESULTS", text="Aspirin and stroke."),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
    )


@pytest.mark.parametrize(
    ("question", "conclusion", "said"),
    [
        ("Does aspirin increase the risk of stroke in adults?", LOWERED, "opposite"),
        ("Does aspirin cause stroke in adults?", LOWERED, "opposite"),
        ("Does aspirin cause stroke in adults?", TWO_CHANGES, "opposite"),
        ("Does aspirin worsen outcomes in adults?", "Aspirin improved outcomes in adults.", ""),
    ],
)
def test_a_model_yes_against_the_conclusions_is_withheld(
    question: str, conclusion: str, said: str
) -> None:
    from medlit.checks import REGISTRY
    from medlit.checks.context import CheckContext
    from medlit.checks.draft import Draft
    from medlit.checks.policy import verdict_after

    answer = "Yes. Aspirin changes the risk of stroke in adults [PMID:1]."
    ctx = CheckContext(question, {"1": _study("1", conclusion)}, Draft.parse(answer), "yes")
    findings = list(REGISTRY["against-direction"].run(ctx))
    assert verdict_after("yes", findings) == "uncertain"
    assert said in findings[0].message


def test_a_model_yes_the_conclusions_state_is_kept() -> None:
    from medlit.checks import REGISTRY
    from medlit.checks.context import CheckContext
    from medlit.checks.draft import Draft

    asked = "Does aspirin lower the risk of stroke in adults?"
    answer = "Yes. Aspirin lowers the risk of stroke in adults [PMID:1]."
    ctx = CheckContext(asked, {"1": _study("1", LOWERED)}, Draft.parse(answer), "yes")
    assert list(REGISTRY["against-direction"].run(ctx)) == []


def test_one_source_leaning_is_shown_as_no_verdict() -> None:
    digest = build_evidence_digest(
        "Does aspirin reduce the risk of recurrent stroke?", ASPIRIN_YES_2
    )
    assert digest.verdict == "uncertain"
    assert "(not a verdict): Uncertain: too little evidence to say (1 source points to yes)" in (
        digest.text
    )


@pytest.mark.parametrize(
    "question", ["Does aspirin cause stroke in adults?", "Does aspirin increase stroke in adults?"]
)
def test_the_change_stated_of_the_outcome_decides_not_another(question: str) -> None:
    # "more" is said of bleeding: of stroke, the clause states a fall.
    assert outcome_change(TWO_CHANGES, question) == "down"
    assert opposite_of_asked(TWO_CHANGES, question)
    assert sentence_stance(TWO_CHANGES, question) != "yes"
    assert sentence_stance(TWO_CHANGES, "Does aspirin prevent stroke in adults?") == "yes"
    assert outcome_change(TWO_CHANGES, "Does aspirin increase bleeding in adults?") == "up"


def test_an_abbreviated_outcome_is_the_outcome() -> None:
    said = "Preoperative statin therapy reduced AF after CABG."
    assert outcome_change(said, "Do statins increase atrial fibrillation after surgery?") == "down"


@pytest.mark.parametrize(
    ("question", "said", "its_own"),
    [
        # Another article near the question: its change is of something else.
        (
            "Do preoperative statins increase atrial fibrillation after bypass grafting?",
            "The addition of epinephrine increases vital organ perfusion pressures.",
            "Does epinephrine increase perfusion pressures?",
        ),
        (
            "Does high blood pressure increase the risk of chronic low back pain?",
            "Exposure to smoke at home had an increased risk of long-term sickness absence.",
            "Does exposure to smoke increase sickness absence?",
        ),
    ],
)
def test_a_change_of_neither_subject_nor_outcome_leans_no_yes(
    question: str, said: str, its_own: str
) -> None:
    assert speaks_elsewhere(said, question)
    assert not speaks_elsewhere(said, its_own)
    # Two studies titled as the question asks (a search's near misses say its words).
    evidence = make_evidence("1", said, title=question)
    evidence += make_evidence("2", said.replace(".", " again."), title=question)
    assert build_evidence_digest(question, evidence).verdict != "yes"
    # Asked of what it speaks of, the same conclusions answer.
    assert build_evidence_digest(its_own, evidence).verdict == "yes"


def test_the_sample_corpus_never_leans_yes_on_aspirin_causing_stroke() -> None:
    from tests.fakes.sample_corpus import sample_corpus

    evidence = [
        item
        for a in sample_corpus()
        for item in make_evidence(
            a.pmid or "",
            a.abstract[-1].text,
            a.abstract[0].text,
            title=a.title,
            publication_types=a.publication_types,
        )
    ]
    for question in ("Does aspirin cause stroke in adults?", "Does aspirin increase stroke?"):
        digest = build_evidence_digest(question, evidence, min_sources=1)
        assert digest.verdict != "yes"
        assert "to yes" not in digest.verdict_reason
        # Said as what it is: the change the other way, not a hedge; the null finding apart.
        assert digest.verdict_reason == (
            "4 conclusions state the change opposite to the one asked, 1 is hedged"
        )
    assert build_evidence_digest("Does aspirin prevent stroke?", evidence).verdict == "yes"


def _own_words(question: str, answer: str, conclusion: str = LOWERED) -> list[object]:
    from medlit.checks import REGISTRY
    from medlit.checks.context import CheckContext
    from medlit.checks.draft import Draft

    ctx = CheckContext(question, {"1": _study("1", conclusion)}, Draft.parse(answer), "yes")
    return list(REGISTRY["against-own-words"].run(ctx))


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # The answer says what the article says; the verdict line says yes to the turn.
        (
            "Does automatic transmission worsen driving behavior in older drivers?",
            "Automatic transmission improved the older participants' driving behavior "
            "[PMID:1]. The older group made more driving errors than the younger group in "
            "both cars [PMID:1]. Automatic transmission improves driving behavior [PMID:1].",
        ),
        (
            "Is chewing pan masala beneficial for health?",
            "The evidence shows that pan masala is harmful for health [PMID:1].",
        ),
        (
            "Does steady-state imaging worsen accuracy of first-pass imaging?",
            "Steady-state image reading is superior to first-pass image reading [PMID:1].",
        ),
    ],
)
def test_a_yes_against_the_answers_own_words_is_withheld(question: str, answer: str) -> None:
    from medlit.checks.policy import verdict_after

    findings = _own_words(question, answer)
    assert verdict_after("yes", findings) == "uncertain"  # type: ignore[arg-type]
    assert "own sentences" in findings[0].message  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Does aspirin lower the risk of stroke in adults?", "Aspirin lowered it [PMID:1]."),
        (
            "Does aspirin lower the risk of stroke in adults?",
            "Aspirin lowers the risk of stroke in adults [PMID:1]. It did not raise the risk "
            "of stroke [PMID:1].",
        ),
        # A negated opposite states no change ("did not worsen"); nor does another subject.
        (
            "Does steady-state imaging improve accuracy?",
            "Steady-state imaging did not worsen accuracy [PMID:1]. Cost rose [PMID:1].",
        ),
        ("Is aspirin safe in adults?", "Aspirin increased bleeding [PMID:1]."),
        # One sentence each way: left to the checks of the cited conclusions (below).
        (
            "Does preoperative anemia improve surgery outcomes?",
            "Preoperative anemia is an independent risk factor for complications [PMID:1]. "
            "Preoperative anemia may improve surgery outcomes [PMID:1].",
        ),
    ],
)
def test_a_yes_the_answer_bears_out_is_kept(question: str, answer: str) -> None:
    assert _own_words(question, answer) == []


def test_a_risk_factor_for_complications_is_for_the_worse() -> None:
    from medlit.checks import REGISTRY
    from medlit.checks.context import CheckContext
    from medlit.checks.draft import Draft
    from medlit.checks.policy import verdict_after

    question = "Does preoperative anemia improve surgery outcomes?"
    conclusion = "Preoperative anemia is an independent risk factor for complications."
    answer = "Preoperative anemia may improve surgery outcomes [PMID:1]."
    ctx = CheckContext(question, {"1": _study("1", conclusion)}, Draft.parse(answer), "yes")
    findings = list(REGISTRY["against-direction"].run(ctx))
    assert verdict_after("yes", findings) == "uncertain"
