"""The MEDLINE text parser over the real samples and edge cases."""

from __future__ import annotations

import pytest

from medlit.errors import SourceResponseError
from medlit.sources.medline import parse_medline
from tests.conftest import shared_data_path


@pytest.mark.shared_data
def test_every_medline_sample_parses() -> None:
    folder = shared_data_path("eutils", "biopython", "medline")
    files = sorted(folder.glob("*.txt"))
    counts = {p.name: len(parse_medline(p.read_text())) for p in files}
    assert counts == {"pubmed_result1.txt": 1, "pubmed_result2.txt": 4, "pubmed_result3.txt": 1}
    first, *_ = parse_medline((folder / "pubmed_result2.txt").read_text())
    assert first.pmid == "16403221" and first.pmcid == "PMC1373603"
    assert first.doi == "10.1186/1471-2105-7-10" and first.year == 2006
    assert [s.label for s in first.abstract] == ["BACKGROUND", "RESULTS", "CONCLUSION"]
    assert first.abstract[0].text.startswith("Benchmarking algorithms in structural")
    assert first.authors[:2] == ["Casbon JA", "Crooks GE"]
    assert "Databases, Protein" in first.mesh_terms  # '*' and '/qualifier' removed
    assert first.journal == "BMC bioinformatics" and first.language == "eng"


def test_unstructured_abstract_and_errors() -> None:
    text = (
        "PMID- 1\nTI  - A title\n      continued.\nAB  - Plain text: not a label.\nDP  - 1999 Jan\n"
    )
    (article,) = parse_medline(text)
    assert article.title == "A title continued." and article.year == 1999
    assert [(s.label, s.text) for s in article.abstract] == [(None, "Plain text: not a label.")]
    with pytest.raises(SourceResponseError, match="not a MEDLINE line"):
        parse_medline("<html>oops</html>\n")
    with pytest.raises(SourceResponseError, match="without PMID"):
        parse_medline("TI  - no id\n")
