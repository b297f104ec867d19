"""Uncited conclusions that no retrieved article supports are left out."""

from __future__ import annotations

from medlit.checks.unsupported import Unsupported
from medlit.types import Article
from tests.unit._checks import left_for_later
from tests.unit.agent.articles import article


def unsupported(text: str, articles: dict[str, Article], question: str) -> Unsupported:
    """What ``unsupported-conclusions`` left of ``text``, and why."""
    left: Unsupported = left_for_later("unsupported-conclusions", text, articles, question)[1]
    return left


# What the local model had: vitamin D and T cells, vitamin C and wrist fractures.
ARTICLES = {
    "1": article(
        "1", "Vitamin D supplementation and regulatory T cells",
        "Vitamin D supplementation increased Tregs in healthy adults.",
    ),
    "2": article(
        "2", "Vitamin C supplementation after wrist fractures",
        "Vitamin C reduced complex regional pain syndrome after fractures.",
    ),
}  # fmt: skip
QUESTION = "Does vitamin D supplementation prevent fractures in older adults?"


def test_an_uncited_answer_no_article_supports_is_left_out() -> None:
    text = (
        "The evidence shows that vitamin D supplementation does prevent fractures in older "
        "adults. A trial found that vitamin D supplementation increased Tregs [PMID:1]. "
        "Vitamin D supplementation may act on immune cells."
    )
    result = unsupported(text, ARTICLES, QUESTION)
    kept, warnings = result.text, result.warnings
    # The first sentence goes: article 1 never speaks of fractures, and article 2 speaks of
    # them with vitamin C. The last one stays: article 1 holds its subject words.
    assert kept == (
        "A trial found that vitamin D supplementation increased Tregs [PMID:1]. "
        "Vitamin D supplementation may act on immune cells."
    )
    assert warnings == [
        "an uncited sentence was left out: no retrieved article speaks of vitamin, "
        "supplementation and fractures together"
    ]  # the words as the sentence writes them, in its order
    # Nothing left speaks of fractures: the answer no longer addresses the question.
    assert result.unaddressed() == {"fractures"}


def test_sentences_left_out_for_the_same_words_make_one_warning() -> None:
    text = "Vitamin D supplementation prevents fractures. Vitamin D supplementation cuts fractures."
    result = unsupported(text, ARTICLES, QUESTION)
    kept, warnings = result.text, result.warnings
    assert kept == ""
    assert warnings == [
        "2 uncited sentences were left out: no retrieved article speaks of vitamin, "
        "supplementation and fractures together"
    ]


def test_connecting_and_cited_sentences_stay() -> None:
    text = "These trials were small.\nVitamin D prevented fractures [PMID:2]."
    assert unsupported(text, ARTICLES, QUESTION) == Unsupported(text)
    # A question with fewer than two subject words is not checked.
    assert unsupported("Fractures were prevented.", ARTICLES, "Are fractures bad?") == (
        Unsupported("Fractures were prevented.")
    )


def test_an_article_saying_another_form_of_the_words_supports_a_sentence() -> None:
    # The local model's "nasal polyposis is inherited" was left out, as spoken of by no
    # article, over an article titled "Nasal polyposis: is there an inheritance pattern?"; and
    # the warning spelled "polyposi".
    polyposis = {
        "1": article("1", "Nasal polyposis: is there an inheritance pattern?",
                     "Nasal polyposis affected 19.7% of the family."),
    }  # fmt: skip
    text = "Nasal polyposis appears to be inherited in this family."
    assert unsupported(text, polyposis, "Is nasal polyposis inherited?") == (Unsupported(text))
    unrelated = {"1": article("1", "Asthma in a French family", "Asthma affected 19.7%.")}
    result = unsupported(text, unrelated, "Is nasal polyposis inherited?")
    assert result.warnings == [
        "an uncited sentence was left out: no retrieved article speaks of nasal, polyposis and "
        "inherited together"
    ]


def test_an_article_saying_the_words_synonym_supports_a_sentence() -> None:
    # The local model's "the sex difference in survival ... is explained by histology" was left
    # out over PubMedQA 19327500, "Gender difference in survival of resected non-small cell
    # lung cancer: histology-related phenomenon?", and the answer opened with "None of the
    # retrieved articles speaks of sex, difference, survival, lung, cancer, resection,
    # explained and histology together". "Explained" frames the question; "sex" is "gender".
    gender = {
        "1": article("1", "Gender difference in survival of resected non-small cell lung "
                     "cancer: histology-related phenomenon?", "Women had better survival."),
    }  # fmt: skip
    question = (
        "Is the sex difference in survival after lung cancer resection explained by histology?"
    )
    text = "The sex difference in survival after lung cancer resection is explained by histology."
    assert unsupported(text, gender, question) == Unsupported(text)
    other = {"1": article("1", "Lung cancer resection in women", "Survival was 70%.")}
    assert unsupported(text, other, question).text == ""


def test_the_questions_own_wording_no_article_uses_is_not_left_unaddressed() -> None:
    # The local model's answer on PubMedQA 15800018 kept its cited sentences on impaired
    # fasting glucose and mortality after CABG, yet opened with "None of the retrieved articles
    # speaks of mildly, raised, fasting, glucose, bypass, surgery, higher, death and rates
    # together" and read Uncertain: no answer from this evidence says "mildly raised".
    cabg = {
        "1": article("1", "Impaired fasting glucose and mortality after bypass surgery",
                     "Impaired fasting glucose doubled mortality after bypass surgery."),
    }  # fmt: skip
    question = (
        "Is mildly raised fasting glucose before bypass surgery linked to higher death rates?"
    )
    text = (
        "Impaired fasting glucose doubled mortality after bypass surgery [PMID:1]. Mildly raised "
        "fasting glucose before bypass surgery is linked to higher death rates."
    )
    # "Mildly" is the question's adverb, "linked" its framing, "death" the article's
    # "mortality": the article holds the sentence.
    assert unsupported(text, cabg, question) == Unsupported(text)
    # A word no article says still counts ("farmers"), but is not left unaddressed.
    cited = "Impaired fasting glucose doubled mortality after bypass surgery [PMID:1]."
    farmers = f"{cited} Fasting glucose before bypass surgery kills farmers."
    result = unsupported(farmers, cabg, "Does fasting glucose before bypass kill farmers?")
    assert result.text == cited
    assert result.unaddressed() == set()
    # A word an article does say ("fractures") is still unaddressed when only the sentence
    # left out said it.
    vitamin = unsupported(
        "Vitamin D helps T cells [PMID:1]. Vitamin D supplementation prevents fractures.",
        ARTICLES,
        QUESTION,
    )
    assert "fractures" in vitamin.unaddressed()


def test_a_word_left_out_is_addressed_by_the_text_in_another_form() -> None:
    # "falls" is stemmed as "fall" is: a text that says falls addresses it.
    articles = {"1": article("1", "Aspirin and strokes", "Aspirin cut strokes in adults.")}
    question = "Does vitamin D prevent falls in older adults?"
    result = unsupported(
        "Vitamin D prevents falls in older adults. Falls were rarer with vitamin D [PMID:1].",
        articles,
        question,
    )
    assert "falls" in result.words
    assert result.unaddressed() == set()


def test_an_abbreviation_is_named_as_written() -> None:
    # The local model's uncited sentence on CMV and blood pressure was named "blood and cmv and
    # high and infection and linked and pressure".
    articles = {"1": article("1", "Hypoglycaemia and CV events", "Hypoglycaemia raised risk.")}
    question = "Is CMV infection linked to high blood pressure?"
    text = "CMV infection is linked to high blood pressure."
    assert unsupported(text, articles, question).warnings == [
        "an uncited sentence was left out: no retrieved article speaks of CMV, infection, "
        "high, blood and pressure together"
    ]


def test_an_abbreviation_is_held_by_what_it_abbreviates() -> None:
    # The local model restated "Does prostate morphology change results after HoLEP?" and the
    # answer said no article speaks of "shape, prostate, changes, after and holep" together.
    articles = {
        "1": article(
            "1",
            "Does prostate morphology affect outcomes after holmium laser enucleation?",
            "Outcomes of holmium laser enucleation of the prostate differed by prostate "
            "morphology.",
        )
    }
    question = "Does prostate morphology affect outcomes after HoLEP?"
    text = "Prostate morphology affects outcomes after HoLEP."
    assert unsupported(text, articles, question) == Unsupported(text)


def test_what_the_question_asks_of_its_subject_is_no_subject_word() -> None:
    # The local model's uncited "Regular exercise can slow the age-related increase in muscle
    # fatigue" was left out over PubMedQA 12690589, and the answer opened "None of the
    # retrieved articles speaks of exercise, slow, age-related, muscle and fatigue together".
    training = {
        "1": article("1", "Can continuous physical training counteract aging effect on fatigue?",
                     "Continuous exercise counteracts the effect of age on muscle fatigue."),
    }  # fmt: skip
    question = "Can regular exercise slow the age-related increase in muscle fatigue?"
    text = (
        "Continuous exercise counteracts the effect of age on muscle fatigue [PMID:1]. Regular "
        "exercise can slow the age-related increase in muscle fatigue."
    )
    assert unsupported(text, training, question) == Unsupported(text)


def test_a_clinicians_names_are_held_by_the_abstracts_names_for_them() -> None:
    # The local model's uncited answer on being overweight and knee pain regardless of x-ray
    # changes was left out over the study that answers it, which says "BMI" and "radiographic".
    bmi = {
        "7": article(
            "7",
            "Does obesity predict knee pain over fourteen years in women, independently of "
            "radiographic changes?",
            "A greater BMI and change in BMI predicted knee pain, independently of radiographic "
            "knee osteoarthritis.",
        )
    }
    question = (
        "Is being overweight a risk factor for knee pain in women over the long term, "
        "regardless of x-ray changes?"
    )
    text = "Being overweight predicts knee pain in women regardless of x-ray changes."
    assert unsupported(text, bmi, question).text == text
    # A name of another thing is still not held: vitamin D is not vitamin C.
    wrist = "Vitamin D supplementation prevents fractures in older adults."
    assert unsupported(wrist, ARTICLES, QUESTION).text == ""


def test_an_adverb_a_comparative_and_an_operation_are_said_by_the_abstracts_words() -> None:
    # "None of the retrieved articles speaks of adrenal, masses, bigger, cm, removed,
    # laparoscopically and safely together", over the article that answers the question.
    adrenal = {
        "8": article(
            "8",
            "Is laparoscopic adrenalectomy safe and effective for adrenal masses larger than 7 cm?",
            "LA for adrenal masses larger than 7 cm is a safe and feasible technique.",
        )
    }
    question = "Can adrenal masses bigger than 7 cm be removed laparoscopically safely?"
    text = "Adrenal masses bigger than 7 cm can be removed laparoscopically and safely."
    assert unsupported(text, adrenal, question).text == text
    # A subject of the question the article does not say is still not held.
    asked = f"{question[:-1]} in pheochromocytoma?"
    said = "Adrenal masses bigger than 7 cm in pheochromocytoma can be removed laparoscopically."
    assert unsupported(said, adrenal, asked).text == ""
