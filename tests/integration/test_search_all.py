"""search_all_providers: concurrency, failures, timeouts, English filter, dedupe, validation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from medlit.config import Settings
from medlit.errors import ValidationError
from medlit.sources import SourceSet, build_sources, merge_articles, search_all_providers
from medlit.sources.local import LocalCorpus
from medlit.types import Article, SearchQuery
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.fixtures import sample_articles

# The running fakes of the current test (set by the ``fakes`` fixture), for fault injection.
_FAKES: dict[str, FakeEutils | FakeEuropePMC] = {}


@pytest.fixture
def fakes(settings: Settings, make_fake_eutils: Callable[..., FakeEutils]) -> Iterator[Settings]:
    """PubMed serves the sample corpus; Europe PMC the same articles with citation counts,
    plus one French and one DOI-only preprint; the local corpus holds two of them."""
    corpus = sample_articles()
    pubmed = make_fake_eutils(articles=corpus, rate_limit=None)
    epmc_articles = [
        a.model_copy(update={"citation_count": 10 + i, "open_access": True, "abstract": []})
        for i, a in enumerate(corpus)
    ]
    epmc_articles.append(Article(pmid="40000001", title="Aspirin et AVC", language="fre"))
    epmc_articles.append(
        Article(doi="10.1101/2024.01.01.1", title="Aspirin preprint", language="eng")
    )
    epmc = FakeEuropePMC(articles=epmc_articles).start()
    settings.pubmed.base_url = pubmed.base_url
    settings.europepmc.base_url = epmc.base_url
    settings.pubmed.timeout_s = settings.europepmc.timeout_s = 5.0
    with LocalCorpus.from_settings(settings) as local:
        local.add_articles([corpus[0], corpus[5]])
    _FAKES.update(pubmed=pubmed, europepmc=epmc)
    yield settings
    _FAKES.clear()
    epmc.stop()


async def test_combines_dedupes_and_merges(fakes: Settings) -> None:
    async with SourceSet(fakes, "all") as sources:
        results = await sources.search(SearchQuery(term="aspirin"))
    statuses = {n: (s.status, s.count, s.dropped_non_english) for n, s in results.providers.items()}
    assert statuses == {"pubmed": ("ok", 2, 0), "europepmc": ("ok", 3, 1), "local": ("ok", 2, 0)}
    keys = [a.key for a in results.articles]
    assert keys == ["pmid:30000006", "pmid:30000001", "doi:10.1101/2024.01.01.1"]
    first = results.articles[0]
    assert first.abstract and first.source == "pubmed"  # the record with an abstract wins
    assert first.citation_count == 15 and first.open_access is True  # kept from Europe PMC


async def test_english_filter_can_be_switched_off(fakes: Settings) -> None:
    fakes.search.english_only = False
    async with SourceSet(fakes, "europepmc") as sources:
        results = await sources.search("aspirin")
    assert any(a.language == "fre" for a in results.articles)


async def test_failing_and_slow_providers_do_not_sink_the_others(fakes: Settings) -> None:
    fakes.pubmed.max_retries = 0
    # Europe PMC answers a minute late; the others answer (or fail) within the 5 s however
    # loaded the machine.
    fakes.search.provider_timeout_s = 5.0
    _FAKES["pubmed"].enqueue(Fault.status(500))
    _FAKES["europepmc"].enqueue(Fault.delay(60.0))
    async with SourceSet(fakes, "all") as sources:
        results = await sources.search("aspirin")
    providers = results.providers
    assert providers["pubmed"].status == "error" and "500" in (providers["pubmed"].error or "")
    assert providers["europepmc"].status == "timeout"
    assert providers["local"].status == "ok"
    assert {a.pmid for a in results.articles} == {"30000001", "30000006"}
    assert results.failed == ["pubmed", "europepmc"]


async def test_a_failed_source_rests_while_another_answers(fakes: Settings) -> None:
    # Europe PMC down: a research job paid its retries again for every sub-question.
    fakes.europepmc.max_retries = 1
    fakes.search.failed_source_rest_s = 1.5
    epmc = _FAKES["europepmc"]
    epmc.enqueue(Fault.status(500), times=2)  # the first search's try and its retry
    async with SourceSet(fakes, "all") as sources:
        first = await sources.search("aspirin")
        asked = len(epmc.history)
        assert first.providers["europepmc"].status == "error" and asked == 2  # one retry
        second = await sources.search("aspirin")
        # Not asked again; its failure still reported (a report says what is missing).
        assert len(epmc.history) == asked
        assert second.providers["europepmc"].status == "error"
        assert second.providers["europepmc"].not_asked
        assert second.providers["europepmc"].error == first.providers["europepmc"].error
        assert second.providers["pubmed"].status == "ok" and second.articles
        await asyncio.sleep(1.6)
        third = await sources.search("aspirin")  # rested: asked again, and answers
        assert len(epmc.history) == asked + 1
        assert third.providers["europepmc"].status == "ok"
        assert not third.providers["europepmc"].not_asked


async def test_when_every_source_failed_every_source_is_asked_again(fakes: Settings) -> None:
    fakes.pubmed.max_retries = 0
    fakes.search.failed_source_rest_s = 60.0
    pubmed = _FAKES["pubmed"]
    pubmed.enqueue(Fault.status(500))
    async with SourceSet(fakes, "pubmed") as sources:
        failed = await sources.search("aspirin")
        assert failed.providers["pubmed"].status == "error"
        again = await sources.search("aspirin")  # the only source: never left out
    assert again.providers["pubmed"].status == "ok" and again.articles


async def test_disabled_provider_is_reported(fakes: Settings) -> None:
    fakes.europepmc.enabled = False
    async with SourceSet(fakes, "all") as sources:
        results = await sources.search("aspirin")
    assert results.providers["europepmc"].status == "disabled"
    assert results.providers["pubmed"].count == 2


@pytest.mark.parametrize(
    ("query", "sources", "message"),
    [
        ("   ", "all", "empty"),
        ("x" * 2001, "all", "2001 characters"),
        (SearchQuery(term="x", min_year=2020, max_year=2010), "all", "reversed"),
        ("aspirin", "scopus", "unknown source 'scopus'"),
    ],
)
async def test_bad_input(settings: Settings, query: object, sources: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        found = build_sources(settings, sources)
        await search_all_providers(query, found, settings=settings)  # type: ignore[arg-type]


def test_merge_prefers_abstract_and_fills_gaps() -> None:
    bare = Article(pmid="1", title="T", citation_count=4, open_access=True, source="europepmc")
    full = sample_articles()[0].model_copy(update={"pmid": "1"})
    merged = merge_articles(bare, full)
    assert merged.abstract == full.abstract and merged.citation_count == 4
    assert merged.open_access is True and merged.source == "pubmed"


class _BrokenSource:
    """A provider with a bug (or whose own state file is unusable)."""

    def __init__(self, error: Exception, name: str = "local") -> None:
        self.name = name
        self.error = error

    async def search(self, query: SearchQuery, *, known: object = None) -> list[Article]:
        raise self.error


async def test_a_crashing_provider_is_one_warning_not_a_traceback(
    fakes: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from medlit.log import configure_logging

    configure_logging("error")  # what the CLI shows by default
    pubmed = build_sources(fakes, "pubmed")
    try:
        results = await search_all_providers(
            "aspirin", [*pubmed, _BrokenSource(KeyError("boom"))], settings=fakes
        )
    finally:
        configure_logging()  # back to the default of every other test
        for source in pubmed:
            await source.aclose()
    assert results.providers["local"].status == "error"
    assert results.providers["local"].error == "KeyError: 'boom'"
    assert results.providers["pubmed"].count == 2  # the others' results still return
    assert "Traceback" not in capsys.readouterr().err


async def test_a_storage_failure_is_not_reported_as_the_source_failing(fakes: Settings) -> None:
    from medlit.errors import StorageError

    broken = _BrokenSource(StorageError("rate limiter state x: readonly"), name="pubmed")
    with pytest.raises(StorageError, match="readonly"):
        await search_all_providers("aspirin", [broken], settings=fakes)
