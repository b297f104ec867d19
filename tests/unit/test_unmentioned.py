"""The question's subject terms that no retrieved article mentions."""

from __future__ import annotations

from medlit.text import either_of
from medlit.types import AbstractSection, Article
from medlit.words.grounding import said_in, word_stems
from medlit.words.unmentioned import unmentioned_terms


def _article(title: str, text: str, mesh: tuple[str, ...] = ()) -> Article:
    section = AbstractSection(label="RESULTS", category="RESULTS", text=text)
    return Article(pmid="1", title=title, abstract=[section], mesh_terms=list(mesh))


STATINS = [
    _article(
        "Does pretreatment with statins improve clinical outcome after stroke?",
        "Statins have neuroprotective properties. Outcome was similar with or without statins.",
    ),
    _article(
        "Do preoperative statins reduce atrial fibrillation after coronary artery bypass grafting?",
        "Preoperative statin therapy reduced atrial fibrillation after surgery.",
    ),
]


def test_a_subject_no_article_says_is_named_as_the_question_writes_it() -> None:
    assert unmentioned_terms("Do statins cause myopathy?", STATINS) == ["myopathy"]
    assert unmentioned_terms("Statins and Myopathy or rhabdomyolysis", STATINS) == [
        "Myopathy",
        "rhabdomyolysis",
    ]


def test_words_that_frame_the_question_are_not_subjects() -> None:
    # Common words ("always", "risk", "cause"), generic ones and participles are not judged.
    assert unmentioned_terms("Are statins always necessary? The risk of harm", STATINS) == []
    assert unmentioned_terms("Is preoperative statin use underrecognised?", STATINS) == []


def test_a_term_counts_as_said_in_any_of_its_forms() -> None:
    shock = [
        _article(
            "Lithotripsy outcomes",
            "Extracorporeal shock wave lithotripsy cleared the stones. Haemorrhage was rare.",
        )
    ]
    assert unmentioned_terms("Does shockwave lithotripsy cause hemorrhage?", shock) == []
    sjogren = [_article("Fatigue in primary Sjögren's syndrome", "Fatigue was common.")]
    assert unmentioned_terms("fatigue in Sjogren syndrome", sjogren) == []
    mesh = [_article("Lipids", "Levels fell.", mesh=("Myopathies", "Hydroxymethylglutaryl"))]
    assert unmentioned_terms("statin myopathy", mesh) == ["statin"]


def test_a_clinicians_compound_and_synonym_are_said_by_the_articles_words() -> None:
    # Asked of the local model in a clinician's words, both answered "Uncertain" under "None
    # of the articles ... speaks of ankle-brachial" (of "multiparous"), over the article that
    # answers: it says "Ankle/Arm blood pressure Index" ("women with more parities").
    ankle = [
        _article(
            "Is ankle/arm pressure predictive for cardiovascular mortality in older patients "
            "living in nursing homes?",
            "The Ankle/Arm blood pressure Index (AAI) was not predictive for mortality.",
        )
    ]
    question = (
        "Does the ankle-brachial index predict cardiovascular death in nursing home residents?"
    )
    assert unmentioned_terms(question, ankle) == []
    parities = [
        _article(
            "Does glomerular hyperfiltration in pregnancy damage the kidney in women with more "
            "parities?",
            "Parity was not associated with kidney damage.",
        )
    ]
    asked = "Does hyperfiltration in pregnancy damage the kidneys of multiparous women?"
    assert unmentioned_terms(asked, parities) == []
    # One thing named in other words: "kidney stones" are the article's "urinary stones" (the
    # local model's answer lost its article "for 'kidney', which that article never
    # mentions"), a heart attack its myocardial infarction.
    stones = [
        _article(
            "Can we predict urinary stone composition based on an analysis of microelement "
            "concentration in the hair and urine?",
            "Only a few correlations were found.",
        )
    ]
    asked = "Can hair and urine trace element analysis predict kidney stone composition?"
    assert unmentioned_terms(asked, stones) == []
    assert unmentioned_terms("nephrolithiasis in children", stones) == []
    infarction = [_article("Statins after myocardial infarction", "Mortality fell.")]
    assert unmentioned_terms("Do statins help after a heart attack?", infarction) == []
    assert unmentioned_terms("Do statins prevent urolithiasis?", infarction) == ["urolithiasis"]
    # A compound is said by its parts only when they are words and one is technical: not by
    # a prefix ("non-"), nor by two common words said anywhere ("high", "dose").
    others = [_article("Communicable disease after a high fever", "The dose was non-toxic.")]
    assert unmentioned_terms("Is non-communicable disease risk higher in cities?", others) == [
        "non-communicable"
    ]
    assert not said_in("high-dose", word_stems("a high fever; the dose was non-toxic"))


def test_a_hyphenated_word_and_its_closed_up_form_are_one_word() -> None:
    # The local model's "auto-CPAP" over an article saying only "autoCPAP": its answer was
    # left with none of its statements, "for 'auto-CPAP', which that article never mentions".
    article = [
        _article(
            "Does either obesity or OSA severity influence the response of autotitrating CPAP "
            "machines in very obese subjects?",
            "Some subjects without OSA generated high autoCPAP pressures.",
        )
    ]
    assert unmentioned_terms("Does obesity change auto-CPAP pressure?", article) == []
    closed = [_article("Pressures of auto-CPAP", "Obesity did not predict auto-CPAP pressure.")]
    assert unmentioned_terms("Does obesity change autoCPAP pressure?", closed) == []
    assert said_in("non-invasive", word_stems("a noninvasive test"))
    assert not said_in("autocpap", word_stems("a fixed CPAP pressure"))


def test_an_abbreviation_is_said_by_the_words_it_is_the_initials_of() -> None:
    assert unmentioned_terms("atrial fibrillation after CABG", STATINS) == []
    assert unmentioned_terms("atrial fibrillation after TAVI", STATINS) == ["TAVI"]


def test_nothing_retrieved_is_not_this_check() -> None:
    assert unmentioned_terms("Do statins cause myopathy?", []) == []


def test_terms_are_named_as_none_of_them() -> None:
    assert either_of(["myopathy"]) == "myopathy"
    assert either_of(["a", "b", "c"]) == "a, b or c"


def test_with_the_frame_its_concepts_and_the_change_asked_are_held() -> None:
    from medlit.words.frame import read_frame

    question = "Do statins impair myopathy recovery after coronary artery bypass grafting?"
    frame = read_frame(question)
    # The change the question asks ("impair") is held as its concepts are, read once.
    assert unmentioned_terms(question, STATINS, frame) == ["impair", "myopathy"]
    assert unmentioned_terms(question, STATINS, frame) == unmentioned_terms(question, STATINS)
