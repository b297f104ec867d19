"""Sentence pieces: the unit every line-by-line check of an answer or report reads."""

from __future__ import annotations

import pytest

from medlit.text import sentence_pieces


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # syntok cuts before a citation written after the full stop; it cites the sentence
        # before it.
        (
            "Aspirin cut stroke by 20%. [PMID:123] Statins lowered LDL. [PMID:456]",
            ["Aspirin cut stroke by 20%. [PMID:123] ", "Statins lowered LDL. [PMID:456]"],
        ),
        (
            "Fewer falls. [1] More fractures. [2, 3]",
            ["Fewer falls. [1] ", "More fractures. [2, 3]"],
        ),
        ("Fewer falls. [1][2] Next.", ["Fewer falls. [1][2] ", "Next."]),
        ("Fewer falls. (PMID: 12) Next.", ["Fewer falls. (PMID: 12) ", "Next."]),
        ("Fewer falls. [1-3]", ["Fewer falls. [1-3]"]),
        ("Fewer falls [PMID:1]. Next one.", ["Fewer falls [PMID:1]. ", "Next one."]),
        (
            "Smith et al. [1] found fewer falls. [1] Next.",
            ["Smith et al. [1] found fewer falls. [1] ", "Next."],
        ),
        ("0.67 vs. 1.58 mmol/l was seen. Next.", ["0.67 vs. 1.58 mmol/l was seen. ", "Next."]),
    ],
)
def test_pieces_keep_citations_with_the_sentence_they_follow(text: str, pieces: list[str]) -> None:
    assert sentence_pieces(text) == pieces
    assert "".join(pieces) == text
