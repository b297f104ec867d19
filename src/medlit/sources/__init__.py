"""Literature sources: PubMed (E-utilities), Europe PMC and the local corpus.

Callers use :class:`SourceSet` (holds the providers and their HTTP client) or
:func:`search_all_providers` with sources from :func:`build_sources`. The provider modules
themselves are imported lazily by :func:`build_sources`, so importing this package is cheap.
"""

from __future__ import annotations

from medlit.sources.base import FreshArticles, Source
from medlit.sources.search import (
    SourceSet,
    build_sources,
    merge_articles,
    resolve_source_names,
    search_all_providers,
    validate_query,
)

__all__ = [
    "FreshArticles",
    "Source",
    "SourceSet",
    "build_sources",
    "merge_articles",
    "resolve_source_names",
    "search_all_providers",
    "validate_query",
]
