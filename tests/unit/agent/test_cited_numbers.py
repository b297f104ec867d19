"""A number a sentence cites an article for must be in that article."""

from __future__ import annotations

from medlit.checks import enforce_citations
from medlit.checks.cited_numbers import numbers_in
from medlit.types import AbstractSection, Article
from tests.unit._checks import checked
from tests.unit._sjogren import SJOGREN


def _article(pmid: str, text: str, year: int | None = None) -> Article:
    return Article(
        pmid=pmid,
        title=f"Trial {pmid}",
        abstract=[AbstractSection(label="", category="", text=text)],
        year=year,
    )


ARTICLES = {
    # What the local model cited for "A daily dose of 500 mg for fifty days is recommended".
    "1": _article(
        "1",
        "Forty-six participants took 140,000 IU of vitamin D; 25(OH)D rose to 45.9 ng/ml and "
        "%Tregs to 5.9 in type 2 diabetes.",
        year=2010,
    ),
    "2": _article("2", "Vitamin C 500 mg daily for 50 days cut CRPS from 10.1% to 2.4%."),
}


def test_numbers_are_read_as_written_and_spelled() -> None:
    assert numbers_in("Forty-six took 140,000 IU; 23.9 ng/ml; fifty days; 0.50") == [
        (140000.0, 0),
        (23.9, 1),
        (0.5, 2),
        (46.0, 0),
        (50.0, 0),
    ]


def test_number_words_the_pattern_reads_case_blind_are_read_not_a_crash() -> None:
    # "ſ" (long s) and "ı" (dotless i) match s and i case-blind, but lower() keeps them.
    assert numbers_in("ſix took ſixty-ſeven; fıve of FİVE; Sixty-one") == [
        (6.0, 0),
        (67.0, 0),
        (5.0, 0),
        (5.0, 0),
        (61.0, 0),
    ]
    kept, _ = checked("unsourced-numbers", "Of them ſixty-ſeven stopped early [PMID:2].", ARTICLES)
    assert kept == ""


def test_a_sentence_whose_number_its_article_lacks_is_left_out() -> None:
    text = "Supplementation raised Tregs [PMID:1]. A daily dose of 500 mg is advised [PMID:1]."
    kept, warnings = checked("unsourced-numbers", text, ARTICLES)
    assert kept == "Supplementation raised Tregs [PMID:1]."
    assert warnings == [
        "a sentence was left out: it cited PMID 1 for 500, a number that article does not give"
    ]


def test_only_the_citation_that_lacks_the_number_goes() -> None:
    text = "A daily dose of 500 mg cut CRPS [PMID:1][PMID:2]."
    kept, warnings = checked("unsourced-numbers", text, ARTICLES)
    assert kept == "A daily dose of 500 mg cut CRPS [PMID:2]."
    assert warnings[0].startswith("a citation was removed: it cited PMID 1 for 500")


def test_a_citation_written_after_the_full_stop_is_checked_with_its_sentence() -> None:
    # Cut at syntok's sentence starts, "[PMID:1]" opened the next sentence: the dose went
    # uncited and unchecked, and the Tregs sentence was checked against the wrong article.
    for text in (
        "A daily dose of 500 mg is advised. [PMID:1] Supplementation raised Tregs. [PMID:1]",
        "A daily dose of 500 mg is advised.\n[PMID:1]\nSupplementation raised Tregs.\n[PMID:1]",
    ):
        cited = enforce_citations(text, ARTICLES).text
        kept, warnings = checked("unsourced-numbers", cited, ARTICLES)
        assert kept.strip() == "Supplementation raised Tregs [PMID:1]."
        assert warnings[0].startswith("a sentence was left out: it cited PMID 1 for 500")
    # Its sentence pieces alone keep the citation with the sentence before it.
    kept, warnings = checked(
        "unsourced-numbers",
        "A daily dose of 500 mg is advised. [PMID:1] Supplementation raised Tregs. [PMID:1]",
        ARTICLES,
    )
    assert kept == "Supplementation raised Tregs. [PMID:1]" and len(warnings) == 1


def test_rounded_spelled_small_year_and_name_numbers_pass() -> None:
    text = (
        "In 2010, 46 participants took 140,000 IU and levels rose to 46 ng/ml [PMID:1]. "
        "Two groups in type 2 diabetes had %Tregs near 6 [PMID:1]. "
        "CRPS fell from 10% to 2.4% over fifty days [PMID:2]."
    )
    assert checked("unsourced-numbers", text, ARTICLES) == (text, [])


def test_a_small_number_with_decimals_or_a_percent_sign_is_checked_a_p_threshold_is_not() -> None:
    # 2.4% and 5.9 are the articles'; 3.1% and an odds ratio of 1.45 are nowhere in them.
    kept = "CRPS fell to 2.4% (P < 0.05) [PMID:2]. The %Tregs reached 5.9 in two groups [PMID:1]."
    assert checked("unsourced-numbers", kept, ARTICLES) == (kept, [])
    for invented, shown in (
        ("CRPS fell to 3.1% [PMID:2].", "3.1"),
        ("The odds ratio was 1.45 [PMID:2].", "1.45"),
        ("The odds ratio was 0.50 [PMID:2].", "0.50"),
        # A number is named as written: the local model's 22428608 was shown as 2.24286e+07.
        ("The rate was 22428608 [PMID:2].", "22428608"),
    ):
        text, warnings = checked("unsourced-numbers", f"{kept} {invented}", ARTICLES)
        assert text == kept and len(warnings) == 1, (text, warnings)
        assert f"for {shown}, a number that article does not give" in warnings[0]
    text, warnings = checked("unsourced-numbers", "CRPS fell by 8 % [PMID:2].", ARTICLES)
    assert text == "" and "8, a number that article does not give" in warnings[0]


def test_a_number_given_for_another_subject_of_the_article_is_not_its_source() -> None:
    # The article gives 68% for fatigue; the sentence gives it for fibromyalgia.
    text = "Fibromyalgia affects 68% of patients with primary Sjögren's syndrome [PMID:11053064]."
    kept, warnings = checked("unsourced-numbers", text, {"11053064": SJOGREN})
    assert kept == ""
    assert warnings == [
        "a sentence was left out: it cited PMID 11053064 for 68, a number that article gives for "
        "fatigue, not fibromyalgia"
    ]
    for said in (
        "Fatigue affects 68% of patients with primary Sjögren's syndrome [PMID:11053064].",
        "Fibromyalgia was found in 12% of patients with pSS [PMID:11053064].",
        # Two findings in one sentence: each number is read with its own clause.
        "Fibromyalgia was found in 12% of patients with pSS, while fatigue was reported by 68% "
        "[PMID:11053064].",
    ):
        assert checked("unsourced-numbers", said, {"11053064": SJOGREN}) == (said, [])


POETYK = Article(
    pmid="36370130",
    title=(
        "Deucravacitinib versus placebo and apremilast in moderate to severe plaque psoriasis: "
        "the phase 3 POETYK PSO-1 trial"
    ),
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text=(
                "At week 16, PASI 75 response rates were 58.4% with deucravacitinib versus 12.7% "
                "with placebo and 35.1% with apremilast."
            ),
        )
    ],
)


def test_a_number_is_given_for_the_subjects_beside_it_not_the_whole_sentences() -> None:
    # One arm of a three-arm trial, named by the trial and the disease: 58.4% is given for
    # deucravacitinib, not for apremilast, whose 35.1% the sentence leaves out.
    for said in (
        "In the POETYK PSO-1 trial, PASI 75 was 58.4% with deucravacitinib versus 12.7% with "
        "placebo [PMID:36370130].",
        "Deucravacitinib is effective in plaque psoriasis: PASI 75 was 58.4% versus 12.7% with "
        "placebo [PMID:36370130].",
    ):
        assert checked("unsourced-numbers", said, {"36370130": POETYK}) == (said, [])
    # The number given for another subject beside it is still caught.
    swapped = "In the POETYK PSO-1 trial, PASI 75 was 35.1% with psoriasis [PMID:36370130]."
    kept, warnings = checked("unsourced-numbers", swapped, {"36370130": POETYK})
    assert kept == "" and "35.1, a number that article gives for " in warnings[0]
