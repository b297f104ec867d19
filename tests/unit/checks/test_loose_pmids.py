"""PMIDs in the loose forms models write count as citations, never as numbers of the text."""

from __future__ import annotations

import pytest

from medlit.checks import check_answer, enforce_citations
from medlit.types import AbstractSection, Article

RETRIEVED = {"18852857", "36206626", "11878590", "12345678"}


@pytest.mark.parametrize(
    ("written", "text", "cited", "removed"),
    [
        (
            "A [PMID:18852857], 36206626, and 11878590.",
            "A [PMID:18852857][PMID:36206626][PMID:11878590].",
            ["18852857", "36206626", "11878590"],
            [],
        ),
        (
            "A ([PMID:18852857], 36206626, and 11878590).",
            "A [PMID:18852857][PMID:36206626][PMID:11878590].",
            ["18852857", "36206626", "11878590"],
            [],
        ),
        (
            "A (PMIDs 18852857, 36206626 and 11878590).",
            "A [PMID:18852857][PMID:36206626][PMID:11878590].",
            ["18852857", "36206626", "11878590"],
            [],
        ),
        (
            "A PMIDs 18852857; 36206626 & 11878590.",
            "A [PMID:18852857][PMID:36206626][PMID:11878590].",
            ["18852857", "36206626", "11878590"],
            [],
        ),
        ("A PMID 18852857.", "A [PMID:18852857].", ["18852857"], []),
        ("A (PMID: 18852857).", "A [PMID:18852857].", ["18852857"], []),
        (
            "A [18852857, 36206626].",
            "A [PMID:18852857][PMID:36206626].",
            ["18852857", "36206626"],
            [],
        ),
        # a bare id equal to a retrieved article's PMID is its citation
        ("As 18852857 found, A.", "As [PMID:18852857] found, A.", ["18852857"], []),
        # an id continuing a citation list is a PMID even when not retrieved: it goes
        ("A [PMID:18852857], 99999999.", "A [PMID:18852857].", ["18852857"], ["99999999"]),
    ],
)
def test_loose_forms_are_citations(
    written: str, text: str, cited: list[str], removed: list[str]
) -> None:
    check = enforce_citations(written, RETRIEVED)
    assert (check.text, check.cited, check.removed) == (text, cited, removed)


@pytest.mark.parametrize(
    "written",
    [
        "A cohort of 1234567 adults [PMID:12345678].",  # a bare number no retrieved PMID equals
        "Of 9876543 screened, 12.5% [PMID:12345678].",
        "A [PMID:12345678], 1200000 patients in all.",  # a count after the list, not an id
        "PMID 12345678 and 200000 patients were treated.",
        "A reduction [12].",  # a bracketed small number may be a reference: left alone
        "A rate of 0.12345678 [PMID:12345678].",
    ],
)
def test_numbers_that_are_no_pmids_stay_numbers(written: str) -> None:
    check = enforce_citations(written, RETRIEVED)
    assert check.removed == []
    numbers = [w for w in written.replace("[PMID:12345678]", "").split() if w[:1].isdigit()]
    assert all(n in check.text for n in numbers)


def _article(pmid: str, text: str) -> Article:
    return Article(
        pmid=pmid,
        title="Statin therapy and LDL cholesterol in adults",
        year=2010,
        abstract=[AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=text)],
    )


async def test_a_sentence_citing_loose_pmids_is_not_dropped_for_their_digits() -> None:
    said = "Statin therapy lowered LDL cholesterol in adults."
    articles = {p: _article(p, said) for p in ("18852857", "36206626", "11878590")}

    async def read(question: str, text: str) -> str:
        return "yes"

    answer = await check_answer(
        "Does statin therapy lower LDL cholesterol in adults?",
        "Statin therapy lowered LDL cholesterol in adults ([PMID:18852857], 36206626, and "
        "11878590).",
        "yes",
        articles,
        articles["18852857"],
        is_yes_no=True,
        read_verdict=read,  # type: ignore[arg-type]
        nothing_supported="Nothing is left.",
    )
    assert not [f for f in answer.findings if f.action == "drop"], answer.findings
    assert answer.cited == ["18852857", "36206626", "11878590"]
    assert "36206626" in answer.text and answer.verdict == "yes"
