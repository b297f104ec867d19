"""PubMedSource against the fake E-utilities server over real HTTP."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from urllib.parse import urljoin

import httpx
import pytest

from medlit.config import Settings
from medlit.errors import MalformedResponse, RateLimited, SourceResponseError, SourceUnavailable
from medlit.sources.http import RetryPolicy, send
from medlit.sources.pubmed import PubMedSource
from medlit.types import Article, SearchQuery
from medlit.usage import usage_scope
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.fixtures import sample_articles


@pytest.fixture
def fake(make_fake_eutils: Callable[..., FakeEutils]) -> FakeEutils:
    return make_fake_eutils(articles=sample_articles(), rate_limit=None)


@pytest.fixture
def pm_settings(settings: Settings, fake: FakeEutils) -> Settings:
    settings.pubmed.base_url = fake.base_url
    settings.pubmed.timeout_s = 10.0  # an ordinary reply on a loaded machine never times out
    settings.pubmed.requests_per_second = 50
    return settings


class Known:
    """A FreshArticles holding some articles."""

    def __init__(self, articles: list[Article]) -> None:
        self.articles = {a.pmid: a for a in articles if a.pmid}
        self.asked: list[str] = []
        self.origins: list[str | None] = []

    def fresh_articles(
        self, pmids: Sequence[str], *, origin: str | None = None
    ) -> dict[str, Article]:
        self.asked.extend(pmids)
        self.origins.append(origin)
        return {p: self.articles[p] for p in pmids if p in self.articles}


async def test_search_returns_parsed_articles_and_counts_calls(
    pm_settings: Settings, fake: FakeEutils
) -> None:
    async with PubMedSource(pm_settings) as source:
        with usage_scope() as usage:
            articles = await source.search(SearchQuery(term="aspirin", limit=10))
    assert [a.title for a in articles] == [
        "Aspirin and gastrointestinal bleeding in the elderly",
        "Aspirin for secondary prevention of stroke",
    ]
    assert articles[1].abstract[-1].is_conclusion
    assert articles[1].doi == "10.5555/medlit.1"
    assert usage.source_calls("pubmed") == 2 == len(fake.history)
    sent = fake.requests("esearch")[0].params
    assert sent["tool"] == "medlit" and sent["term"] == "aspirin" and sent["retmax"] == "10"


async def test_sends_email_and_api_key(pm_settings: Settings, fake: FakeEutils) -> None:
    pm_settings.pubmed.email = "me@example.org"
    pm_settings.pubmed.api_key = "secret-key"  # type: ignore[assignment]
    async with PubMedSource(pm_settings) as source:
        await source.search(SearchQuery(term="statins"))
    for seen in fake.history:
        assert seen.params["email"] == "me@example.org"
        assert seen.params["api_key"] == "secret-key"


async def test_known_articles_are_not_fetched_again(
    pm_settings: Settings, fake: FakeEutils
) -> None:
    corpus = sample_articles()
    known = Known([a for a in corpus if a.pmid == "30000001"])
    async with PubMedSource(pm_settings) as source:
        articles = await source.search(SearchQuery(term="aspirin"), known=known)
    assert {a.pmid for a in articles} == {"30000001", "30000006"}
    assert set(known.asked) == {"30000001", "30000006"}
    # Only records fetched from this address may stand in for a fetch (medlit.provenance).
    assert known.origins == [fake.base_url]
    assert fake.requests("efetch")[0].params["id"] == "30000006"
    # Everything known: esearch only.
    fake.reset()
    async with PubMedSource(pm_settings) as source:
        await source.search(SearchQuery(term="aspirin"), known=Known(corpus))
    assert [r.endpoint for r in fake.history] == ["esearch"]


async def test_sort_date_range_and_paging(pm_settings: Settings, fake: FakeEutils) -> None:
    async with PubMedSource(pm_settings) as source:
        by_date = await source.search(SearchQuery(term="aspirin OR statins", sort="pub_date"))
        ranged = await source.search(SearchQuery(term="aspirin", min_year=2015, max_year=2020))
        second = await source.search(SearchQuery(term="aspirin", limit=1, offset=1))
    assert [a.year for a in by_date] == [2019, 2015, 2010]
    assert [a.year for a in ranged] == [2019]
    params = fake.requests("esearch")[1].params
    assert (params["datetype"], params["mindate"], params["maxdate"]) == (
        "pdat",
        "2015/01/01",
        "2020/12/31",
    )
    assert fake.requests("esearch")[0].params["sort"] == "pub_date"
    assert len(second) == 1 and second[0].pmid == "30000001"


async def test_long_id_lists_are_posted_in_batches(pm_settings: Settings, fake: FakeEutils) -> None:
    pm_settings.pubmed.efetch_batch = 4
    pm_settings.pubmed.post_threshold = 3
    pmids = [a.pmid or "" for a in sample_articles()] + ["99999999"]
    async with PubMedSource(pm_settings) as source:
        articles = await source.efetch(pmids)
    assert [a.pmid for a in articles] == pmids[:-1]  # the unknown id is left out
    fetches = fake.requests("efetch")
    assert sorted(r.method for r in fetches) == ["GET", "POST"]  # 4 ids POSTed, 3 by GET
    assert all(len(r.params["id"].split(",")) <= 4 for r in fetches)


async def test_history_server(pm_settings: Settings) -> None:
    async with PubMedSource(pm_settings) as source:
        result = await source.esearch(SearchQuery(term="aspirin OR vitamin"), usehistory=True)
        assert result.webenv and result.query_key == "1" and result.count == 3
        articles = await source.efetch_history(result.webenv, result.query_key, retmax=2)
    assert [a.pmid for a in articles] == result.ids[:2]


async def test_retries_5xx_and_timeouts_then_succeeds(
    pm_settings: Settings, fake: FakeEutils
) -> None:
    fake.enqueue(Fault.status(500), endpoint="esearch")
    fake.enqueue(Fault.status(503), endpoint="esearch")
    pm_settings.pubmed.timeout_s = 3.0  # the delayed efetch is a minute late: it times out
    fake.enqueue(Fault.delay(60.0), endpoint="efetch")
    async with PubMedSource(pm_settings) as source:
        with usage_scope() as usage:
            articles = await source.search(SearchQuery(term="metformin"))
    assert [a.pmid for a in articles] == ["30000003"]
    assert usage.source_calls("pubmed") == 5  # 3 esearch + 2 efetch, each one counted


async def test_gives_up_after_bounded_tries(pm_settings: Settings, fake: FakeEutils) -> None:
    pm_settings.pubmed.max_retries = 2
    fake.enqueue(Fault.status(502), times=3)
    async with PubMedSource(pm_settings) as source:
        with pytest.raises(SourceUnavailable, match=r"502.*after 3 tries"):
            await source.search(SearchQuery(term="metformin"))
    assert len(fake.history) == 3


async def test_429_honours_retry_after(pm_settings: Settings, fake: FakeEutils) -> None:
    fake.enqueue(Fault.status(429, b'{"error":"API rate limit exceeded"}', {"Retry-After": "0.3"}))
    async with PubMedSource(pm_settings) as source:
        await source.esearch(SearchQuery(term="aspirin"))
    first, second = fake.history
    assert second.t - first.t >= 0.29


async def test_429_forever_is_rate_limited(pm_settings: Settings, fake: FakeEutils) -> None:
    pm_settings.pubmed.max_retries = 1
    fake.enqueue(Fault.status(429, b'{"error":"API rate limit exceeded"}'), times=2)
    async with PubMedSource(pm_settings) as source:
        with pytest.raises(RateLimited, match="API rate limit exceeded"):
            await source.esearch(SearchQuery(term="aspirin"))


@pytest.mark.parametrize(
    ("endpoint", "fault", "message"),
    [
        (
            "esearch",
            Fault.body(b"<eSearchResult><ERROR>Search Backend failed</ERROR></eSearchResult>"),
            "Search Backend failed",
        ),
        ("esearch", Fault.body(b'{"error": "API key invalid"}', status=400), "API key invalid"),
        (
            "efetch",
            Fault.body(b"<eFetchResult><ERROR>Empty id list</ERROR></eFetchResult>"),
            "Empty id list",
        ),
        (
            "efetch",
            Fault.body(b"<html><body>Service unavailable</body></html>"),
            "expected a PubmedArticleSet",
        ),
    ],
)
async def test_error_bodies_become_source_response_errors(
    pm_settings: Settings, fake: FakeEutils, endpoint: str, fault: Fault, message: str
) -> None:
    fake.enqueue(fault, endpoint=endpoint)
    async with PubMedSource(pm_settings) as source:
        with pytest.raises(SourceResponseError, match=message):
            await source.search(SearchQuery(term="aspirin"))


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [("efetch", "malformed or truncated PubMed XML"), ("esearch", "truncated esearch JSON")],
)
async def test_truncated_bodies_are_retried_within_the_budget(
    pm_settings: Settings, fake: FakeEutils, endpoint: str, message: str
) -> None:
    pm_settings.pubmed.max_retries = 2
    fake.enqueue(Fault.truncated(), endpoint=endpoint)
    async with PubMedSource(pm_settings) as source:
        assert len(await source.search(SearchQuery(term="aspirin"))) == 2  # retried, then fine
        assert len(fake.requests(endpoint)) == 2
        fake.reset()
        fake.enqueue(Fault.truncated(), endpoint=endpoint, times=3)
        with pytest.raises(MalformedResponse, match=rf"{message}.*after 3 tries"):
            await source.search(SearchQuery(term="aspirin"))
    assert len(fake.requests(endpoint)) == 3  # the same three tries a 5xx gets, no more


async def test_phrase_not_found(pm_settings: Settings) -> None:
    async with PubMedSource(pm_settings) as source:
        # Part of the term unknown, results found: fine (PubMed ignores the phrase).
        found = await source.search(SearchQuery(term="aspirin zzqxv"))
        assert len(found) == 2
        # Nothing usable in the term: a clear error, not a silent empty list.
        with pytest.raises(SourceResponseError, match=r"PhraseNotFound|phrasesnotfound"):
            await source.search(SearchQuery(term="zzqxv"))
        # Known words that match nothing together: a legitimate empty result.
        assert await source.search(SearchQuery(term="aspirin metformin")) == []
        # A quoted phrase matches its words in order ("in the elderly", stop words included).
        found = await source.search(SearchQuery(term='aspirin AND "in the elderly"'))
        assert [a.pmid for a in found] == ["30000006"]
        # A phrase found nowhere is ignored, as PubMed does: aspirin alone.
        assert len(await source.search(SearchQuery(term='"elderly aspirin" AND aspirin'))) == 2


async def test_a_large_body_is_parsed_off_the_event_loop(
    make_fake_eutils: Callable[..., FakeEutils],
) -> None:
    """A page of XML takes milliseconds to parse: a worker thread does it, not the event loop
    (where the service answers cached questions)."""
    articles = [
        a.model_copy(update={"pmid": f"{copy}{a.pmid}"})
        for copy in range(1, 6)
        for a in sample_articles()
    ]
    fake = make_fake_eutils(articles=articles, rate_limit=None)
    threads: list[threading.Thread] = []

    def parse(response: httpx.Response) -> int:
        threads.append(threading.current_thread())
        return len(response.content)

    pmids = [a.pmid for a in articles if a.pmid]
    async with httpx.AsyncClient() as client:
        size = await send(
            client,
            "GET",
            urljoin(fake.base_url, "efetch.fcgi"),
            service="pubmed",
            limiter=None,
            policy=RetryPolicy(max_retries=0),
            params={"db": "pubmed", "id": ",".join(pmids), "retmode": "xml"},
            parse=parse,
        )
    assert size > 16_384  # a body this test means: a real page of records
    assert threads and threads[-1] is not threading.current_thread()
