"""EuropePMCSource against the fake Europe PMC server."""

from __future__ import annotations

import json

import pytest

from medlit.config import Settings
from medlit.errors import MalformedResponse, SourceResponseError, SourceUnavailable
from medlit.sources.europepmc import EuropePMCSource
from medlit.types import SearchQuery
from medlit.usage import usage_scope
from tests.conftest import shared_data_path
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import Fault


@pytest.fixture
def epmc_settings(settings: Settings, fake_europepmc: FakeEuropePMC) -> Settings:
    settings.europepmc.base_url = fake_europepmc.base_url
    settings.europepmc.timeout_s = 1.0
    return settings


async def test_search_maps_core_results(
    epmc_settings: Settings, fake_europepmc: FakeEuropePMC
) -> None:
    with_source = EuropePMCSource(epmc_settings)
    try:
        with usage_scope() as usage:
            articles = await with_source.search(SearchQuery(term="aspirin"))
    finally:
        await with_source.aclose()
    assert {a.pmid for a in articles} == {"30000001", "30000006"}
    first = articles[0]
    assert first.source == "europepmc" and first.abstract[0].label == "BACKGROUND"
    assert first.citation_count == 0 and first.open_access is False
    assert usage.source_calls("europepmc") == 1
    sent = fake_europepmc.history[0].params
    assert sent["resultType"] == "core" and sent["cursorMark"] == "*"


async def test_cursor_paging_and_offset(
    epmc_settings: Settings, fake_europepmc: FakeEuropePMC
) -> None:
    epmc_settings.europepmc.page_size = 2
    source = EuropePMCSource(epmc_settings)
    try:
        everything = await source.search(SearchQuery(term="the", limit=100))
        fake_europepmc.history.clear()
        page = await source.search(SearchQuery(term="the", limit=2, offset=3))
    finally:
        await source.aclose()
    assert len(everything) == 6
    assert [a.pmid for a in page] == [a.pmid for a in everything[3:5]]
    cursors = [r.params["cursorMark"] for r in fake_europepmc.history]
    assert cursors[0] == "*" and len(set(cursors)) == len(cursors) == 3


async def test_year_range_and_sort(epmc_settings: Settings, fake_europepmc: FakeEuropePMC) -> None:
    source = EuropePMCSource(epmc_settings)
    try:
        found = await source.search(
            SearchQuery(term="aspirin", min_year=2015, max_year=2020, sort="pub_date")
        )
    finally:
        await source.aclose()
    assert [a.year for a in found] == [2019]
    params = fake_europepmc.history[0].params
    assert "PUB_YEAR:[2015 TO 2020]" in params["query"] and params["sort"] == "P_PDATE_D desc"


async def test_faults(epmc_settings: Settings, fake_europepmc: FakeEuropePMC) -> None:
    epmc_settings.europepmc.max_retries = 1
    source = EuropePMCSource(epmc_settings)
    try:
        fake_europepmc.enqueue(Fault.status(503))
        assert len(await source.search(SearchQuery(term="aspirin"))) == 2  # retried
        fake_europepmc.enqueue(Fault.status(500), times=2)
        with pytest.raises(SourceUnavailable):
            await source.search(SearchQuery(term="aspirin"))
        fake_europepmc.enqueue(Fault.truncated())
        assert len(await source.search(SearchQuery(term="aspirin"))) == 2  # a cut body: retried
        fake_europepmc.enqueue(Fault.truncated(), times=2)
        with pytest.raises(MalformedResponse, match=r"malformed or truncated.*after 2 tries"):
            await source.search(SearchQuery(term="aspirin"))
        fake_europepmc.enqueue(Fault.body(b'{"errMsg": "Syntax error in query"}', status=400))
        with pytest.raises(SourceResponseError, match="Syntax error"):
            await source.search(SearchQuery(term="aspirin"))
    finally:
        await source.aclose()


@pytest.mark.shared_data
async def test_real_core_records_round_trip(settings: Settings) -> None:
    raw = json.loads(shared_data_path("europepmc", "search_cancer_core.json").read_text())
    with FakeEuropePMC(results=raw["resultList"]["result"]) as fake:
        settings.europepmc.base_url = fake.base_url
        source = EuropePMCSource(settings)
        try:
            found = await source.search(SearchQuery(term="the", limit=50))  # a stopword: all
        finally:
            await source.aclose()
    assert len(found) == 25
    assert sum(1 for a in found if a.abstract) == 21
