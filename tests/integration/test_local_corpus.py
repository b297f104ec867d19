"""The local corpus: ingestion (XML, gzip, MEDLINE), idempotence, FTS5 search."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from medlit.config import Settings
from medlit.errors import SourceError, SourceResponseError
from medlit.sources.local import LocalCorpus, LocalSource, fts_query
from medlit.types import SearchQuery
from tests.conftest import shared_data_path
from tests.fakes.fixtures import sample_articles
from tests.fakes.pubmed_render import articles_to_xml


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.xml.gz"
    path.write_bytes(gzip.compress(articles_to_xml(sample_articles())))
    return path


def test_add_is_idempotent_and_updates_changed_records(
    settings: Settings, corpus_file: Path, tmp_path: Path
) -> None:
    with LocalCorpus.from_settings(settings) as corpus:
        first = corpus.add_file(corpus_file)
        again = corpus.add_file(corpus_file)
        assert (first.added, again.added, again.skipped) == (6, 0, 6)
        changed = sample_articles()
        changed[0] = changed[0].model_copy(update={"title": "Aspirin revisited"})
        edited = tmp_path / "edited.xml"
        edited.write_bytes(articles_to_xml(changed))
        third = corpus.add_file(edited)
        assert (third.added, third.updated, third.skipped) == (0, 1, 5)
        assert corpus.count() == 6
        hits = corpus.search(SearchQuery(term="revisited"))
        assert [a.pmid for a in hits] == ["30000001"]
        stats = corpus.stats()
    assert stats["articles"] == 6 and stats["files"] == 2 and stats["first_year"] == 2000


def test_bad_files_fail_alone(settings: Settings, corpus_file: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "cut.xml"
    truncated.write_bytes(articles_to_xml(sample_articles())[:900])
    not_pubmed = tmp_path / "esearch.xml"
    not_pubmed.write_bytes(b"<eSearchResult><Count>0</Count></eSearchResult>")
    bad_gzip = tmp_path / "bad.xml.gz"
    bad_gzip.write_bytes(b"not gzip at all")
    with LocalCorpus.from_settings(settings) as corpus:
        with pytest.raises(SourceResponseError, match="malformed or truncated"):
            corpus.add_file(truncated)
        assert corpus.count() == 0  # all or nothing: the article before the damage is gone too
        with pytest.raises(SourceResponseError, match="no PubMed XML or MEDLINE records"):
            corpus.add_file(not_pubmed)
        with pytest.raises(SourceError, match="cannot read"):
            corpus.add_file(bad_gzip)
        assert corpus.add_file(corpus_file).added == 6


@pytest.mark.parametrize(
    "query",
    [
        'aspirin "stroke',
        "(aspirin OR",
        "aspirin AND -bleeding",
        "NEAR(a b)",
        "*",
        "ü-ß ^ :",
        "title:aspirin",
        "NOT",
        "''",
    ],
)
def test_hostile_queries_never_raise(settings: Settings, corpus_file: Path, query: str) -> None:
    with LocalCorpus.from_settings(settings) as corpus:
        corpus.add_file(corpus_file)
        corpus.search(SearchQuery(term=query))
    assert fts_query("aspirin AND stroke") == '"aspirin" OR "stroke"'


def test_ranking_years_and_sort(settings: Settings, corpus_file: Path) -> None:
    with LocalCorpus.from_settings(settings) as corpus:
        corpus.add_file(corpus_file)
        ranked = corpus.search(SearchQuery(term="aspirin bleeding elderly"))
        assert ranked[0].pmid == "30000006"  # matches all three words
        newest = corpus.search(SearchQuery(term="aspirin", sort="pub_date"))
        assert [a.year for a in newest] == [2019, 2010]
        ranged = corpus.search(SearchQuery(term="aspirin", min_year=2011))
        assert [a.year for a in ranged] == [2019]


@pytest.mark.shared_data
async def test_real_files_and_local_source(settings: Settings) -> None:
    with LocalCorpus.from_settings(settings) as corpus:
        xml = corpus.add_file(shared_data_path("pubmedqa", "pqal_dev_pubmed.xml"))
        medline = corpus.add_file(
            shared_data_path("eutils", "biopython", "medline", "pubmed_result2.txt")
        )
    assert (xml.added, medline.added) == (500, 4)
    found = await LocalSource(settings).search(
        SearchQuery(term="Can tailored interventions increase mammography use among HMO women?")
    )
    assert found[0].pmid == "10808977" and found[0].source == "local"
