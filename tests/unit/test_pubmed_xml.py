"""The PubMed XML / esearch parsers over every real E-utilities sample and the error shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from medlit.errors import SourceResponseError
from medlit.sources.pubmed_xml import parse_esearch, parse_pubmed_xml
from tests.conftest import shared_data_path

EUTILS = ("eutils",)


def _samples(pattern: str) -> list[Path]:
    root = shared_data_path(*EUTILS)
    return sorted(root.rglob(pattern))


def _efetch_samples() -> list[Path]:
    return [p for p in _samples("*.xml") if b"<PubmedArticleSet" in p.read_bytes()[:600]]


@pytest.mark.shared_data
def test_every_pubmed_article_sample_parses() -> None:
    files = _efetch_samples()
    assert len(files) >= 14
    total = 0
    for path in files:
        articles = parse_pubmed_xml(path.read_bytes())
        assert articles, path
        for article in articles:
            assert article.pmid and article.pmid.isdigit(), path
            assert article.title, path
            assert article.year and 1900 < article.year < 2030, path
            assert article.language, path
        total += len(articles)
    assert total >= 17


@pytest.mark.shared_data
def test_pubmed_fields_of_known_records() -> None:
    entrez = shared_data_path(*EUTILS, "biopython", "entrez")
    no_abstract, plain = parse_pubmed_xml((entrez / "pubmed1.xml").read_bytes())
    assert no_abstract.pmid == "12091962" and no_abstract.abstract == []
    assert no_abstract.pub_date == "1990 Spring" and no_abstract.year == 1990
    assert no_abstract.keywords == ["Health Care and Public Health", "Legal Approach"]
    assert "Acquired Immunodeficiency Syndrome" in no_abstract.mesh_terms
    assert no_abstract.publication_types == ["Journal Article", "Review"]
    assert plain.doi == "10.1016/0005-2795(76)90109-4" and plain.authors == ["Strekas TC"]
    (gut,) = parse_pubmed_xml((entrez / "pubmed4.xml").read_bytes())
    assert gut.pmcid == "PMC5442267" and gut.journal == "Gut"
    assert [s.label for s in gut.abstract] == ["OBJECTIVE", "DESIGN", "RESULTS", "CONCLUSIONS"]
    assert gut.abstract[-1].is_conclusion and gut.conclusion
    assert gut.study_type.label == "observational"
    (mathml,) = parse_pubmed_xml((entrez / "pubmed6.xml").read_bytes())
    assert "V.O2max" in mathml.abstract_text and "  " not in mathml.abstract_text


@pytest.mark.shared_data
def test_book_article_and_references_do_not_leak_ids() -> None:
    (book,) = parse_pubmed_xml(
        shared_data_path(*EUTILS, "klortho_json", "efetch.pubmedbook.xml").read_bytes()
    )
    assert book.is_book and book.pmid == "20301295" and book.year == 1993
    assert book.journal == "GeneReviews™" and book.abstract
    # pubmed5 has a ReferenceList full of ArticleIds: only the article's own ids count.
    (oem,) = parse_pubmed_xml(
        shared_data_path(*EUTILS, "biopython", "entrez", "pubmed5.xml").read_bytes()
    )
    assert (oem.pmid, oem.doi, oem.pmcid) == ("28775130", "10.1136/oemed-2017-104431", "PMC5771820")


def test_medline_date_and_elocation_doi() -> None:
    xml = b"""<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>
    <Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>
    </JournalIssue><Title>J</Title></Journal><ArticleTitle>T <i>x</i></ArticleTitle>
    <ELocationID EIdType="doi">https://doi.org/10.1/ABC</ELocationID>
    <AuthorList><Author><CollectiveName>The Group</CollectiveName></Author></AuthorList>
    </Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"""
    (article,) = parse_pubmed_xml(xml)
    assert (article.pub_date, article.year) == ("1998 Dec-1999 Jan", 1998)
    assert article.doi == "10.1/abc" and article.title == "T x"
    assert article.authors == ["The Group"]


@pytest.mark.shared_data
def test_every_esearch_sample() -> None:
    files = _samples("esearch*") + _samples("test_esearchresult_1.xml")
    outcomes: dict[str, tuple[int | str, int | str]] = {}
    for path in files:
        try:
            result = parse_esearch(path.read_bytes())
            outcomes[path.name] = (result.count, len(result.ids))
        except SourceResponseError as exc:
            outcomes[path.name] = ("error", str(exc))
    assert outcomes["esearch2.xml"] == (42249, 100)
    assert outcomes["esearch.pubmed.json"] == (15169, 100)
    assert outcomes["esearch.error.json"] == (5163, 20)  # phrase not found, results: fine
    assert outcomes["esearch.error.xml"] == (5163, 20)
    assert outcomes["esearch8.xml"][0] == "error" and "abcXYZ" in str(outcomes["esearch8.xml"][1])
    for name in ("esearch.baderror.json", "esearch.baderror.xml"):
        assert outcomes[name] == ("error", "pubmed: NCBI error: Invalid db name specified: fleegle")
    assert len(outcomes) == len(files) >= 11


@pytest.mark.shared_data
def test_truncated_einfo4_gives_a_clear_error() -> None:
    data = shared_data_path(*EUTILS, "biopython", "entrez", "einfo4.xml").read_bytes()
    with pytest.raises(SourceResponseError, match="malformed or truncated"):
        parse_pubmed_xml(data)
    with pytest.raises(SourceResponseError, match="malformed or truncated"):
        parse_esearch(data)


@pytest.mark.shared_data
def test_other_eutils_documents_are_not_mistaken_for_articles() -> None:
    for name in ("einfo1.xml", "esummary1.xml", "epost2.xml", "elink1.xml", "efetch_pmc.xml"):
        data = shared_data_path(*EUTILS, "biopython", "entrez", name).read_bytes()
        with pytest.raises(SourceResponseError):
            parse_pubmed_xml(data)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error":"API rate limit exceeded","count":"11"}', "API rate limit exceeded"),
        (b'{"esearchresult": {"ERROR": "Empty term"}}', "Empty term"),
        (b'{"esearchresult": {"count": "3", "idlist": [', "malformed or truncated"),
        (b"<eSearchResult><Count>1</Count><IdList><Id>1</Id>", "malformed or truncated"),
        (b"<html>Bad gateway</html>", "expected an eSearchResult"),
        (b"<eSearchResult><IdList/></eSearchResult>", "without a Count"),
    ],
)
def test_esearch_error_shapes(body: bytes, message: str) -> None:
    with pytest.raises(SourceResponseError, match=message):
        parse_esearch(body)


def test_empty_esearch_is_a_legitimate_empty_result() -> None:
    result = parse_esearch(
        b"<eSearchResult><Count>0</Count><RetMax>0</RetMax><IdList/></eSearchResult>"
    )
    assert (result.count, result.ids) == (0, [])
