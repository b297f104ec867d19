"""The provider seam: every literature source implements :class:`Source`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from medlit.types import Article, SearchQuery

__all__ = ["FreshArticles", "Source"]


class FreshArticles(Protocol):
    """What a source may ask of the evidence cache: articles it need not fetch again."""

    def fresh_articles(
        self, pmids: Sequence[str], *, origin: str | None = None
    ) -> dict[str, Article]:
        """Articles among ``pmids`` stored, still fresh and fetched from ``origin`` (the
        address the source would fetch them from; :mod:`medlit.provenance`), keyed by PMID."""
        ...


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
