"""What a cited study set out to test must not be cited as what it found."""

from __future__ import annotations

from medlit.checks.stated_aims import aim_sentences, stated_aim
from medlit.types import AbstractSection, Article
from tests.unit._checks import checked as after_check

AIM = (
    "The purpose of this study was to explore whether remote physician-examiners can replace "
    "on-site physician-examiners in an OSCE, and to determine the feasibility of this new "
    "examination method."
)


def _osce(conclusion: str) -> Article:
    """PubMedQA 24606627, shortened, with ``conclusion``."""
    return Article(
        pmid="24606627",
        title="The objective structured clinical examination: can physician-examiners "
        "participate from a distance?",
        abstract=[
            AbstractSection(
                label="OBJECTIVES",
                category="OBJECTIVES",
                text="We developed a remote examiner OSCE (reOSCE) that was integrated into a "
                f"traditional OSCE. {AIM}",
            ),
            AbstractSection(
                label="RESULTS",
                category="RESULTS",
                text="Statistically significant correlations were found between LE and RE "
                "checklist scores for history taking (r = 0.64-r = 0.80).",
            ),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
    )


# A conclusion that does not answer the aim yes.
OSCE = _osce("Global ratings of remote examiners varied, and they cannot yet stand in for LEs.")
# The local model's sentence, under "Can student examiners replace faculty examiners?".
WRONG = (
    "The study found that remote physician-examiners can replace on-site physician-examiners "
    "in an OSCE, and to determine the feasibility of this new examination method "
    "[PMID:24606627]."
)


def test_an_aim_stated_as_a_finding_loses_its_citation() -> None:
    right = "Checklist scores of local and remote examiners correlated [PMID:24606627]."
    checked, warnings = after_check("aims-as-findings", f"{WRONG} {right}", {OSCE.pmid: OSCE})
    assert checked == right
    assert warnings == [
        "a sentence was left out: it cited PMID 24606627 for what that study set out to "
        f'test: "{AIM}"'
    ]


def test_an_aim_the_conclusion_answers_yes_is_a_finding() -> None:
    # The article's own conclusion: OSCE ratings were "reasonably comparable".
    confirmed = _osce(
        "This preliminary study demonstrated that OSCE ratings by LEs and REs were reasonably "
        "comparable when using checklists."
    )
    assert stated_aim(WRONG, OSCE) == AIM
    assert stated_aim(WRONG, confirmed) is None


def test_findings_and_aims_said_as_aims_stand() -> None:
    assert aim_sentences(OSCE) == [AIM]
    for sentence in (
        # the article's own finding, and a sentence reporting the aim as an aim
        "Significant correlations were found between LE and RE checklist scores for history "
        "taking [PMID:24606627].",
        "The study examined whether remote physician-examiners can replace on-site "
        "physician-examiners in an OSCE [PMID:24606627].",
        "Remote examiners can help [PMID:24606627].",  # too few words to judge
    ):
        assert stated_aim(sentence, OSCE) is None
    # Where the results say it as well, it is a finding.
    found = OSCE.model_copy(
        update={
            "abstract": [
                *OSCE.abstract,
                AbstractSection(
                    label="RESULTS",
                    category="RESULTS",
                    text="Remote physician-examiners could replace on-site physician-examiners "
                    "in the OSCE, and the new examination method was feasible.",
                ),
            ]
        }
    )
    said = (
        "Remote physician-examiners can replace on-site physician-examiners in an OSCE, and "
        "the new examination method is feasible [PMID:24606627]."
    )
    assert stated_aim(said, OSCE) is not None
    assert stated_aim(said, found) is None


def test_a_title_stating_the_finding_is_a_finding() -> None:
    said = (
        "Remote physician-examiners can replace on-site physician-examiners in an OSCE, and "
        "the new examination method is feasible [PMID:24606627]."
    )
    titled = OSCE.model_copy(
        update={
            "title": "Remote physician-examiners can replace on-site examiners in an OSCE: a "
            "feasible new examination method"
        }
    )
    assert stated_aim(said, OSCE) is not None
    assert stated_aim(said, titled) is None
