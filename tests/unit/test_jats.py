"""The JATS full-text parser over the eight real PMC open-access articles and hostile input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from medlit.errors import MalformedResponse, SourceResponseError
from medlit.sources.jats import DocumentTooLarge, NotOpenAccess, parse_jats
from tests.conftest import shared_data_path

EXPECTED_PMCIDS = {
    "1471-2180-11-174.nxml": "PMC3166277",
    "1472-6831-8-11.nxml": "PMC2329613",
    "6605965a.nxml": "PMC2994229",
    "ehp-116-1694.nxml": "PMC2599765",
    "mds526.nxml": "PMC3574550",
    "pntd.0002065.nxml": "PMC3585041",
    "pone.0000217.nxml": "PMC1790863",
    "pone.0046493.nxml": "PMC3460867",
}


def _nxml() -> list[Path]:
    return sorted(shared_data_path("pmc_oa").glob("*.nxml"))


def _doc(body: str, *, front: str = "", oa: bool = True, licence: str = "") -> bytes:
    marker = "<?properties open_access?>" if oa else ""
    permissions = f"<permissions>{licence}</permissions>" if licence else ""
    return (
        '<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Archiving and Interchange '
        'DTD v1.0 20120330//EN" "JATS-archivearticle1.dtd">'
        '<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="research-article">'
        f'{marker}<front><article-meta><article-id pub-id-type="pmid">1</article-id>'
        f'<article-id pub-id-type="pmc">123</article-id>{permissions}{front}</article-meta>'
        f"</front><body>{body}</body><back><ref-list><ref><mixed-citation>Smith J. A cited "
        "work. 1999.</mixed-citation></ref></ref-list></back></article>"
    ).encode()


@pytest.mark.shared_data
def test_every_real_article_parses_with_sections_and_licence() -> None:
    files = _nxml()
    assert {p.name for p in files} == set(EXPECTED_PMCIDS)
    for path in files:
        full = parse_jats(path.read_bytes())
        assert full.pmcid == EXPECTED_PMCIDS[path.name], path
        labels = {s.label for s in full.sections}
        assert any("Result" in label for label in labels), (path, labels)
        assert all(s.text.strip() for s in full.sections), path
        # No references list in the evidence.
        assert "ref-list" not in full.text
        assert not any(s.label.lower().startswith("reference") for s in full.sections)


@pytest.mark.shared_data
def test_the_epic_results_passage_and_table_are_read() -> None:
    path = shared_data_path("pmc_oa", "6605965a.nxml")
    full = parse_jats(path.read_bytes())
    results = [s for s in full.sections if s.label == "Results" and s.kind == "text"]
    said = " ".join(s.text for s in results)
    assert "pre- or peri-menopausal women (HR, 1.19; 95% CI: 0.96–1.48)" in said
    tables = [s for s in full.sections if s.kind == "table"]
    assert tables and any(t.text.startswith("Table 2 Hazard ratio") for t in tables)
    # Rows read as rows: one line each, cells separated.
    assert any("Ever | 822/196 040 | 0.93 (0.84–1.03) | 0.92 (0.83–1.02)" in t.text for t in tables)
    # Citations of the references are dropped, not the words around them.
    assert "[" not in said or "][" not in said


@pytest.mark.shared_data
def test_nested_sections_keep_their_top_level_label_and_licences_are_kept() -> None:
    full = parse_jats(shared_data_path("pmc_oa", "pntd.0002065.nxml").read_bytes())
    labels = [s.label for s in full.sections]
    # "Cross-sectional surveys" is a subsection of Results: it is labelled Results.
    assert "Cross-sectional surveys" not in labels
    assert "Results" in labels
    assert full.licence and "open-access article" in full.licence
    cc = parse_jats(shared_data_path("pmc_oa", "mds526.nxml").read_bytes())
    assert cc.licence and cc.licence.startswith("http://creativecommons.org/licenses/by-nc/3.0")
    # A journal's declarations are not evidence.
    assert not any(s.label.lower() in ("funding", "disclosure") for s in cc.sections)


@pytest.mark.shared_data
def test_parsing_is_fast() -> None:
    files = _nxml()
    start = time.perf_counter()
    for path in files:
        parse_jats(path.read_bytes())
    assert (time.perf_counter() - start) / len(files) < 0.5


def test_table_only_results_section_is_read_as_rows_under_results() -> None:
    body = (
        "<sec><title>Methods</title><p>We counted.</p></sec>"
        "<sec><title>Results</title><table-wrap id='t1'><label>Table 1</label>"
        "<caption><p>Outcomes by arm</p></caption><table><thead><tr><th>Arm</th>"
        "<th>Deaths</th></tr></thead><tbody><tr><td>Drug</td><td>12 (4%)</td></tr>"
        "<tr><td>Placebo</td><td>30 (10%)</td></tr></tbody></table></table-wrap></sec>"
    )
    full = parse_jats(_doc(body))
    assert full.pmcid == "PMC123"
    results = [s for s in full.sections if s.label == "Results"]
    assert len(results) == 1 and results[0].kind == "table"
    assert results[0].text.splitlines() == [
        "Table 1 Outcomes by arm.",
        "Arm | Deaths",
        "Drug | 12 (4%)",
        "Placebo | 30 (10%)",
    ]
    assert "Smith" not in full.text  # the reference list


def test_figure_captions_and_bibliographic_citations() -> None:
    body = (
        "<sec><title>Results</title><p>Mortality fell<xref ref-type='bibr' rid='b1'>12</xref>"
        " (see <xref ref-type='table' rid='t1'>Table 1</xref>).</p>"
        "<fig id='f1'><label>Figure 1</label><caption><p>Survival curves.</p></caption>"
        "<graphic xlink:href='f1.jpg'/></fig></sec>"
    )
    full = parse_jats(_doc(body))
    texts = {(s.kind, s.text) for s in full.sections}
    assert ("text", "Mortality fell (see Table 1).") in texts
    assert ("figure", "Figure 1 Survival curves.") in texts


def test_malformed_document_fails_alone_with_a_clear_error() -> None:
    whole = _doc("<sec><title>Results</title><p>Fine.</p></sec>")
    with pytest.raises(MalformedResponse, match="malformed or truncated JATS"):
        parse_jats(whole[: len(whole) // 2])


def test_a_50_mb_document_is_refused_before_parsing() -> None:
    filler = "<p>" + "x" * 1000 + "</p>"
    huge = _doc("<sec><title>Results</title>" + filler * 50_000 + "</sec>")
    assert len(huge) > 50_000_000
    start = time.perf_counter()
    with pytest.raises(DocumentTooLarge, match="above the 10,000,000-byte limit"):
        parse_jats(huge)
    assert time.perf_counter() - start < 1.0


def test_a_single_huge_text_node_is_refused_by_lxml_limits() -> None:
    # Under a raised byte limit, huge_tree stays off: one 50 MB text node is not parsed.
    huge = _doc("<sec><title>Results</title><p>" + "y" * 50_000_000 + "</p></sec>")
    with pytest.raises(MalformedResponse):
        parse_jats(huge, max_bytes=100_000_000)


def test_entities_are_not_expanded_and_no_dtd_is_fetched() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">'
        b'<!ENTITY ext SYSTEM "http://127.0.0.1:9/secret">]>'
        b"<article><?properties open_access?><front><article-meta>"
        b'<article-id pub-id-type="pmc">9</article-id></article-meta></front>'
        b"<body><sec><title>Results</title><p>Said &c; and &ext;.</p></sec></body></article>"
    )
    full = parse_jats(bomb)
    assert "aaaaaaaaaa" not in full.text


def test_not_open_access_is_not_read() -> None:
    closed = _doc("<sec><title>Results</title><p>Secret.</p></sec>", oa=False)
    with pytest.raises(NotOpenAccess, match="not open access"):
        parse_jats(closed)
    # A licence that says so is enough without PMC's marker.
    licensed = _doc(
        "<sec><title>Results</title><p>Open.</p></sec>",
        oa=False,
        licence='<license license-type="open-access" '
        'xlink:href="http://creativecommons.org/licenses/by/4.0/"><license-p>CC BY</license-p>'
        "</license>",
    )
    assert parse_jats(licensed).licence == "http://creativecommons.org/licenses/by/4.0/ CC BY"
    # A copyright statement alone is no open-access licence.
    owned = _doc(
        "<sec><title>Results</title><p>Owned.</p></sec>",
        oa=False,
        licence="<copyright-statement>All rights reserved</copyright-statement>",
    )
    with pytest.raises(NotOpenAccess):
        parse_jats(owned)


def test_error_documents_and_missing_parts() -> None:
    with pytest.raises(SourceResponseError, match="NCBI error"):
        parse_jats(b"<eFetchResult><ERROR>UID=1: cannot get document</ERROR></eFetchResult>")
    with pytest.raises(SourceResponseError, match="expected a JATS <article>"):
        parse_jats(b"<pmc-articleset></pmc-articleset>")
    no_body = _doc("").replace(b"<body></body>", b"")
    with pytest.raises(SourceResponseError, match="no body"):
        parse_jats(no_body)
    # efetch db=pmc wraps the article in <pmc-articleset>.
    wrapped = b"<pmc-articleset>" + _doc("<p>Loose paragraph.</p>").split(b">", 1)[1]
    wrapped += b"</pmc-articleset>"
    full = parse_jats(wrapped)
    assert [(s.label, s.text) for s in full.sections] == [("Body", "Loose paragraph.")]
