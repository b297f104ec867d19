"""The provider seam: every literature source implements :class:`Source`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Protocol, runtime_checkable

from medlit.types import Article, SearchQuery

__all__ = ["FreshArticles", "HeldArticles", "Source", "first_entry_day"]


def first_entry_day(since: datetime) -> date:
    """The first day a whole-day entry-date window asks for articles entered since ``since``:
    the UTC day before. PubMed's Entrez dates and Europe PMC's creation dates are whole days
    in the service's own time zone, so an article entered late on the evening before is found
    again rather than missed (the caller drops the ids it holds already)."""
    return (since.astimezone(UTC) - timedelta(days=1)).date()


class FreshArticles(Protocol):
    """What a source may ask of the evidence cache: articles it need not fetch again."""

    def fresh_articles(
        self, pmids: Sequence[str], *, origin: str | None = None
    ) -> dict[str, Article]:
        """Articles among ``pmids`` stored, still fresh and fetched from ``origin`` (the
        address the source would fetch them from; :mod:`medlit.provenance`), keyed by PMID."""
        ...


class HeldArticles:
    """What a source need not fetch again for one question or job: the articles it holds
    already (``held``, by key), then those fresh in the evidence cache (``fresh``, when it is
    used): no efetch asks twice for an id an ask or a research job has."""

    def __init__(self, held: Mapping[str, Article], fresh: FreshArticles | None) -> None:
        self._by_pmid = {a.pmid: a for a in held.values() if a.pmid}
        self._fresh = fresh

    def fresh_articles(
        self, pmids: Sequence[str], *, origin: str | None = None
    ) -> dict[str, Article]:
        """Articles among ``pmids`` the question or job holds, then those the evidence cache
        holds fresh from ``origin`` (see :class:`FreshArticles`)."""
        found = {p: self._by_pmid[p] for p in pmids if p in self._by_pmid}
        rest = [p for p in pmids if p not in found]
        if rest and self._fresh is not None:
            found.update(self._fresh.fresh_articles(rest, origin=origin))
        return found


@runtime_checkable
class Source(Protocol):
    """A literature provider (PubMed, Europe PMC, the local corpus)."""

    name: str

    async def search(
        self, query: SearchQuery, *, known: FreshArticles | None = None
    ) -> list[Article]:
        """Articles matching ``query``, best first.

        Args:
            query: the search.
            known: articles already held and fresh; a source that fetches records by id after
                searching (PubMed) takes these from ``known`` instead of fetching them again.

        Raises:
            SourceError: the provider failed (after its own retries).
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
