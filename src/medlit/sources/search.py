"""search_all_providers: every enabled source at once, combined and deduplicated.

A provider that fails or runs past its deadline is logged and reported in
``SearchResults.providers`` while the others' results still return (seed 002, "Search Client
Flow"). Articles are deduplicated by PMID, then DOI, then normalised title; when two providers
return the same article the records are merged (the one with an abstract wins, Europe PMC's
citation count and open-access flag are kept).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from medlit.config import Settings
from medlit.errors import (
    QueryNotUnderstood,
    SourceError,
    SourceUnreachable,
    StorageError,
    ValidationError,
)
from medlit.log import get_logger
from medlit.sources.base import FreshArticles, Source
from medlit.text import require_clean_text
from medlit.types import (
    SOURCE_NAMES,
    Article,
    ProviderStatus,
    SearchQuery,
    SearchResults,
    normalise_title,
)

__all__ = [
    "SourceSet",
    "build_query",
    "build_sources",
    "merge_articles",
    "resolve_source_names",
    "search_all_providers",
    "validate_query",
]

if TYPE_CHECKING:
    import httpx

log = get_logger("sources.search")


def resolve_source_names(
    names: str | Iterable[str] | None, settings: Settings, *, all_means_enabled: bool = False
) -> list[str]:
    """``"all"``, a name, a comma list or a list of names, as valid provider names.

    Args:
        names: what was asked for (None: ``settings.search.default_source``).
        settings: the settings (default source, which providers are enabled).
        all_means_enabled: expand ``all`` to the enabled providers only (the answer cache's
            fingerprint must name the sources that really shape an answer).

    Raises:
        ValidationError: an unknown source name, or nothing to search.
    """
    if names is None:
        names = settings.search.default_source
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    resolved: list[str] = []
    for name in names:
        if name == "all":
            resolved.extend(
                n for n in SOURCE_NAMES if not all_means_enabled or _enabled(settings, n)
            )
        elif name in SOURCE_NAMES:
            resolved.append(name)
        else:
            choices = ", ".join([*SOURCE_NAMES, "all"])
            raise ValidationError(f"unknown source {name!r} (choose from {choices})")
    if not resolved:
        raise ValidationError("no source given")
    return list(dict.fromkeys(resolved))


def build_query(
    term: str,
    limit: int | None,
    sort: str,
    from_year: int | None,
    to_year: int | None,
    settings: Settings,
) -> SearchQuery:
    """A checked :class:`SearchQuery` from a front end's options (the CLI's and the service's).

    Raises:
        ValidationError: an unknown sort, a value out of range, or what :func:`validate_query`
            refuses, in one line.
    """
    from pydantic import ValidationError as PydanticValidationError

    if sort not in ("relevance", "pub_date"):
        raise ValidationError(f"unknown sort {sort!r} (choose relevance or pub_date)")
    try:
        query = SearchQuery(
            term=term,
            limit=limit if limit is not None else settings.search.default_limit,
            sort=sort,
            min_year=from_year,
            max_year=to_year,
        )
    except PydanticValidationError as exc:
        raise ValidationError(_out_of_range(exc.errors()[0])) from None
    return validate_query(query, settings)


#: What a person calls each option of a search.
_OPTION_NAMES = {
    "limit": "the number of results",
    "min_year": "the earliest year",
    "max_year": "the latest year",
}


def _out_of_range(error: Any) -> str:
    """One of pydantic's errors in our words: "the number of results must be at least 1 (got
    0)" rather than "Input should be greater than or equal to 1"."""
    where = ".".join(str(p) for p in error["loc"])
    name = _OPTION_NAMES.get(where, where)
    bound = error.get("ctx") or {}
    rules = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("more than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if error["type"] in rules:
        words, key = rules[error["type"]]
        return f"{name} must be {words} {bound.get(key)} (got {error.get('input')!r})"
    return f"{name}: {str(error['msg']).lower()} (got {error.get('input')!r})"


def validate_query(query: SearchQuery | str, settings: Settings) -> SearchQuery:
    """The query, checked: valid text (see :func:`medlit.text.require_clean_text`), not empty,
    not too long, years in order.

    Raises:
        ValidationError: what is wrong, in one line.
    """
    if isinstance(query, str):
        query = SearchQuery(term=query, limit=settings.search.default_limit)
    term = require_clean_text(query.term, "the query").strip()
    if not term:
        raise ValidationError("the query is empty")
    if len(term) > settings.search.max_query_chars:
        raise ValidationError(
            f"the query is {len(term)} characters long; the limit is "
            f"{settings.search.max_query_chars}"
        )
    low, high = query.min_year, query.max_year
    if low is not None and high is not None and low > high:
        raise ValidationError(f"the date range is reversed (from {low} to {high})")
    return query.model_copy(update={"term": term}) if term != query.term else query


def build_sources(
    settings: Settings,
    names: str | Iterable[str] | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> list[Source]:
    """Source objects for ``names`` (``"all"``, one name, or several).

    Args:
        settings: medlit settings.
        names: which providers; ``None`` means ``settings.search.default_source``.
        client: an HTTP client for the remote sources to share (else each opens its own).

    Raises:
        ValidationError: an unknown source name.
    """
    from medlit.sources.europepmc import EuropePMCSource
    from medlit.sources.local import LocalSource
    from medlit.sources.pubmed import PubMedSource

    sources: list[Source] = []
    for name in resolve_source_names(names, settings):
        if name == "pubmed":
            sources.append(PubMedSource(settings, client=client))
        elif name == "europepmc":
            sources.append(EuropePMCSource(settings, client=client))
        else:
            sources.append(LocalSource(settings))
    return sources


def _enabled(settings: Settings, name: str) -> bool:
    section = getattr(settings, name, None)
    return bool(getattr(section, "enabled", True))


def merge_articles(first: Article, second: Article) -> Article:
    """One record from two copies of the same article.

    The copy with an abstract (else the first) is the base; fields it lacks are filled from the
    other; citation count and open access are kept from whichever has them.
    """
    base, other = (second, first) if second.abstract and not first.abstract else (first, second)
    update = {}
    for field, value in base:
        if value in (None, "", []) and getattr(other, field) not in (None, "", []):
            update[field] = getattr(other, field)
    if base.citation_count is None and other.citation_count is not None:
        update["citation_count"] = other.citation_count
    if base.open_access is None and other.open_access is not None:
        update["open_access"] = other.open_access
    return base.model_copy(update=update) if update else base


def _dedupe(articles: Iterable[Article]) -> list[Article]:
    merged: list[Article] = []
    index: dict[str, int] = {}
    for article in articles:
        keys = []
        if article.pmid:
            keys.append(f"pmid:{article.pmid}")
        if article.doi:
            keys.append(f"doi:{article.doi.lower()}")
        title = normalise_title(article.title)
        if len(title) >= 20:  # short titles ("Editorial") are not identities
            keys.append(f"title:{title}")
        slot = next((index[k] for k in keys if k in index), None)
        if slot is None:
            slot = len(merged)
            merged.append(article)
        else:
            existing = merged[slot]
            if article.pmid and existing.pmid and article.pmid != existing.pmid:
                # Same DOI or title but two PMIDs (errata, reprints): keep both.
                slot = len(merged)
                merged.append(article)
            else:
                merged[slot] = merge_articles(existing, article)
        for key in keys:
            index.setdefault(key, slot)
    return merged


async def _run_one(
    source: Source, query: SearchQuery, known: FreshArticles | None, settings: Settings
) -> tuple[list[Article], ProviderStatus]:
    started = time.monotonic()
    status = ProviderStatus(provider=source.name, status="ok")
    articles: list[Article] = []
    try:
        articles = await asyncio.wait_for(
            source.search(query, known=known), timeout=settings.search.provider_timeout_s
        )
    except TimeoutError:
        status.status = "timeout"
        status.error = f"no answer within {settings.search.provider_timeout_s:g}s"
        log.warning("provider_timeout", provider=source.name, term=query.term)
    except QueryNotUnderstood as exc:
        status.status, status.error = "no_match", str(exc)
        log.info("provider_no_match", provider=source.name, error=str(exc))
    except SourceError as exc:
        status.status, status.error = "error", str(exc)
        status.unreachable = isinstance(exc, SourceUnreachable)
        log.warning("provider_failed", provider=source.name, error=str(exc))
    except StorageError:
        raise  # our own data directory (rate-limit state), not the source: exit 7, not 5
    except Exception as exc:  # a provider bug must not sink the other providers' results
        status.status, status.error = "error", f"{type(exc).__name__}: {exc}"
        # A bug: the user sees one warning line; the traceback is for MEDLIT_LOG_LEVEL=debug.
        log.warning("provider_crashed", provider=source.name, error=status.error)
        log.debug("provider_crashed_traceback", provider=source.name, exc_info=True)
    status.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
    if settings.search.english_only:
        kept = [a for a in articles if a.is_english]
        status.dropped_non_english = len(articles) - len(kept)
        articles = kept
    status.count = len(articles)
    return articles, status


async def search_all_providers(
    query: SearchQuery | str,
    sources: Sequence[Source],
    *,
    settings: Settings,
    known: FreshArticles | None = None,
) -> SearchResults:
    """Search every enabled provider concurrently; combine and deduplicate.

    Args:
        query: the search (a plain string uses ``settings.search.default_limit``).
        sources: providers to ask (see :func:`build_sources` / :class:`SourceSet`).
        settings: medlit settings (timeouts, English filter, enabled flags).
        known: fresh articles the caller holds (PubMed skips fetching them).

    Returns:
        The combined articles, in provider order then rank, and a status per provider.

    Raises:
        ValidationError: the query is empty, too long, or its date range reversed.
    """
    query = validate_query(query, settings)
    statuses: dict[str, ProviderStatus] = {}
    active = []
    for source in sources:
        if _enabled(settings, source.name):
            active.append(source)
        else:
            statuses[source.name] = ProviderStatus(provider=source.name, status="disabled")
    outcomes = await asyncio.gather(*(_run_one(s, query, known, settings) for s in active))
    combined: list[Article] = []
    for articles, status in outcomes:
        statuses[status.provider] = status
        combined.extend(articles)
    results = SearchResults(query=query, articles=_dedupe(combined), providers=statuses)
    if not results.articles:
        log.info("no_search_results", term=query.term, failed=results.failed)
    return results


class SourceSet:
    """The providers a long-lived caller (agent, research job, CLI command) holds.

    It owns one shared HTTP client and closes it (and every source) on exit::

        async with SourceSet(settings, "all") as sources:
            results = await sources.search("aspirin stroke prevention")

    Args:
        settings: medlit settings.
        names: providers to use (``"all"``, one name, several); default: the configured one.
    """

    def __init__(self, settings: Settings, names: str | Iterable[str] | None = None) -> None:
        import httpx  # here, not at import time: a cached answer never needs it

        self.settings = settings
        self.client = httpx.AsyncClient(
            follow_redirects=True, headers={"User-Agent": f"{settings.pubmed.tool} (medlit)"}
        )
        self.sources = build_sources(settings, names, client=self.client)
        # Sources that failed, until when they rest, and how they failed.
        self._resting: dict[str, tuple[float, ProviderStatus]] = {}

    @property
    def names(self) -> list[str]:
        """Names of the providers held."""
        return [s.name for s in self.sources]

    def get(self, name: str) -> Source | None:
        """The provider called ``name``, if held."""
        return next((s for s in self.sources if s.name == name), None)

    async def search(
        self, query: SearchQuery | str, *, known: FreshArticles | None = None
    ) -> SearchResults:
        """:func:`search_all_providers` over the held providers.

        A source that failed (its own retries spent) rests for ``search.failed_source_rest_s``
        while another source can answer: a research job's next sub-questions, or the next
        asks of a service, do not pay its retries again (Europe PMC down once cost a quick job
        24 of its 30 source calls and its main question). Its failure stays in the results
        (``failed``, marked ``not_asked``), so reports still say what is missing. A source
        that answers is trusted again at once; when every source rests, all are asked.
        """
        rest_s = self.settings.search.failed_source_rest_s
        now = time.monotonic()
        resting = {n: st for n, (until, st) in self._resting.items() if until > now}
        active = [s for s in self.sources if s.name not in resting]
        if not any(_enabled(self.settings, s.name) for s in active):
            active, resting = list(self.sources), {}
        results = await search_all_providers(query, active, settings=self.settings, known=known)
        for name, status in results.providers.items():
            if status.status in {"error", "timeout"} and rest_s > 0:
                self._resting[name] = (time.monotonic() + rest_s, status)
                log.warning("source_resting", source=name, seconds=rest_s, error=status.error)
            elif status.status in {"ok", "no_match"}:
                self._resting.pop(name, None)
        for name, status in resting.items():
            results.providers[name] = status.model_copy(
                update={"not_asked": True, "elapsed_ms": 0.0}
            )
        return results

    async def aclose(self) -> None:
        """Close every source and the shared client."""
        for source in self.sources:
            await source.aclose()
        await self.client.aclose()

    async def __aenter__(self) -> SourceSet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
