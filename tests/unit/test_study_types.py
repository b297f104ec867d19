"""Study designs: from PubMed's publication types, or as the article states its own."""

from __future__ import annotations

import pytest

from medlit.types import AbstractSection, Article, StudyType, study_type_from_text


def article(
    title: str,
    methods: str = "",
    *,
    background: str = "",
    label: str = "METHODS",
    types: list[str] | None = None,
) -> Article:
    """An article with a background section and (if given) a ``label`` section of ``methods``."""
    sections = [AbstractSection(label="BACKGROUND", category="BACKGROUND", text=background)]
    if methods:
        sections.append(AbstractSection(label=label, text=methods))
    return Article(pmid="1", title=title, abstract=sections, publication_types=types or [])


@pytest.mark.parametrize(
    ("methods", "expected"),
    [
        # Methods sentences of PubMedQA articles that PubMed lists as "Journal Article" only.
        ("Meta-analysis was performed examining physician revisitation rates.",
         StudyType.SYSTEMATIC_REVIEW),
        ("A systematic review of longitudinal volumetric studies using MRI.",
         StudyType.SYSTEMATIC_REVIEW),
        ("This study was a double-blind, multi-centre, randomized, placebo-controlled trial.",
         StudyType.RCT),
        ("In total, 148 painful joints were randomized to IA triamcinolone.", StudyType.RCT),
        ("416 patients with 427 wrist fractures were randomly allocated to placebo or vitamin C.",
         StudyType.RCT),
        # Trials in PubMedQA the first rules read as "other" or observational.
        ("We randomized 42 patients who were admitted for major abdominal surgery to either the "
         "control or study group (n = 21 in either group).", StudyType.RCT),
        ("69 consecutive patients that underwent septoplasty. The patients were randomly divided "
         "into 2 groups.", StudyType.RCT),
        ("The authors studied 20 patients by randomly dividing them into 2 groups.", StudyType.RCT),
        ("Prospective computer-generated randomization of 206 patients into two study groups.",
         StudyType.RCT),
        # ...but not an order, nor a split of data.
        ("We randomized the order of the images shown to each reader.", StudyType.OTHER),
        ("The cohort was randomly divided into a derivation and a validation set.",
         StudyType.OBSERVATIONAL),
        # Series and follow-ups the first rules read as "other" (PubMedQA methods).
        ("We reviewed 500 consecutive cases with acute aSAH with surgical indication.",
         StudyType.OBSERVATIONAL),
        ("Adolescents participating since birth in a longitudinal study of IUCE reported acts.",
         StudyType.OBSERVATIONAL),
        ("The mean follow-up was 26 months (range 1-96 months).", StudyType.OBSERVATIONAL),
        ("18 consecutive laparoscopic adrenalectomies were performed from 1996 to 2005.",
         StudyType.OBSERVATIONAL),
        ("0.6 mg NAC was given for three consecutive days.", StudyType.OTHER),
        ("A prospective cohort of 481 newly confirmed TB patients was followed.",
         StudyType.OBSERVATIONAL),
        ("Data from 109 patients with IH were retrospectively analyzed.", StudyType.OBSERVATIONAL),
        ("A population based cross-sectional study of 4200 randomly selected adults.",
         StudyType.OBSERVATIONAL),  # randomly selected is a sample, not an allocation
        # Randomly assigned to readers: a reading order, not a treatment.
        ("Units were randomly assigned to two blinded readers, who recorded stone size.",
         StudyType.OTHER),
        ("We report a 9-year-old boy with osteogenesis imperfecta.", StudyType.CASE_REPORT),
        ("The aim was to present a new scoring method.", StudyType.OTHER),
        ("Questionnaires were sent to all members.", StudyType.OTHER),
    ],
)  # fmt: skip
def test_the_design_an_article_states_in_its_methods(methods: str, expected: StudyType) -> None:
    assert study_type_from_text(article("A question?", methods)) is expected


def test_the_title_counts_and_a_design_or_setting_label_is_a_methods_section() -> None:
    titled = article("Statins after stroke: a systematic review and meta-analysis")
    assert study_type_from_text(titled) is StudyType.SYSTEMATIC_REVIEW
    design = article("Q?", "A randomised controlled trial in 12 centres.", label="DESIGN")
    assert study_type_from_text(design) is StudyType.RCT


def test_what_the_background_says_of_other_studies_is_not_this_ones_design() -> None:
    cited = article("Q?", "Questionnaires were sent.", background="Earlier meta-analyses of "
                    "randomized controlled trials found a benefit.")  # fmt: skip
    assert study_type_from_text(cited) is StudyType.OTHER
    assert cited.study_type is StudyType.OTHER


def test_publication_types_come_first_and_the_text_fills_in_when_they_name_no_design() -> None:
    trial = "Patients were randomized to aspirin or placebo."
    assert article("Q?", trial, types=["Journal Article"]).study_type is StudyType.RCT
    # PubMed's indexers say what it is: a secondary analysis of a trial's cohort.
    indexed = article("Q?", trial, types=["Journal Article", "Observational Study"])
    assert indexed.study_type is StudyType.OBSERVATIONAL


def test_an_animal_study_is_no_clinical_trial() -> None:
    rabbits = article("Q?", "Hearts were randomized into one of four series.")
    rabbits.mesh_terms = ["Animals", "Rabbits", "Ischemic Preconditioning"]
    assert study_type_from_text(rabbits) is StudyType.OTHER
    rabbits.mesh_terms.append("Humans")  # and people: the design counts
    assert study_type_from_text(rabbits) is StudyType.RCT
