"""The Europe PMC response parser over every real sample."""

from __future__ import annotations

import json
import re

import pytest

from medlit.errors import SourceResponseError
from medlit.sources.europepmc import parse_abstract, parse_search_page
from tests.conftest import shared_data_path


@pytest.mark.shared_data
def test_every_json_sample_parses() -> None:
    folder = shared_data_path("europepmc")
    parsed = 0
    for path in sorted(folder.glob("*.json")):
        body = json.loads(path.read_text())
        pages = body if isinstance(body, list) else [body]
        for page in pages:
            result = parse_search_page(json.dumps(page))
            assert len(result.articles) == len(page["resultList"]["result"]), path
            for article in result.articles:
                assert article.source == "europepmc"
                assert article.title or article.pmid, path
            parsed += 1
    assert parsed == 18  # 8 single pages + the 10 pages of fetch_10pages_cancer.json


@pytest.mark.shared_data
def test_core_fields() -> None:
    page = parse_search_page(shared_data_path("europepmc", "search_cancer_core.json").read_bytes())
    assert page.hit_count == 5059039 and page.next_cursor == "AoIIP4ZawSg1MzEyODI1MA=="
    first = page.articles[0]
    assert first.pmid == "39709209" and first.doi == "10.1016/s0140-6736(24)02600-x"
    assert first.journal and first.year == 2025 and first.publication_types == ["Journal Article"]
    assert first.citation_count == 0 and first.open_access is False and first.language == "eng"
    with_abstract = [a for a in page.articles if a.abstract]
    assert len(with_abstract) == 21
    for article in with_abstract:
        assert not re.search(r"</?(h4|i|b|sub)>", article.abstract_text)  # tags stripped
    labelled = [a for a in with_abstract if a.abstract[0].label]
    assert labelled and labelled[0].abstract[0].label == "OBJECTIVE"


@pytest.mark.shared_data
def test_empty_result_is_empty_and_lite_has_no_abstract() -> None:
    empty = parse_search_page(shared_data_path("europepmc", "search_no_results.json").read_bytes())
    assert (empty.articles, empty.hit_count, empty.next_cursor) == ([], 0, None)
    lite = parse_search_page(shared_data_path("europepmc", "search_cancer.json").read_bytes())
    assert all(not a.abstract for a in lite.articles)


def test_abstract_headings_and_errors() -> None:
    sections = parse_abstract(
        "Lead.<h4>Methods</h4>We <i>did</i> x &amp; y.<h4>Results:</h4>p < .05, n > 3"
    )
    assert [(s.label, s.text) for s in sections] == [
        (None, "Lead."),
        ("METHODS", "We did x & y."),
        ("RESULTS", "p < .05, n > 3"),
    ]
    with pytest.raises(SourceResponseError, match="malformed"):
        parse_search_page(b'{"resultList": {"result": [')
    with pytest.raises(SourceResponseError, match="without resultList"):
        parse_search_page(b'{"version": "6.9"}')
    with pytest.raises(SourceResponseError, match="Invalid"):
        parse_search_page(b'{"errMsg": "Invalid query"}')
