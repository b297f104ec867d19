"""A number an article gives as a level, said as a change (or the other way), goes
(:mod:`medlit.checks.level_changes`)."""

from __future__ import annotations

from medlit.checks.level_changes import kinds_in, level_change_in
from tests.unit._checks import checked
from tests.unit.agent.articles import article

# PubMedQA 17606778 (gold yes): 4.2% is the prevalence in the 200-mg group, a level.
VITAMIN_C = article(
    "17606778",
    "Can vitamin C prevent complex regional pain syndrome in patients with wrist fractures?",
    "The prevalence of complex regional pain syndrome was 2.4% (eight of 328) in the vitamin C "
    "group and 10.1% (ten of ninety-nine) in the placebo group (p=0.002); all of the affected "
    "patients were elderly women. Analysis of the different doses of vitamin C showed that the "
    "prevalence of complex regional pain syndrome was 4.2% (four of ninety-six) in the 200-mg "
    "group (relative risk, 0.41; 95% confidence interval, 0.13 to 1.27), 1.8% (two of 114) in "
    "the 500-mg group (relative risk, 0.17; 95% confidence interval, 0.04 to 0.77), and 1.7% "
    "(two of 118) in the 1500-mg group.",
)
# An article giving its number as a change only.
STATINS = article(
    "90000001",
    "Statins and stroke",
    "Statin therapy reduced the incidence of stroke by 21% over five years. Stroke occurred in "
    "3.1% of the treated patients.",
)
ARTICLES = {"17606778": VITAMIN_C, "90000001": STATINS}


def test_a_level_said_as_a_change_goes() -> None:
    # What the local model wrote (issue 63): the prevalence, said as a reduction.
    said = (
        "Vitamin C reduced the prevalence of complex regional pain syndrome by 4.2% in the "
        "200-mg group [PMID:17606778]."
    )
    assert level_change_in(said, VITAMIN_C) == ("4.2%", "change", "level")
    kept = "The prevalence was 4.2% in the 200-mg group [PMID:17606778]."
    text, warnings = checked("level-changes", f"{said} {kept}", ARTICLES)
    assert text == kept
    assert warnings == [
        "a sentence was left out: it cited PMID 17606778 for 4.2% said as a change, where that "
        "article gives it as a level"
    ]


def test_a_change_said_as_a_level_goes() -> None:
    said = "The incidence of stroke was 21% with statin therapy [PMID:90000001]."
    assert level_change_in(said, STATINS) == ("21%", "level", "change")
    text, warnings = checked("level-changes", said, ARTICLES)
    assert text == ""
    assert warnings == [
        "a sentence was left out: it cited PMID 90000001 for 21% said as a level, where that "
        "article gives it as a change"
    ]


def test_only_the_wrong_citation_goes() -> None:
    said = "Stroke was reduced by 21% [PMID:90000001][PMID:17606778]."
    # 21% is not the vitamin C article's at all: that is unsourced-numbers' to say.
    assert checked("level-changes", said, ARTICLES) == (said, [])
    said = "The risk fell by 4.2% [PMID:90000001][PMID:17606778]."
    text, _ = checked("level-changes", said, ARTICLES)
    assert "17606778" not in text and "90000001" in text


def test_true_changes_and_levels_stay() -> None:
    for said in (
        "Statins reduced the incidence of stroke by 21% [PMID:90000001].",
        "Statins gave a 21% reduction in stroke [PMID:90000001].",
        "Stroke occurred in 3.1% of treated patients [PMID:90000001].",
        "Prevalence fell from 10.1% with placebo to 4.2% with 200 mg [PMID:17606778].",
        "The prevalence was 4.2% (four of ninety-six) in the 200-mg group [PMID:17606778].",
        # A confidence level is neither.
        "The relative risk was 0.41 (95% CI 0.13 to 1.27) [PMID:17606778].",
    ):
        assert checked("level-changes", said, ARTICLES) == (said, [])


def test_what_a_number_is_said_as() -> None:
    assert kinds_in("a 30% reduction in mortality") == [(30.0, 0, "change", False)]
    assert kinds_in("a relative risk reduction of 25%") == [(25.0, 0, "change", False)]
    assert kinds_in("decreased by up to 30%") == [(30.0, 0, "change", False)]
    assert kinds_in("was 30% lower") == [(30.0, 0, "change", False)]
    assert kinds_in("a 2.5-fold increase") == [(2.5, 1, "change", True)]
    assert kinds_in("45 percent of patients") == [(45.0, 0, "level", False)]
    assert kinds_in("decreased from 20% to 10%") == [
        (20.0, 0, "level", False),
        (10.0, 0, "level", False),
    ]
    # "lower" names the outcome compared, not a change: two levels.
    assert kinds_in("a lower rate of reintubation (4% vs 23%)") == [
        (4.0, 0, "level", False),
        (23.0, 0, "level", False),
    ]
    assert kinds_in("95% confidence interval") == []
    # A signed number, or one in percentage points, is a difference of two levels.
    assert kinds_in("-8.7 percentage points for CT") == [(8.7, 1, "change", False)]
    assert kinds_in("a rise (+12%)") == [(12.0, 0, "change", False)]
    assert kinds_in("in 10-20% of patients") == [(20.0, 0, "level", False)]
