"""A citation must be to an article that speaks of what its sentence names of the question."""

from __future__ import annotations

import pytest

from medlit.checks.cited_subjects import Unsaid, populations_unspoken
from medlit.types import Article
from tests.unit._checks import left_for_later
from tests.unit.agent.articles import article


def unsaid_subjects(text: str, articles: dict[str, Article], question: str) -> Unsaid:
    """What ``unsaid-subjects`` left of ``text`` (its ``text``), why, and the words of the
    sentences it left out."""
    checked, unsaid = left_for_later("unsaid-subjects", text, articles, question)
    unsaid.text = checked.text
    assert unsaid.warnings == checked.warnings
    return unsaid  # type: ignore[no-any-return]


# What the local model cited for a follow-up on vancomycin monitoring in children.
ARTICLES = {
    "1": article(
        "1",
        "Is peak concentration needed in therapeutic drug monitoring of vancomycin?",
        "Trough concentration (Cmin)/MIC predicted the efficacy of vancomycin in 100 patients.",
    ),
    "2": article(
        "2",
        "Evaluation of pediatric VCUG at an academic children's hospital",
        "The scout image was rarely needed in 500 voiding cystourethrograms.",
    ),
    "3": article(
        "3",
        "Vancomycin trough levels in children",
        "Trough concentration guided dosing in 80 children aged 2 to 12 years.",
    ),
}
QUESTION = "Does vancomycin peak concentration monitoring help in children?"


def test_a_population_the_article_never_speaks_of_loses_its_citation() -> None:
    text = (
        "Peak concentration monitoring of vancomycin is not necessary in children [PMID:1]. "
        "Trough concentration guided vancomycin dosing in children [PMID:3]."
    )
    checked = unsaid_subjects(text, ARTICLES, QUESTION)
    assert checked.text == "Trough concentration guided vancomycin dosing in children [PMID:3]."
    assert checked.warnings == [
        "a sentence was left out: it cited PMID 1 for 'children', which that article never mentions"
    ]
    assert checked.unaddressed(checked.text) == []  # children are still spoken of
    assert checked.unaddressed("Paediatric trough levels guided dosing [PMID:3].") == []
    assert checked.unaddressed("Trough levels predicted efficacy [PMID:1].") == ["children"]


def test_a_subject_of_the_question_the_article_never_says_loses_its_citation() -> None:
    text = "Both found no difference in trough concentration [PMID:1][PMID:2]."
    checked = unsaid_subjects(text, ARTICLES, QUESTION)
    assert checked.text == "Both found no difference in trough concentration [PMID:1]."
    assert checked.warnings == [
        "a citation was removed: it cited PMID 2 for 'concentration', which that article never "
        "mentions"
    ]
    assert checked.words == []  # the sentence stayed


# A subject the article names in other words: the local model's true sentences were left out
# "for" a word that another retrieved article says, and the cited one says otherwise.
OTHER_WORDS = [
    pytest.param(
        # Its only article, on "urinary stone" composition, "for 'kidney'".
        ("Can we predict urinary stone composition based on an analysis of microelement "
         "concentration in the hair and urine?",
         "The data did not allow an algorithm to predict stone chemical composition."),
        ("Kidney function after nephrectomy", "Function fell in 40 patients."),
        "Can hair and urine trace element analysis predict kidney stone composition?",
        "Kidney stone composition cannot be predicted from hair and urine [PMID:1].",
        id="another-name",
    ),
    pytest.param(
        # PubMedQA 15369037, "for 'exposure'", under "None of the articles cited speaks of
        # exposure": the article says "exposed to environmental tobacco smoke (ETS)".
        ("Do people who were passive smokers during childhood have increased risk of long-term "
         "work disability?",
         "Nurses' aides exposed to environmental tobacco smoke (ETS) at home during childhood "
         "had increased risk of sick leave."),
        ("Noise exposure at work", "Exposure to noise raised sick leave."),
        "Does childhood secondhand smoke exposure increase later sick leave?",
        "Childhood secondhand smoke exposure increased later sick leave [PMID:1].",
        id="a-noun-by-its-verb",
    ),
]  # fmt: skip


def test_adults_and_sentences_without_the_questions_words_are_not_checked() -> None:
    # Most studies of adults never say so; a sentence on another subject is the others' to judge.
    text = "Peak concentration monitoring of vancomycin is not needed in adults [PMID:1]."
    adults = "Does vancomycin peak concentration monitoring help in adults?"
    assert unsaid_subjects(text, ARTICLES, adults).text == text
    other = "The scout image was rarely needed [PMID:2]."
    assert unsaid_subjects(other, ARTICLES, QUESTION).text == other


def test_an_uncited_sentence_on_a_population_no_article_says_it_of_is_left_out() -> None:
    question = "Is meropenem interstitial fluid concentration lower in critically ill infants?"
    text = (
        "Trough concentration predicted efficacy [PMID:1]. This suggests meropenem is "
        "eliminated faster in infants than in adults."
    )
    checked = unsaid_subjects(text, {"1": ARTICLES["1"]}, question)
    assert checked.text == "Trough concentration predicted efficacy [PMID:1]."
    assert checked.warnings == [
        "a sentence was left out: it speaks of infants, citing nothing, and no retrieved "
        "article that speaks of them says it"
    ]
    assert checked.unaddressed(checked.text) == ["infants"]
    # The local model's: an article given speaks of children (2, from a children's hospital),
    # but says nothing of the kind.
    invented = "This suggests that vancomycin is more effective in children than in adults."
    assert unsaid_subjects(invented, ARTICLES, QUESTION).text == ""
    # Taken from an article that speaks of children, citing nothing: for the other checks.
    taken = "Trough concentration guided dosing in children aged 2 to 12 years."
    assert unsaid_subjects(taken, ARTICLES, QUESTION).text == taken


def test_populations_unspoken_are_those_no_cited_article_speaks_of() -> None:
    cited_adult = "Trough concentration predicted efficacy [PMID:1]."
    assert populations_unspoken(QUESTION, cited_adult, ARTICLES) == ["children"]
    cited_both = "Trough concentration guided dosing [PMID:1][PMID:3]."
    assert populations_unspoken(QUESTION, cited_both, ARTICLES) == []
    adults = "Does vancomycin peak concentration monitoring help in adults?"
    assert populations_unspoken(adults, cited_adult, ARTICLES) == []  # adults: not checked
    assert populations_unspoken(QUESTION, "Nothing is cited.", ARTICLES) == []


def test_a_study_of_infants_speaks_of_children_but_not_the_converse() -> None:
    infants = article(
        "4",
        "Vancomycin trough monitoring in neonates",
        "Trough concentration guided vancomycin dosing in 60 newborns.",
    )
    articles = {**ARTICLES, "4": infants}
    text = "Trough concentration guided vancomycin dosing in children [PMID:4]."
    assert unsaid_subjects(text, articles, QUESTION).text == text
    assert populations_unspoken(QUESTION, text, articles) == []
    # Asked of infants, a trial in 2- to 12-year-olds says nothing of them.
    of_infants = "Does vancomycin peak concentration monitoring help in infants?"
    cited_children = "Trough concentration guided dosing in infants [PMID:3]."
    assert unsaid_subjects(cited_children, articles, of_infants).text == ""
    assert populations_unspoken(of_infants, "Trough levels guided dosing [PMID:3].", articles) == [
        "infants"
    ]


def test_a_study_in_a_paediatric_or_neonatal_unit_speaks_of_its_patients() -> None:
    # PubMedQA 14612308 says "PICU" and nothing else of children; asked "Can the PRISM score
    # predict how long a child stays in the PICU?", the answer opened "None of the articles
    # cited speaks of children".
    picu = article(
        "5",
        "Can PRISM predict length of PICU stay?",
        "Admissions to our level-III PICU from 1994 to 1999 were scored with PRISM.",
    )
    question = "Can the PRISM score predict how long a child stays in the PICU?"
    text = "PRISM correlated weakly with length of PICU stay in children [PMID:5]."
    assert unsaid_subjects(text, {"5": picu}, question).text == text
    assert populations_unspoken(question, text, {"5": picu}) == []
    nicu = article("6", "Outcomes in our NICU", "Admissions to the NICU were reviewed.")
    assert populations_unspoken("Do infants do well?", "They do [PMID:6].", {"6": nicu}) == []


def test_a_population_is_spoken_of_by_the_abbreviation_its_article_defines() -> None:
    # The local model's answer on propranolol for haemangioma kept "109 patients with IH"
    # (shown as "infantile hemangiomas (IH)"), yet opened "None of the articles cited speaks
    # of infants".
    hemangioma = article(
        "1",
        "Beta-blocker therapy for infantile hemangiomas",
        "Propranolol in patients with infantile hemangiomas (IH) was safe.",
    )
    question = "Do infants starting propranolol for hemangioma need a cardiac workup?"
    text = "Infants need no workup. The study of 109 patients with IH found no harm [PMID:1]."
    checked = unsaid_subjects(text, {"1": hemangioma}, question)
    assert checked.text == "The study of 109 patients with IH found no harm [PMID:1]."
    assert checked.unaddressed(checked.text) == ["infants"]
    assert checked.unaddressed(checked.text, [hemangioma]) == []
    # The local model kept "The study [PMID] found no serious complications of therapy", and
    # the answer opened "None of the articles cited speaks of infants": it does.
    kept = "The study found no serious complications of therapy [PMID:1]."
    assert checked.unaddressed(kept) == ["infants"]
    assert checked.unaddressed(kept, [hemangioma]) == []


def test_the_direction_a_question_asks_about_is_no_subject() -> None:
    # The answer on fasting glucose was left empty "for 'higher'" over an article saying
    # "elevated" and "increased"; the subject the article never says still counts.
    articles = {
        "1": article("1", "Is the radiographic scout image necessary in pediatric VCUG?",
                     "The scout image does not augment VCUG interpretation."),
        "2": article("2", "Higher doses", "Higher doses were given."),
    }  # fmt: skip
    question = "Is a scout image linked to higher doses in pediatric VCUG?"
    said = "A scout image is linked to higher doses in VCUG [PMID:1]."
    assert unsaid_subjects(said, articles, question).warnings == [
        "a sentence was left out: it cited PMID 1 for 'doses', which that article never mentions"
    ]


# Words that frame a question, not name its subject, each seen on the local model: the cited
# article never says them and another retrieved article does, so the check held them to it.
FRAMING = [
    pytest.param(
        # "for 'both', which that article never mentions" (PubMedQA 16361634)
        ("Women with synchronous primary cancers of the endometrium and ovary",
         "Lynch syndrome was found in women with endometrial and ovarian cancer."),
        ("Both arms of a trial", "Both groups had ovarian cancer."),
        "Do women with both endometrial and ovarian cancer have Lynch syndrome?",
        "Women with both endometrial and ovarian cancer had Lynch syndrome [PMID:1].",
        id="quantifier",
    ),
    pytest.param(
        # "rule out": "None of the articles cited speaks of out"
        ("Very high serum CA 19-9 levels: a contraindication to surgery?",
         "CA 19-9 levels should not preclude pancreaticoduodenectomy."),
        ("Ruling out appendicitis", "Ultrasound ruled out appendicitis."),
        "Should very high CA 19-9 levels rule out pancreaticoduodenectomy?",
        "Very high CA 19-9 levels do not rule out pancreaticoduodenectomy [PMID:1].",
        id="particle",
    ),
    pytest.param(
        # "how long": the answer on PRISM and length of PICU stay was left with nothing
        ("Can PRISM predict length of stay in paediatric intensive care?",
         "PRISM did not predict the length of stay of children."),
        ("Long-term outcomes of intensive care", "Long stays were rare."),
        "Can the PRISM score predict how long children stay in intensive care?",
        "PRISM did not predict how long children stay in intensive care [PMID:1].",
        id="how-long",
    ),
    pytest.param(
        # "None of the articles cited speaks of needed"; a true sentence left out "for 'rates'"
        ("Is the radiographic scout image necessary in pediatric VCUG?",
         "The scout image does not augment VCUG interpretation."),
        ("Needed rates of follow-up", "Follow-up rates were needed."),
        "Is a scout image needed for pediatric VCUG, and does it change death rates?",
        "A scout image is not needed for VCUG and does not change death rates [PMID:1].",
        id="asked-of-the-subject",
    ),
    pytest.param(
        # The local model's sentence on continuous training and muscle fatigue in the elderly
        # (PubMedQA 12690589) was left out "for 'regular'", asked about regular exercise.
        ("Can continuous physical training counteract aging effect on myoelectric fatigue?",
         "Continuous exercise counteracts the loss of type II fibres in aging muscle."),
        ("Regular follow-up after surgery", "Regular visits were routine."),
        "Can regular exercise routinely slow age-related muscle fatigue?",
        "Regular exercise may counteract the aging effect on muscle fatigue [PMID:1].",
        id="how-often",
    ),
    pytest.param(
        # The local model's answer on PubMedQA 25987398 opened "None of the articles cited
        # speaks of affect".
        ("The influence of atmospheric pressure on aortic aneurysm rupture",
         "Pressure did not differ between the days of rupture and other days."),
        ("Factors that affect outcome", "Age affected outcome."),
        "Does air pressure affect aortic aneurysm rupture?",
        "Atmospheric pressure does not affect aortic aneurysm rupture [PMID:1].",
        id="the-verb-asked",
    ),
    pytest.param(
        # The local model's answer on PubMedQA 11882828 fell to the digest "for
        # 'counteracts'", asked whether tranexamic acid counteracts desmopressin's fibrinolysis.
        ("Does tranexamic acid reduce desmopressin-induced hyperfibrinolysis?",
         "Tranexamic acid significantly reduces desmopressin-induced hyperfibrinolysis."),
        ("Exercise counteracts muscle loss", "Exercise counteracted the loss of fibres."),
        "Does tranexamic acid counteract the fibrinolysis caused by desmopressin?",
        "Tranexamic acid counteracts desmopressin-induced hyperfibrinolysis [PMID:1].",
        id="the-effect-asked",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cited", "other", "question", "said"), [*FRAMING, *OTHER_WORDS])
def test_a_framing_word_or_a_subject_said_in_other_words_keeps_the_citation(
    cited: tuple[str, str], other: tuple[str, str], question: str, said: str
) -> None:
    articles = {"1": article("1", *cited), "2": article("2", *other)}
    checked = unsaid_subjects(said, articles, question)
    assert checked.text == said and checked.warnings == []


def test_a_site_type_sex_or_setting_no_cited_article_speaks_of_is_unspoken() -> None:
    wrist = article(
        "11",
        "Vitamin C and complex regional pain syndrome after wrist fractures",
        "In 416 patients with distal radius fractures, vitamin C reduced the prevalence of "
        "complex regional pain syndrome.",
    ).model_copy(update={"mesh_terms": ["Radius Fractures", "Wrist Injuries", "Female", "Male"]})
    cited = "Vitamin C prevented complex regional pain syndrome [PMID:11]."
    hip = "Does vitamin C prevent complex regional pain syndrome after hip fractures?"
    assert populations_unspoken(hip, cited, {"11": wrist}) == ["hip"]
    asked_wrist = "Does vitamin C prevent complex regional pain syndrome after wrist fractures?"
    assert populations_unspoken(asked_wrist, cited, {"11": wrist}) == []

    type_1 = article(
        "12",
        "Insulin exposure and atherosclerosis in type 1 diabetes",
        "In 2 cohorts of 300 adults with type I diabetes, lifetime insulin dose predicted "
        "carotid intima-media thickness.",
    ).model_copy(update={"mesh_terms": ["Diabetes Mellitus, Type 1", "Atherosclerosis"]})
    cited = "Lifetime insulin exposure predicted atherosclerosis [PMID:12]."
    of_type = "In type {} diabetes, does high insulin exposure raise atherosclerosis risk?"
    assert populations_unspoken(of_type.format(2), cited, {"12": type_1}) == ["type 2 diabetes"]
    assert populations_unspoken(of_type.format("II"), cited, {"12": type_1}) == ["type 2 diabetes"]
    assert populations_unspoken(of_type.format(1), cited, {"12": type_1}) == []


def test_a_study_of_one_sex_does_not_speak_of_the_other() -> None:
    women = article(
        "13",
        "Exercise that feels good in sedentary women",
        "Sixty sedentary women exercised at a self-chosen pace for 12 weeks.",
    )
    cited = "Exercising at a pace that feels good improved fitness [PMID:13]."
    men = "In sedentary men, does exercising at a pace that feels good improve fitness?"
    assert populations_unspoken(men, cited, {"13": women}) == ["men"]
    asked_women = men.replace("men,", "women,")
    assert populations_unspoken(asked_women, cited, {"13": women}) == []
    # A study of prostate cancer is a study of men, whether or not it says "men".
    prostate = article("16", "Exercise in prostate cancer", "Sixty patients exercised.")
    assert populations_unspoken(men, cited.replace("13", "16"), {"16": prostate}) == []


def test_a_type_named_by_the_articles_mesh_descriptor_is_that_type() -> None:
    # The abstract sets type 1 against type 2; the MeSH descriptor says which it studied.
    type_1 = article(
        "17",
        "Insulin exposure and atherosclerosis in diabetes",
        "Unlike in type 2 diabetes, lifetime insulin dose predicted intima-media thickness.",
    ).model_copy(update={"mesh_terms": ["Diabetes Mellitus, Type 1", "Atherosclerosis"]})
    cited = "Lifetime insulin exposure predicted atherosclerosis [PMID:17]."
    of_type_2 = "In type 2 diabetes, does insulin exposure raise atherosclerosis risk?"
    assert populations_unspoken(of_type_2, cited, {"17": type_1}) == ["type 2 diabetes"]
    untagged = type_1.model_copy(update={"mesh_terms": []})
    assert populations_unspoken(of_type_2, cited, {"17": untagged}) == []


def test_a_setting_no_cited_article_speaks_of_is_unspoken() -> None:
    icu = article(
        "14",
        "Nebulised heparin in ventilated patients in intensive care",
        "Patients ventilated in the intensive care units of 2 hospitals received inhaled "
        "heparin; pneumonia was no less frequent.",
    )
    cited = "Inhaled heparin did not prevent pneumonia [PMID:14]."
    outpatients = "Does inhaled heparin prevent pneumonia in outpatients?"
    assert populations_unspoken(outpatients, cited, {"14": icu}) == ["outpatients"]
    in_icu = "Does inhaled heparin prevent pneumonia in intensive care units?"
    assert populations_unspoken(in_icu, cited, {"14": icu}) == []
    # A place is spoken of by its people: "Korean" by a study in Korea.
    korea = article("15", "Barrett's oesophagus in Korea", "We biopsied 80 patients in Korea.")
    korean = "Is cytokeratin staining useful for Barrett's oesophagus in Korean patients?"
    assert populations_unspoken(korean, "It is [PMID:15].", {"15": korea}) == []
