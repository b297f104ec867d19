"""PubMed through NCBI E-utilities: esearch for ids, efetch for the records.

Every request goes through :func:`medlit.sources.http.send` (the host's shared rate limiter,
retries, accounting) and carries ``tool``, ``email`` and ``api_key`` when set. Records the
caller already holds fresh (``known``) are not fetched again: that is most of what makes a
second question on the same topic cheap.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx

from medlit.config import Settings
from medlit.log import get_logger
from medlit.sources.base import FreshArticles, first_entry_day
from medlit.sources.http import RetryPolicy, send
from medlit.sources.pubmed_xml import ESearchResult, parse_esearch, parse_pubmed_xml
from medlit.sources.ratelimit import RateLimiter, limiter_for
from medlit.types import Article, SearchQuery

__all__ = ["PubMedSource", "entrez_window"]

log = get_logger("sources.pubmed")

T = TypeVar("T")


def entrez_window(since: datetime) -> tuple[str, str]:
    """``mindate`` and ``maxdate`` (YYYY/MM/DD) of an esearch for records entered since
    ``since``: from :func:`~medlit.sources.base.first_entry_day` on."""
    return first_entry_day(since).strftime("%Y/%m/%d"), "3000/12/31"


def _parse_efetch(data: bytes) -> list[Article]:
    return parse_pubmed_xml(data, source="pubmed")


class PubMedSource:
    """The PubMed provider.

    Args:
        settings: medlit settings (``settings.pubmed`` and ``settings.home`` are used).
        client: an HTTP client to share; by default the source opens (and closes) its own.
    """

    name = "pubmed"

    def __init__(self, settings: Settings, *, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self.config = settings.pubmed
        base = self.config.base_url
        self.base_url = base if base.endswith("/") else base + "/"
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            headers={"User-Agent": f"{self.config.tool} (medlit)"}, follow_redirects=True
        )
        self.limiter: RateLimiter = limiter_for(
            settings, urlsplit(self.base_url).netloc, self.config.rate
        )
        self.policy = RetryPolicy.from_settings(self.config)

    def _identity(self) -> dict[str, str]:
        params = {"db": "pubmed", "tool": self.config.tool}
        if self.config.email:
            params["email"] = self.config.email
        if self.config.api_key is not None:
            params["api_key"] = self.config.api_key.get_secret_value()
        return params

    async def _call(
        self,
        utility: str,
        params: dict[str, Any],
        parse: Callable[[bytes], T],
        *,
        post: bool = False,
    ) -> T:
        # The body is parsed inside send's retry loop: a truncated one is retried like a 5xx.
        url = urljoin(self.base_url, f"{utility}.fcgi")
        fields = {**self._identity(), **params}
        return await send(
            self.client,
            "POST" if post else "GET",
            url,
            service=self.name,
            limiter=self.limiter,
            policy=self.policy,
            params=None if post else fields,
            data=fields if post else None,
            parse=lambda response: parse(response.content),
        )

    async def esearch(self, query: SearchQuery, *, usehistory: bool = False) -> ESearchResult:
        """PMIDs matching ``query`` (one page: ``query.offset``, ``query.limit``).

        Raises:
            SourceError: the request failed, or NCBI answered with an error body.
        """
        params: dict[str, Any] = {
            "term": query.term,
            "retmax": query.limit,
            "retstart": query.offset,
            "retmode": "json",
            "sort": "pub_date" if query.sort == "pub_date" else "relevance",
        }
        if query.entered_since is not None:
            # E-utilities takes one date window per search: the entry (Entrez) date here, with
            # the year range as a publication-date clause of the term.
            params["datetype"] = "edat"
            params["mindate"], params["maxdate"] = entrez_window(query.entered_since)
            if query.min_year is not None or query.max_year is not None:
                low, high = query.min_year or 1800, query.max_year or 3000
                params["term"] = f'({query.term}) AND ("{low}"[dp] : "{high}"[dp])'
        elif query.min_year is not None or query.max_year is not None:
            # E-utilities needs both ends of a date range.
            params["datetype"] = "pdat"
            params["mindate"] = f"{query.min_year or 1800}/01/01"
            params["maxdate"] = f"{query.max_year or 3000}/12/31"
        if usehistory:
            params["usehistory"] = "y"
        result = await self._call(
            "esearch", params, functools.partial(parse_esearch, source=self.name)
        )
        if result.warnings:
            log.warning("pubmed_search_warnings", term=query.term, warnings=result.warnings)
        return result

    async def efetch(self, pmids: Sequence[str]) -> list[Article]:
        """Records of ``pmids`` (batched; POST for long lists), in the order asked.

        PMIDs PubMed does not return (withdrawn, mistyped) are left out and logged.
        """
        ids = list(dict.fromkeys(p.strip() for p in pmids if p and p.strip()))
        if not ids:
            return []
        size = self.config.efetch_batch
        batches = [ids[i : i + size] for i in range(0, len(ids), size)]
        parts = await asyncio.gather(*(self._efetch_batch(batch) for batch in batches))
        by_pmid = {a.pmid: a for part in parts for a in part if a.pmid}
        missing = [p for p in ids if p not in by_pmid]
        if missing:
            log.warning("pubmed_records_missing", pmids=missing[:20], count=len(missing))
        return [by_pmid[p] for p in ids if p in by_pmid]

    async def _efetch_batch(self, batch: list[str]) -> list[Article]:
        params = {"id": ",".join(batch), "retmode": "xml", "rettype": "abstract"}
        return await self._call(
            "efetch", params, _parse_efetch, post=len(batch) > self.config.post_threshold
        )

    async def efetch_history(
        self, webenv: str, query_key: str, *, retstart: int = 0, retmax: int = 20
    ) -> list[Article]:
        """Records of a history-server result set (esearch ``usehistory=y``)."""
        params = {
            "WebEnv": webenv,
            "query_key": query_key,
            "retstart": retstart,
            "retmax": retmax,
            "retmode": "xml",
            "rettype": "abstract",
        }
        return await self._call("efetch", params, _parse_efetch)

    async def fetch(
        self, pmids: Sequence[str], *, known: FreshArticles | None = None
    ) -> list[Article]:
        """Records of ``pmids`` in order, taking the fresh ones from ``known`` (only those
        fetched from this source's address: a test server's records never stand in for
        PubMed's)."""
        ids = list(dict.fromkeys(pmids))
        held = {}
        if known is not None and ids:  # a store read: off the event loop
            held = await asyncio.to_thread(
                functools.partial(known.fresh_articles, ids, origin=self.base_url)
            )
        fetched = await self.efetch([p for p in ids if p not in held])
        by_pmid = {**held, **{a.pmid: a for a in fetched if a.pmid}}
        return [by_pmid[p] for p in ids if p in by_pmid]

    async def search(
        self, query: SearchQuery, *, known: FreshArticles | None = None
    ) -> list[Article]:
        """Articles matching ``query``, in PubMed's order.

        Raises:
            SourceError: PubMed failed after retries or answered with an error.
        """
        result = await self.esearch(query)
        if not result.ids:
            return []
        articles = await self.fetch(result.ids, known=known)
        log.debug("pubmed_search", term=query.term, count=result.count, returned=len(articles))
        return articles

    async def aclose(self) -> None:
        """Close the HTTP client if this source opened it."""
        if self._own_client:
            await self.client.aclose()

    async def __aenter__(self) -> PubMedSource:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
