"""``GET /v1/search`` (the options of ``medlit search``) and ``GET /v1/cache/stats``."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from medlit.errors import SourceUnavailable
from medlit.service.auth import CurrentTenant
from medlit.service.deps import ServiceStateDep
from medlit.service.problems import PROBLEM_RESPONSES

__all__ = ["router"]

router = APIRouter(tags=["search"])


class ArticleOut(BaseModel):
    """One article, as ``medlit search --json`` prints it."""

    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    title: str = ""
    year: int | None = None
    pub_date: str | None = None
    journal: str | None = None
    authors: list[str] = Field(default_factory=list)
    publication_types: list[str] = Field(default_factory=list)
    study_type: str = ""
    abstract: str = ""
    mesh_terms: list[str] = Field(default_factory=list)
    language: str | None = None
    source: str | None = None
    citation_count: int | None = None
    open_access: bool | None = None
    url: str | None = None


class ProviderOut(BaseModel):
    """How one source fared."""

    status: str = Field(description="ok, no_match, error, timeout or disabled.")
    count: int = 0
    error: str | None = None


class SearchResponse(BaseModel):
    """The articles found (deduplicated across sources) and how each source fared."""

    articles: list[ArticleOut]
    providers: dict[str, ProviderOut]


@router.get("/v1/search", response_model=SearchResponse, responses=PROBLEM_RESPONSES)
async def search(
    state: ServiceStateDep,
    tenant: CurrentTenant,
    q: str = Query(min_length=1, max_length=2000, description="What to search for."),
    source: Literal["pubmed", "europepmc", "local", "all"] | None = Query(
        None, description="Where to search (default: the server's default source)."
    ),
    limit: int | None = Query(None, ge=1, le=200, description="Results per source."),
    sort: Literal["relevance", "pub_date"] = Query("relevance", description="Order."),
    from_year: int | None = Query(None, ge=1000, le=3000, description="Earliest year."),
    to_year: int | None = Query(None, ge=1000, le=3000, description="Latest year."),
) -> SearchResponse:
    """Search the literature and list the articles found."""
    from medlit.cli.search import article_json
    from medlit.sources.search import build_query, resolve_source_names

    runtime = state.runtime
    settings = runtime.settings
    query = build_query(q, limit, sort, from_year, to_year, settings)
    names = resolve_source_names(source, settings)
    results = await runtime.source_set(names).search(query)
    tried = [st for st in results.providers.values() if st.status != "disabled"]
    if tried and all(st.status in ("error", "timeout") for st in tried):
        errors = "; ".join(f"{st.provider}: {st.error or st.status}" for st in tried)
        raise SourceUnavailable(f"the search failed, no source answered ({errors})")
    return SearchResponse(
        articles=[ArticleOut(**article_json(a)) for a in results.articles[: query.limit]],
        providers={
            name: ProviderOut(status=st.status, count=st.count, error=st.error)
            for name, st in results.providers.items()
        },
    )


@router.get("/v1/cache/stats", responses=PROBLEM_RESPONSES)
async def cache_stats(state: ServiceStateDep, tenant: CurrentTenant) -> dict[str, Any]:
    """The caller's tier-1 answers and word pairs, the shared evidence cache, this process's
    lookups and the guard's measured error (wrong hits of near-miss edits, 95% upper bound).

    Another tenant's entries are never counted or named.
    """
    import anyio.to_thread

    from medlit.cache.bound import MEASURED
    from medlit.cache.word_pairs import WordPairStore

    store = state.runtime.store
    settings = state.runtime.settings
    counters = state.metrics.tier1_counts(tenant.name)
    pairs = await anyio.to_thread.run_sync(lambda: WordPairStore(store).pairs(tenant.name))
    return {
        "tenant": tenant.name,
        "answers": {
            "entries": store.count_answers(tenant.name),
            "capacity": settings.cache.answer_capacity,
            **counters,
        },
        "evidence": {"articles": store.count_articles(), "chunks": store.count_chunks()},
        "word_pairs": {
            v: sum(p.verdict == v for p in pairs) for v in ("same", "different", "pending")
        },
        # The guard's measured error on near-miss edits (medlit.cache.bound), not this tenant's.
        "guard_error": MEASURED.as_dict(),
    }
