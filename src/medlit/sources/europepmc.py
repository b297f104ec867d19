"""Europe PMC REST search (``resultType=core``), mapped to :class:`~medlit.types.Article`.

Europe PMC adds what PubMed lacks (citation counts, open-access flags) and is a second road to
the same records when PubMed is slow or down. Pages are walked with ``cursorMark``, the only
paging Europe PMC keeps stable for deep result sets.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from medlit.config import Settings
from medlit.errors import MalformedResponse, SourceResponseError
from medlit.log import get_logger
from medlit.sources.base import FreshArticles, first_entry_day
from medlit.sources.http import RetryPolicy, send
from medlit.sources.ratelimit import limiter_for
from medlit.types import AbstractSection, Article, SearchQuery

__all__ = ["EuropePMCPage", "EuropePMCSource", "article_from_result", "parse_search_page"]

log = get_logger("sources.europepmc")

_HEADING = re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>", re.I | re.S)
# Only real tags: "p < .001 and x > 2" in an abstract is text, not markup.
_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
_SPACE = re.compile(r"\s+")


def strip_html(text: str) -> str:
    """Text without tags and entities, whitespace collapsed."""
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()


def parse_abstract(raw: str | None) -> list[AbstractSection]:
    """Europe PMC ``abstractText`` as sections; ``<h4>Label</h4>`` headings become labels."""
    if not raw:
        return []
    pieces = _HEADING.split(raw)
    sections: list[AbstractSection] = []
    lead = strip_html(pieces[0])
    if lead:
        sections.append(AbstractSection(text=lead))
    for i in range(1, len(pieces) - 1, 2):
        label = strip_html(pieces[i]).rstrip(":") or None
        text = strip_html(pieces[i + 1])
        if text:
            sections.append(AbstractSection(label=label.upper() if label else None, text=text))
    return sections


def _int(value: Any) -> int | None:
    """Europe PMC sends numbers as numbers or as strings."""
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() else None


def _listed(container: Any, key: str) -> list[Any]:
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, list):
            return value
    return []


def article_from_result(result: dict[str, Any]) -> Article:
    """One ``resultList.result`` entry (lite or core) as an :class:`Article`."""
    journal_info = result.get("journalInfo") or {}
    journal = (journal_info.get("journal") or {}).get("title") or result.get("journalTitle")
    year_raw = result.get("pubYear") or journal_info.get("yearOfPublication")
    year = _int(year_raw)
    authors = [
        a.get("fullName") or a.get("collectiveName")
        for a in _listed(result.get("authorList"), "author")
        if a.get("fullName") or a.get("collectiveName")
    ]
    if not authors and result.get("authorString"):
        authors = [a.strip() for a in str(result["authorString"]).rstrip(".").split(",")]
    mesh = [
        m.get("descriptorName")
        for m in _listed(result.get("meshHeadingList"), "meshHeading")
        if m.get("descriptorName")
    ]
    cited = result.get("citedByCount")
    open_access = result.get("isOpenAccess")
    doi = result.get("doi")
    pmid = result.get("pmid") or (result.get("id") if result.get("source") == "MED" else None)
    return Article(
        pmid=str(pmid) if pmid else None,
        doi=str(doi).strip().lower() if doi else None,
        pmcid=result.get("pmcid") or None,
        title=strip_html(result.get("title") or ""),
        abstract=parse_abstract(result.get("abstractText")),
        authors=[a for a in authors if a],
        journal=journal or None,
        pub_date=journal_info.get("dateOfPublication") or result.get("firstPublicationDate"),
        year=year,
        publication_types=[str(p) for p in _listed(result.get("pubTypeList"), "pubType")],
        mesh_terms=mesh,
        keywords=[str(k) for k in _listed(result.get("keywordList"), "keyword")],
        language=result.get("language") or None,
        source="europepmc",
        citation_count=_int(cited),
        open_access=None if open_access is None else str(open_access).upper() == "Y",
    )


class EuropePMCPage:
    """One page of search results: its articles, the total and the next cursor."""

    def __init__(self, articles: list[Article], hit_count: int, next_cursor: str | None) -> None:
        self.articles = articles
        self.hit_count = hit_count
        self.next_cursor = next_cursor


def parse_search_page(data: bytes | str) -> EuropePMCPage:
    """A ``search`` response in JSON.

    Raises:
        SourceResponseError: malformed JSON, an error body, or no ``resultList``.
    """
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise MalformedResponse(
            f"europepmc: malformed or truncated JSON ({exc})", source="europepmc"
        ) from None
    if not isinstance(body, dict):
        raise SourceResponseError("europepmc: response is not an object", source="europepmc")
    for key in ("errMsg", "error", "errorMessage"):
        if body.get(key):
            raise SourceResponseError(f"europepmc: {body[key]}", source="europepmc")
    results = body.get("resultList")
    if not isinstance(results, dict) or not isinstance(results.get("result", []), list):
        raise SourceResponseError("europepmc: response without resultList", source="europepmc")
    articles = [article_from_result(r) for r in results.get("result", []) if isinstance(r, dict)]
    hit_count = _int(body.get("hitCount"))
    return EuropePMCPage(
        articles,
        len(articles) if hit_count is None else hit_count,
        body.get("nextCursorMark") or None,
    )


class EuropePMCSource:
    """The Europe PMC provider.

    Args:
        settings: medlit settings (``settings.europepmc`` and ``settings.home``).
        client: an HTTP client to share; by default the source opens (and closes) its own.
    """

    name = "europepmc"

    def __init__(self, settings: Settings, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = settings.europepmc
        base = self.config.base_url
        self.base_url = base if base.endswith("/") else base + "/"
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(follow_redirects=True)
        self.limiter = limiter_for(
            settings, urlsplit(self.base_url).netloc, self.config.requests_per_second
        )
        self.policy = RetryPolicy.from_settings(self.config)

    @staticmethod
    def build_query(query: SearchQuery) -> str:
        """The Europe PMC query string, with the year range as a PUB_YEAR clause and
        ``entered_since`` as a CREATION_DATE clause (whole days: from
        :func:`~medlit.sources.base.first_entry_day` on)."""
        text = query.term.strip()
        if query.min_year is not None or query.max_year is not None:
            low = query.min_year or 1000
            high = query.max_year or 3000
            text = f"({text}) AND (PUB_YEAR:[{low} TO {high}])"
        if query.entered_since is not None:
            first = first_entry_day(query.entered_since).isoformat()
            text = f"({text}) AND (CREATION_DATE:[{first} TO 3000-12-31])"
        return text

    async def page(
        self, query: SearchQuery, cursor: str = "*", page_size: int = 25
    ) -> EuropePMCPage:
        """One page of results from ``cursor``."""
        params: dict[str, Any] = {
            "query": self.build_query(query),
            "resultType": "core",
            "format": "json",
            "pageSize": page_size,
            "cursorMark": cursor,
        }
        if query.sort == "pub_date":
            params["sort"] = "P_PDATE_D desc"
        url = urljoin(self.base_url, "search")
        return await send(
            self.client,
            "GET",
            url,
            service=self.name,
            limiter=self.limiter,
            policy=self.policy,
            params=params,
            parse=lambda response: parse_search_page(response.content),
        )

    async def search(
        self, query: SearchQuery, *, known: FreshArticles | None = None
    ) -> list[Article]:
        """Articles matching ``query`` (cursor pages until ``offset + limit`` are seen).

        ``known`` is not used: Europe PMC returns whole records with the search, so there is
        nothing to save by skipping a fetch.
        """
        wanted = query.offset + query.limit
        page_size = min(self.config.page_size, wanted)
        cursor = "*"
        found: list[Article] = []
        while len(found) < wanted:
            page = await self.page(query, cursor, page_size)
            found.extend(page.articles)
            if not page.articles or not page.next_cursor or page.next_cursor == cursor:
                break
            cursor = page.next_cursor
        return found[query.offset : wanted]

    async def aclose(self) -> None:
        """Close the HTTP client if this source opened it."""
        if self._own_client:
            await self.client.aclose()
