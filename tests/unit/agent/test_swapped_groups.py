"""A number an article gives for one group, cited for the opposite group, goes
(:mod:`medlit.checks.swapped_groups`)."""

from __future__ import annotations

from medlit.checks.swapped_groups import swapped_group, swapped_named_group
from tests.unit._checks import checked
from tests.unit.agent.articles import article

# PubMedQA 27448572 (gold yes): shorter treatment, more returns into care.
DEPRESSION = article(
    "27448572",
    "Is duration of psychological treatment for depression related to return into treatment?",
    "Patients with a shorter duration of treatment (5-250 min; 251-500 min and 751-1000 min) "
    "were slightly more likely to return (reference group:>1000 min) (HR 1.19 95 % CI "
    "1.13-1.26). The results suggest that a longer duration of treatment may prevent return "
    "into mental health care in some groups.",
)
ARTICLES = {"27448572": DEPRESSION}


def test_a_number_given_for_the_opposite_group_goes() -> None:
    # What the local model wrote: every number and the comparison are the article's.
    said = (
        "A longer duration of treatment (5-250 min; 251-500 min and 751-1000 min) was slightly "
        "more likely to return into mental health care compared to patients with a shorter "
        "duration of treatment (reference group:>1000 min) [PMID:27448572]."
    )
    assert swapped_group(said, DEPRESSION) == ("5-250", "longer", "shorter")
    kept = "A longer duration of treatment may prevent return into care [PMID:27448572]."
    text, warnings = checked("swapped-groups", f"{said} {kept}", ARTICLES)
    assert text == kept
    assert warnings == [
        "a sentence was left out: it cited PMID 27448572 for 'longer' 5-250, where that "
        "article says 'shorter'"
    ]


def test_the_articles_own_numbers_and_words_stay() -> None:
    for said in (
        "Patients with a shorter duration of treatment (5-250 min) were more likely to return "
        "[PMID:27448572].",
        # No opposite word before the number, or one the article also has there.
        "Return was more likely after 5-250 min of treatment [PMID:27448572].",
        "The hazard ratio was 1.19 for shorter treatment [PMID:27448572].",
    ):
        assert checked("swapped-groups", said, ARTICLES) == (said, [])


def test_a_group_named_without_a_number_read_the_other_way_goes() -> None:
    # The local model's rerun wrote the same swap with no number to align on.
    said = (
        "A longer duration of treatment is associated with a slightly higher risk of return "
        "into mental health care [PMID:27448572]."
    )
    assert swapped_named_group(said, DEPRESSION) == ("longer duration treatment", "shorter")
    text, warnings = checked("swapped-groups", said, ARTICLES)
    assert text == ""
    assert warnings == [
        "a sentence was left out: it cited PMID 27448572 for what 'longer duration treatment' "
        "does, where that article says it of 'shorter'"
    ]
    # Said the right way round, by either group, it stays.
    for right in (
        "A longer duration of treatment is associated with a lower risk of return [PMID:27448572].",
        "A shorter duration of treatment is associated with a higher risk of return "
        "[PMID:27448572].",
        "A longer duration of treatment may prevent return into care [PMID:27448572].",
    ):
        assert checked("swapped-groups", right, ARTICLES) == (right, [])


def test_a_sentence_naming_both_groups_is_not_read_for_either() -> None:
    # Which group "lower" belongs to is the sentence's structure, not its words.
    said = (
        "Patients with a longer duration of treatment had a lower risk of return than those "
        "with a shorter duration of treatment [PMID:27448572]."
    )
    assert swapped_named_group(said, DEPRESSION) is None
    assert checked("swapped-groups", said, ARTICLES) == (said, [])
