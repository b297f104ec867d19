"""The full-text reader: open-access articles' JATS from PubMed Central, or Europe PMC.

For an article with a PMCID (PubMed XML names it: ``<ArticleId IdType="pmc">``), the JATS
comes from E-utilities ``efetch db=pmc``; a record that lacks the PMCID is mapped with
``elink dbfrom=pubmed db=pmc`` (link ``pubmed_pmc``, never ``pubmed_pmc_refs``, which are the
articles citing it). Both go through :func:`medlit.sources.http.send` with the limiter of the
E-utilities host, the very limiter (state shared across processes) every PubMed search and
efetch holds, and PubMed's retry rules. Europe PMC's ``{PMCID}/fullTextXML`` is the second
route, under Europe PMC's limiter. Calls are counted as ``pmc`` and ``europepmc_fulltext`` in
the usage summary.

Only open-access articles are read (:func:`medlit.sources.jats.parse_jats` refuses any other);
a document that fails (malformed, too large, not open access, a source down) fails alone with
one log line, and the article keeps its abstract.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from lxml import etree

from medlit.errors import MalformedResponse, SourceError, SourceResponseError
from medlit.log import get_logger
from medlit.sources.jats import NotOpenAccess, parse_jats
from medlit.types import Article, FullText

if TYPE_CHECKING:  # httpx loads with the reader, not with this module (a cached answer)
    import httpx

    from medlit.config import Settings
    from medlit.sources.ratelimit import RateLimiter

__all__ = ["FullTextReader", "ReadOutcome", "may_read", "parse_elink_pmc"]

log = get_logger("sources.fulltext")

_PMCID = re.compile(r"^(?:PMC)?(\d+)$", re.I)


def _numeric(pmcid: str) -> str | None:
    match = _PMCID.match(pmcid.strip())
    return match.group(1) if match else None


def parse_elink_pmc(data: bytes) -> dict[str, str]:
    """PMID -> PMCID from an elink ``dbfrom=pubmed db=pmc`` reply (link ``pubmed_pmc`` only).

    Raises:
        MalformedResponse: not well-formed XML.
        SourceResponseError: an NCBI error document.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise MalformedResponse(f"pmc: malformed elink XML ({exc})", source="pmc") from None
    error = root.findtext("ERROR") or root.findtext("LinkSet/ERROR")
    if error:
        raise SourceResponseError(f"pmc: NCBI error: {error.strip()}", source="pmc")
    if root.tag != "eLinkResult":
        raise SourceResponseError(f"pmc: expected an eLinkResult, got <{root.tag}>", source="pmc")
    found: dict[str, str] = {}
    for linkset in root.findall("LinkSet"):
        pmids = [(i.text or "").strip() for i in linkset.findall("IdList/Id")]
        for db in linkset.findall("LinkSetDb"):
            if (db.findtext("LinkName") or "").strip() != "pubmed_pmc":
                continue
            links = [(i.text or "").strip() for i in db.findall("Link/Id")]
            if len(pmids) == 1 and links and links[0]:
                found[pmids[0]] = f"PMC{_numeric(links[0]) or links[0]}"
    return found


def may_read(article: Article, elink: str) -> bool:
    """Whether ``article`` may have a full text to read: it names a PMCID, or elink (as the
    ``fulltext.elink`` setting allows) may find one for its PMID, and no source said it is not
    open access (Europe PMC's flag). No request is sent."""
    if article.open_access is False:
        return False
    if article.full_text is not None or article.pmcid:
        return True
    if not article.pmid or elink == "never":
        return False
    return elink == "always" or article.source != "pubmed"


@dataclass
class ReadOutcome:
    """What one :meth:`FullTextReader.read` did.

    Attributes:
        texts: article key -> its full text, for those read.
        no_pmcid: keys of articles with no PMC version known.
        not_open_access: keys of articles PMC holds but not in its open-access subset.
        failed: key -> why, for those whose full text could not be read.
        over_budget: keys left unread because the budget was spent.
    """

    texts: dict[str, FullText] = field(default_factory=dict)
    no_pmcid: list[str] = field(default_factory=list)
    not_open_access: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    over_budget: list[str] = field(default_factory=list)

    @property
    def fetched(self) -> int:
        """Articles whose full text was asked for (what a budget counts)."""
        return len(self.texts) + len(self.not_open_access) + len(self.failed)


class FullTextReader:
    """Reads open-access full text for given articles.

    Args:
        settings: medlit settings (``fulltext``, ``pubmed``, ``europepmc`` are used).
        client: an HTTP client to share; by default the reader opens (and closes) its own.
    """

    def __init__(self, settings: Settings, *, client: httpx.AsyncClient | None = None) -> None:
        import httpx

        from medlit.sources.http import RetryPolicy
        from medlit.sources.ratelimit import limiter_for

        self.settings = settings
        self.config = settings.fulltext
        pubmed = settings.pubmed
        base = pubmed.base_url
        self.base_url = base if base.endswith("/") else base + "/"
        epmc = settings.europepmc.base_url
        self.europepmc_url = epmc if epmc.endswith("/") else epmc + "/"
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(
            headers={"User-Agent": f"{pubmed.tool} (medlit)"}, follow_redirects=True
        )
        # The E-utilities host's limiter: the one PubMed searches and efetches hold.
        self.limiter: RateLimiter = limiter_for(
            settings, urlsplit(self.base_url).netloc, pubmed.rate
        )
        self.policy = RetryPolicy.from_settings(pubmed)
        self.europepmc_limiter: RateLimiter = limiter_for(
            settings,
            urlsplit(self.europepmc_url).netloc,
            settings.europepmc.requests_per_second,
        )
        self.europepmc_policy = RetryPolicy.from_settings(settings.europepmc)

    def _identity(self) -> dict[str, str]:
        params = {"tool": self.settings.pubmed.tool}
        if self.settings.pubmed.email:
            params["email"] = self.settings.pubmed.email
        if self.settings.pubmed.api_key is not None:
            params["api_key"] = self.settings.pubmed.api_key.get_secret_value()
        return params

    def _parse(self, response: httpx.Response) -> FullText:  # called by send
        return parse_jats(response.content, max_bytes=self.config.max_bytes)

    async def pmcid_for(self, pmid: str) -> str | None:
        """The PMCID of PubMed article ``pmid`` (elink), or None when PMC holds none."""
        from medlit.sources.http import send

        params = {**self._identity(), "dbfrom": "pubmed", "db": "pmc", "id": pmid}
        found = await send(
            self.client,
            "GET",
            urljoin(self.base_url, "elink.fcgi"),
            service="pmc",
            limiter=self.limiter,
            policy=self.policy,
            params=params,
            parse=lambda response: parse_elink_pmc(response.content),
        )
        return found.get(pmid)

    async def from_pmc(self, pmcid: str) -> FullText:
        """One article's full text through E-utilities ``efetch db=pmc``."""
        from medlit.sources.http import send

        numeric = _numeric(pmcid)
        if numeric is None:
            raise SourceResponseError(f"pmc: not a PMCID: {pmcid!r}", source="pmc")
        params = {**self._identity(), "db": "pmc", "id": numeric, "retmode": "xml"}
        return await send(
            self.client,
            "GET",
            urljoin(self.base_url, "efetch.fcgi"),
            service="pmc",
            limiter=self.limiter,
            policy=self.policy,
            params=params,
            parse=self._parse,
        )

    async def from_europepmc(self, pmcid: str) -> FullText:
        """One article's full text through Europe PMC's ``{PMCID}/fullTextXML``."""
        from medlit.sources.http import send

        numeric = _numeric(pmcid)
        if numeric is None:
            raise SourceResponseError(f"pmc: not a PMCID: {pmcid!r}", source="pmc")
        full = await send(
            self.client,
            "GET",
            urljoin(self.europepmc_url, f"PMC{numeric}/fullTextXML"),
            service="europepmc_fulltext",
            limiter=self.europepmc_limiter,
            policy=self.europepmc_policy,
            parse=self._parse,
        )
        return full.model_copy(update={"source": "europepmc"})

    async def _pmcid(self, article: Article) -> str | None:
        if article.pmcid:
            return article.pmcid
        if not article.pmid or self.config.elink == "never":
            return None
        if self.config.elink == "stale" and article.source == "pubmed":
            return None  # a PubMed record fetched now names its PMCID when PMC has one
        return await self.pmcid_for(article.pmid)

    async def read_one(self, article: Article) -> FullText | None:
        """The full text of ``article`` (None when it has no PMC version).

        Raises:
            NotOpenAccess: PMC holds it, outside the open-access subset.
            SourceError: every route failed (the last route's error).
        """
        pmcid = await self._pmcid(article)
        if pmcid is None:
            return None
        try:
            return await self.from_pmc(pmcid)
        except NotOpenAccess:
            raise
        except SourceError as exc:
            if not self.config.europepmc_fallback:
                raise
            log.info("full_text_pmc_failed", pmcid=pmcid, error=str(exc)[:200], next="europepmc")
            return await self.from_europepmc(pmcid)

    async def read(self, articles: Sequence[Article], budget: int) -> ReadOutcome:
        """Full texts of ``articles`` (in order, at most ``budget`` fetched), concurrently
        under the shared rate limit; each failure is logged once and costs only its article."""
        outcome = ReadOutcome()
        todo: list[Article] = []
        for article in {a.key: a for a in articles}.values():
            if article.full_text is not None:
                continue
            if article.open_access is False:  # Europe PMC says so: no request spent on it
                outcome.not_open_access.append(article.key)
                continue
            if len(todo) >= budget:
                outcome.over_budget.append(article.key)
            else:
                todo.append(article)

        async def one(article: Article) -> None:
            try:
                full = await self.read_one(article)
            except NotOpenAccess:
                outcome.not_open_access.append(article.key)
                log.info("full_text_not_open_access", pmid=article.pmid, pmcid=article.pmcid)
            except SourceError as exc:
                outcome.failed[article.key] = str(exc)[:300]
                log.warning(
                    "full_text_failed", pmid=article.pmid, pmcid=article.pmcid, error=str(exc)[:300]
                )
            else:
                if full is None:
                    outcome.no_pmcid.append(article.key)
                else:
                    outcome.texts[article.key] = full

        await asyncio.gather(*(one(a) for a in todo))
        return outcome

    async def aclose(self) -> None:
        """Close the HTTP client if this reader opened it."""
        if self._own_client:
            await self.client.aclose()

    async def __aenter__(self) -> FullTextReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
