"""medlit search: ask PubMed, Europe PMC and/or the local corpus, print a table or JSON."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from medlit.cli.app import (
    app,
    build_settings,
    console,
    default_source_help,
    err_console,
    joined,
    print_json,
    run,
    run_async,
    words_argument,
)

if TYPE_CHECKING:
    from medlit.config import Settings
    from medlit.types import Article, SearchQuery, SearchResults

__all__ = ["article_json", "search"]


def article_json(article: Article) -> dict[str, Any]:
    """The JSON form of one article in ``medlit search --json``."""
    return {
        "pmid": article.pmid,
        "doi": article.doi,
        "pmcid": article.pmcid,
        "title": article.title,
        "year": article.year,
        "pub_date": article.pub_date,
        "journal": article.journal,
        "authors": article.authors,
        "publication_types": article.publication_types,
        "study_type": article.study_type.label,
        "abstract": article.abstract_text,
        "mesh_terms": article.mesh_terms,
        "language": article.language,
        "source": article.source,
        "citation_count": article.citation_count,
        "open_access": article.open_access,
        "url": article.url,
    }


async def _search(settings: Settings, query: SearchQuery, source: str | None) -> SearchResults:
    from medlit.sources.search import SourceSet

    async with SourceSet(settings, source) as sources:
        if sys.stderr.isatty():
            with err_console.status("Searching…"):
                return await sources.search(query)
        return await sources.search(query)


def _table(articles: list[Article]) -> None:
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold")
    table.add_column("PMID", no_wrap=True)
    table.add_column("Year", no_wrap=True)
    table.add_column("Journal", max_width=28, overflow="ellipsis", no_wrap=True)
    table.add_column("Study type", max_width=18)
    table.add_column("Title", ratio=1)
    for article in articles:
        table.add_row(
            article.pmid or (f"doi:{article.doi}" if article.doi else "-"),
            str(article.year or ""),
            article.journal or "",
            article.study_type.label,
            article.title,
        )
    console.print(table)


@app.command("search")
@run
def search(
    query: Annotated[list[str], words_argument("What to search for.", "QUERY")],
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            "-s",
            metavar="SOURCE",
            help=f"pubmed, europepmc, local or all (default: {default_source_help()}).",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Results per source.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
    sort: Annotated[str, typer.Option("--sort", help="relevance or pub_date.")] = "relevance",
    from_year: Annotated[int | None, typer.Option("--from-year", help="Earliest year.")] = None,
    to_year: Annotated[int | None, typer.Option("--to-year", help="Latest year.")] = None,
) -> None:
    """Search the literature and list the articles found."""
    from medlit.errors import SourceUnavailable
    from medlit.sources.search import build_query, resolve_source_names

    settings = build_settings()
    search_query = build_query(joined(query), limit, sort, from_year, to_year, settings)
    resolve_source_names(source, settings)  # unknown source: exit 2 before any request
    results = run_async(_search(settings, search_query, source))
    tried = [st for st in results.providers.values() if st.status != "disabled"]
    if tried and all(st.status in ("error", "timeout") for st in tried):
        # The search ran and every source failed: an empty list would read as "nothing
        # published". One line says why (each source's own words).
        why = "; ".join(st.error or f"{st.provider} {st.status}" for st in tried)
        raise SourceUnavailable(f"the search failed, no source answered: {why}")
    for name, status in results.providers.items():
        if status.status in ("error", "timeout", "no_match"):
            err_console.print(
                f"[yellow]warning:[/] {name} {status.status}: {status.error}",
                highlight=False,
                soft_wrap=True,
            )
    articles = results.articles[: search_query.limit]
    if as_json:
        print_json([article_json(a) for a in articles])
        return
    if not articles:
        err_console.print("no articles found")
        return
    _table(articles)
