"""Names a letter or a number tells apart (:mod:`medlit.words.qualified_names`)."""

from __future__ import annotations

import pytest

from medlit.words.qualified_names import describe, mismatched, qualified_names, qualifiers_match


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Does vitamin D supplementation prevent fractures?", {"vitamin": {"D"}}),
        ("Vitamins A, D and E were low; 25-hydroxyvitamin D3 rose.",
         {"vitamin": {"A", "D", "E", "D3"}}),
        ("CRPS type I after wrist fractures", {"type": {"1"}}),
        ("stage I-III and stage IV", {"stage": {"1", "2", "3", "4"}}),
        ("stage IIIA disease", {"stage": {"3A"}}),
        ("IL-6 and IL-10 rose; TNF-alpha and TGF-β fell", {"il": {"6", "10"},
                                                           "tnf": {"α"}, "tgf": {"β"}}),
        ("IL-6 and -10", {"il": {"6", "10"}}),  # a list, not the range 6 to 10
        ("BRCA1/2 carriers, CD4 counts", {"brca": {"1", "2"}, "cd": {"4"}}),
        ("HPV 16/18 and HIV-1", {"hpv": {"16", "18"}, "hiv": {"1"}}),
        ("PD-L1 and HLA-B27", {"pd": {"L1"}, "hla": {"B27"}}),
        ("grade ≥3 toxicity", {"grade": {"*"}}),
        ("Phase III trial of factor V Leiden carriers", {"phase": {"3"}, "factor": {"5"}}),
        ("hepatitis B and C", {"hepatitis": {"B", "C"}}),
        # Not names: statistics, plain abbreviations, hyphenated words, lower-case letters.
        ("OR 2.1 (95% CI 1.2-3.4), BMI 30, COPD and HIV, a type of surgery", {}),
        ("follow-up, self-care, long-term, non-small cell, X-ray", {}),
        ("at this stage a patient may", {}),
        ("class 95% of the time, at stage 2.5", {}),
    ],
)  # fmt: skip
def test_names_are_read(text: str, names: dict[str, set[str]]) -> None:
    assert qualified_names(text) == {head: frozenset(q) for head, q in names.items()}


def test_a_typed_question_is_read_whatever_its_case() -> None:
    assert qualified_names("does vitamin d help? is cox-2 safe? brca1", fold_case=True) == {
        "vitamin": frozenset({"D"}),
        "cox": frozenset({"2"}),
        "brca": frozenset({"1"}),
    }
    assert qualified_names("does vitamin d help?") == {}  # written text: "d" is no name


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [("D", "D3", True), ("3", "3A", True), ("2", "*", True), ("1", "10", False),
     ("C", "D", False), ("B12", "B6", False), ("L1", "1", False)],
)  # fmt: skip
def test_qualifiers_match(a: str, b: str, same: bool) -> None:
    assert qualifiers_match(a, b) is same
    assert qualifiers_match(b, a) is same


def test_a_claim_mismatches_only_a_source_that_names_the_head_otherwise() -> None:
    claim = qualified_names("Vitamin D reduced pain after COX-2 inhibition")
    assert mismatched(claim, qualified_names("Vitamin C reduced pain")) == [
        ("vitamin", frozenset({"D"}), frozenset({"C"}))
    ]
    assert mismatched(claim, qualified_names("Cholecalciferol reduced pain")) == []
    assert mismatched(claim, qualified_names("Vitamins C and D3 reduced pain")) == []
    # "Unlike vitamin D, vitamin C ...": one of the claim's qualifiers is the source's.
    contrast = qualified_names("Unlike vitamin D, vitamin C reduced pain")
    assert mismatched(contrast, qualified_names("Vitamin C reduced pain")) == []
    assert describe("vitamin", frozenset({"D"})) == "vitamin D"
    assert describe("il", frozenset({"6"})) == "IL-6"
