"""A systematic review or randomised trial an answer names must be the cited article's."""

from __future__ import annotations

from medlit.types import AbstractSection, Article
from tests.unit._checks import checked as after_check

PSA = Article(
    pmid="15466981",
    title="Prostate-specific antigen and free prostate-specific antigen in the early detection "
    "of prostate cancer: do combination tests improve detection?",
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="We conducted a nested case-control study of 429 cases and 1,640 controls "
            "within the Physicians' Health Study.",
        ),
    ],
)
TRIAL = Article(
    pmid="2",
    title="Aspirin after stroke",
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="Patients were randomised to aspirin or placebo.",
        )
    ],
)
REVIEW = Article(pmid="3", title="Aspirin after stroke", publication_types=["Meta-Analysis"])
# An unstructured abstract: no methods section for the design reader.
ASSIGNED = Article(
    pmid="4",
    title="Aspirin after stroke",
    abstract=[AbstractSection(text="Patients were randomly assigned to aspirin or placebo.")],
)


def test_a_design_the_cited_article_does_not_have_is_taken_out() -> None:
    # The local model's sentence over a nested case-control study.
    text = (
        "Combining PSA and free PSA tests improves early detection, as demonstrated by a "
        "systematic review of 429 cases and 1,640 controls [PMID:15466981]."
    )
    checked, warnings = after_check("wrong-designs", text, {PSA.pmid: PSA})
    assert checked == (
        "Combining PSA and free PSA tests improves early detection, as demonstrated by a "
        "study of 429 cases and 1,640 controls [PMID:15466981]."
    )
    assert warnings == [
        'a study design was taken out: "systematic review", which no article it cites reports'
    ]


def test_the_design_opening_a_sentence_and_in_the_plural() -> None:
    articles = {PSA.pmid: PSA, TRIAL.pmid: TRIAL}
    opening = "A large, double-blind randomized controlled trial [PMID:15466981] found X."
    assert after_check("wrong-designs", opening, articles)[0] == "A study [PMID:15466981] found X."
    plural = "Randomized controlled trials [PMID:15466981] show X. The meta-analysis found Y "
    plural += "[PMID:15466981]."
    checked, warnings = after_check("wrong-designs", plural, articles)
    assert checked == "Studies [PMID:15466981] show X. The study found Y [PMID:15466981]."
    assert len(warnings) == 2


def test_a_design_the_article_has_or_names_stands() -> None:
    articles = {PSA.pmid: PSA, TRIAL.pmid: TRIAL, REVIEW.pmid: REVIEW, ASSIGNED.pmid: ASSIGNED}
    for text in (
        "A randomized trial [PMID:4] found X.",  # "randomly assigned", in no methods section
        "A randomized controlled trial [PMID:2] found X.",  # "randomised" in its methods
        "An RCT [PMID:2] found X.",
        "A meta-analysis [PMID:3] found X.",  # its publication type
        "A meta-analysis of randomized trials [PMID:3] found X.",
        "A randomized trial [PMID:15466981][PMID:2] found X.",  # one of those cited has it
        "A systematic review found X.",  # cites nothing: nothing to hold it to
        "A case-control study [PMID:15466981] found X.",  # only strength-claiming designs
        "A non-randomized study [PMID:15466981] found X.",
    ):
        assert after_check("wrong-designs", text, articles) == (text, [])
