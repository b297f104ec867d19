"""A finding copied word for word must keep the subject its article gives it
(:mod:`medlit.checks.swapped_subjects`)."""

from __future__ import annotations

from medlit.checks.swapped_subjects import swapped_subject
from medlit.types import AbstractSection, Article
from tests.unit._checks import checked

LVAD = Article(
    pmid="9107172",
    title="Bridge experience with long-term implantable left ventricular assist devices. Are "
    "they an alternative to transplantation?",
    abstract=[
        AbstractSection(
            label="METHODS AND RESULTS",
            category="RESULTS",
            text="Fifty-eight LVADs were inserted over 5 years, with a survival rate of 74%. "
            "Ventricular arrhythmias were well tolerated in all patients except in cases of "
            "early perioperative right ventricular failure, with no deaths. Right ventricular "
            "failure occurred in one third of patients.",
        )
    ],
)
# What the local model wrote, asked whether LVADs are an alternative to a heart transplant.
SWAPPED = (
    "The study also found that LVAD support was well tolerated in all patients except in cases "
    "of early perioperative right ventricular failure, with no deaths [PMID:9107172]."
)


def test_a_finding_given_another_subject_of_its_article_loses_its_citation() -> None:
    swap = swapped_subject(SWAPPED, LVAD)
    assert swap is not None
    assert (swap.brought, swap.dropped) == ("LVAD support", "Ventricular arrhythmias")
    kept, warnings = checked(
        "swapped-subjects", f"LVADs were inserted [PMID:9107172]. {SWAPPED}", LVAD_BY
    )
    assert kept == "LVADs were inserted [PMID:9107172]."
    assert warnings == [
        "a sentence was left out: it cited PMID 9107172 for a finding on 'LVAD support' that "
        "article gives for 'Ventricular arrhythmias'"
    ]


LVAD_BY = {"9107172": LVAD}


def test_the_finding_with_its_own_subject_stays_framed_or_not() -> None:
    for said in (
        "Ventricular arrhythmias were well tolerated in all patients except in cases of early "
        "perioperative right ventricular failure, with no deaths [PMID:9107172].",
        "The study found that ventricular arrhythmias were well tolerated in all patients "
        "except in cases of early perioperative right ventricular failure [PMID:9107172].",
        # The subject narrowed or widened with words its sentence says stays.
        "In LVAD recipients, ventricular arrhythmias were well tolerated in all patients "
        "except in cases of early perioperative right ventricular failure [PMID:9107172].",
        # A subject without a technical word, or a pronoun, is not judged.
        "They were well tolerated in all patients except in cases of early perioperative "
        "right ventricular failure [PMID:9107172].",
        # Fewer words in a row than a copy: a sentence of its own.
        "LVAD support was well tolerated in all patients [PMID:9107172].",
    ):
        assert checked("swapped-subjects", said, LVAD_BY) == (said, []), said


def test_a_finding_the_article_gives_two_subjects_may_have_either() -> None:
    both = LVAD.model_copy(
        update={
            "abstract": [
                *LVAD.abstract,
                AbstractSection(
                    label="CONCLUSIONS",
                    category="CONCLUSIONS",
                    text="LVAD support was well tolerated in all patients except in cases of "
                    "early perioperative right ventricular failure.",
                ),
            ]
        }
    )
    assert swapped_subject(SWAPPED, both) is None


def test_an_abbreviation_the_article_defines_is_its_long_form() -> None:
    defined = Article(
        pmid="2",
        title="Atrial fibrillation after surgery",
        abstract=[
            AbstractSection(
                label="RESULTS",
                category="RESULTS",
                text="Postoperative atrial fibrillation (POAF) was associated with a longer "
                "hospital stay and higher costs in elderly patients.",
            )
        ],
    )
    said = (
        "POAF was associated with a longer hospital stay and higher costs in elderly patients "
        "[PMID:2]."
    )
    assert swapped_subject(said, defined) is None
