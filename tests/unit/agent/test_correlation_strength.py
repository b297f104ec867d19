"""A correlation called strong must be strong by its own coefficient."""

from __future__ import annotations

import pytest

from medlit.checks.correlation_strength import overstated
from tests.unit._checks import checked


def test_strong_said_of_a_weak_coefficient_is_taken_out() -> None:
    # The local model's sentence under "Verdict: Yes" to whether PRISM predicts PICU stay.
    said = (
        "The study [PMID:14612308] found a strong correlation between PRISM and length of PICU "
        "stay (LOS) (Spearman's coefficient of 0.2 with p<0.001)."
    )
    text, warnings = checked("overstated-correlations", said, {})
    assert text == said.replace("a strong correlation", "a correlation")
    assert warnings == [
        'a strength was taken out: "strong", of a correlation whose coefficient is 0.2'
    ]
    opening = "Excellent agreement was found (kappa 0.35) [PMID:1]."
    assert (
        checked("overstated-correlations", opening, {})[0]
        == "Agreement was found (kappa 0.35) [PMID:1]."
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "A strong correlation was found (r = 0.82) [PMID:1].",  # strong indeed
        "A strong association with mortality was found (OR 3.2) [PMID:1].",  # no coefficient
        "There was a strong correlation between the scores (p < 0.001) [PMID:1].",  # a p value
        "A highly significant correlation was found (r = 0.3) [PMID:1].",  # significance
        "A weak correlation was found (r = 0.2) [PMID:1].",
    ],
)
def test_strength_its_coefficient_bears_out_or_none_given_stands(sentence: str) -> None:
    assert overstated(sentence) is None
    assert checked("overstated-correlations", sentence, {}) == (sentence, [])


def test_an_uncited_sentence_is_not_judged() -> None:
    said = "A strong correlation was found (r = 0.2)."
    assert overstated(said) == "strong"
    assert checked("overstated-correlations", said, {}) == (said, [])
