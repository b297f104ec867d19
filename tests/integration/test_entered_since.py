"""``SearchQuery.entered_since``: each source finds only the articles entered since a moment.

One contract over the three sources (PubMed through the fake E-utilities, Europe PMC through
its fake, the local corpus), then what each puts on the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest

from medlit.config import Settings
from medlit.sources.europepmc import EuropePMCSource
from medlit.sources.local import LocalCorpus, LocalSource
from medlit.sources.pubmed import PubMedSource, entrez_window
from medlit.types import AbstractSection, Article, SearchQuery
from medlit.usage import usage_scope
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.fixtures import sample_articles

NEW = Article(
    pmid="39000001",
    title="Aspirin after stroke: a new randomized trial",
    abstract=[AbstractSection(text="Aspirin reduced recurrent stroke in adults.")],
    year=2026,
    pub_date="2026",
    publication_types=["Journal Article", "Randomized Controlled Trial"],
    language="eng",
)
SINCE = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _old() -> list[Article]:
    return sample_articles()


async def test_pubmed_finds_only_records_entered_since(
    settings: Settings, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    fake = make_fake_eutils(rate_limit=None)
    for article in _old():
        fake.add_article(article, entered=date(2020, 1, 5))
    settings.pubmed.base_url = fake.base_url
    async with PubMedSource(settings) as source:
        query = SearchQuery(term="aspirin stroke", entered_since=SINCE)
        assert await source.search(query) == []
        fake.add_article(NEW, entered=date(2026, 11, 25))
        with usage_scope() as usage:
            found = await source.search(query)
        everything = await source.search(SearchQuery(term="aspirin stroke"))
    assert [a.pmid for a in found] == ["39000001"]
    assert {a.pmid for a in everything} == {"39000001", "30000001"}
    assert usage.source_calls("pubmed") == 2  # one esearch, one efetch of the new id
    sent = fake.requests("esearch")[-2].params
    assert (sent["datetype"], sent["mindate"], sent["maxdate"]) == (
        "edat",
        "2026/11/19",
        "3000/12/31",
    )


async def test_pubmed_entry_window_keeps_a_year_range(
    settings: Settings, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    fake = make_fake_eutils(rate_limit=None)
    fake.add_article(NEW, entered=date(2026, 11, 25))
    older = NEW.model_copy(update={"pmid": "39000002", "year": 2019, "pub_date": "2019"})
    fake.add_article(older, entered=date(2026, 11, 26))
    settings.pubmed.base_url = fake.base_url
    async with PubMedSource(settings) as source:
        found = await source.search(
            SearchQuery(term="aspirin stroke", entered_since=SINCE, min_year=2025)
        )
    assert [a.pmid for a in found] == ["39000001"]
    sent = fake.requests("esearch")[-1].params
    assert sent["datetype"] == "edat" and '"2025"[dp] : "3000"[dp]' in sent["term"]


def test_entrez_window_opens_the_day_before_in_utc() -> None:
    late_evening = datetime(2026, 3, 1, 2, 30, tzinfo=UTC) - timedelta(hours=5)
    assert entrez_window(late_evening) == ("2026/02/27", "3000/12/31")
    with pytest.raises(ValueError):
        SearchQuery(term="x", entered_since=datetime(2026, 3, 1))  # no time zone: refused


async def test_europepmc_finds_only_records_created_since(settings: Settings) -> None:
    with FakeEuropePMC() as fake:
        for article in _old():
            fake.add_article(article, created=date(2020, 1, 5))
        settings.europepmc.base_url = fake.base_url
        source = EuropePMCSource(settings)
        try:
            query = SearchQuery(term="aspirin stroke", entered_since=SINCE, min_year=2000)
            assert await source.search(query) == []
            fake.add_article(NEW, created=date(2026, 11, 25))
            found = await source.search(query)
        finally:
            await source.aclose()
    assert [a.pmid for a in found] == ["39000001"]
    assert "CREATION_DATE:[2026-11-19 TO 3000-12-31]" in fake.history[-1].params["query"]


async def test_local_corpus_finds_only_records_added_since(settings: Settings) -> None:
    with LocalCorpus.from_settings(settings) as corpus:
        corpus.add_articles(_old())
        await asyncio.sleep(0.002)
        since = datetime.now(UTC)
        source = LocalSource(settings)
        query = SearchQuery(term="aspirin stroke", entered_since=since)
        assert await source.search(query) == []
        corpus.add_articles([NEW, *_old()])  # the old ones again: unchanged, not new
        changed = _old()[0].model_copy(update={"title": "Aspirin for stroke, corrected"})
        corpus.add_articles([changed])  # updated, not entered: keeps its added date
    found = await source.search(query)
    assert [a.pmid for a in found] == ["39000001"]
