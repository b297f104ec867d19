"""``medlit mcp``: medlit as tools for assistant apps, over the Model Context Protocol (stdio).

Tools (the same engine as the CLI and the HTTP service, over one
:class:`~medlit.runtime.Runtime`):

* ``search_literature``: articles from PubMed / Europe PMC / the local corpus.
* ``ask``: a cited answer (tier-1 cache first; PMIDs are only those retrieved).
* ``start_research``: a deep-research job, run by this process's worker pool; durable (a job
  left unfinished when the process stops is resumed by the next ``medlit mcp`` or
  ``medlit serve`` on the same data).
* ``research_status``: a job's status, sub-questions and usage, and its report when completed.

A failure (bad input, a source or model down) is a tool error with the one-line reason the CLI
prints. Everything runs as one tenant (``default`` unless ``--tenant`` says otherwise): the MCP
client is a local user, like the CLI. Logs go to stderr; stdout carries only the protocol.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from medlit.config import Settings
from medlit.errors import MedlitError
from medlit.research.models import DEFAULT_TENANT

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from medlit.research.worker import ResearchWorkers
    from medlit.runtime import Runtime

__all__ = ["build_server", "run_stdio"]

T = TypeVar("T")

INSTRUCTIONS = (
    "medlit answers biomedical questions from the literature (PubMed, Europe PMC) with "
    "citations to articles it actually retrieved. Use `ask` for a question, "
    "`search_literature` to list articles, and `start_research` then `research_status` for a "
    "referenced multi-source report (it takes minutes; poll the status)."
)


async def _tool_call(work: Callable[[], Awaitable[T]]) -> T:
    """Run a tool's work; medlit errors become tool errors with the CLI's one-line reason."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return await work()
    except MedlitError as exc:
        raise ToolError(str(exc) or type(exc).__name__) from None


def build_server(
    runtime: Runtime, *, tenant: str = DEFAULT_TENANT, research_workers: int = 1
) -> MCPServer[Any]:
    """The MCP server over ``runtime`` (its research workers run while the server does).

    Args:
        runtime: the composition root; closed by its owner, not here.
        tenant: whose answers, sessions and jobs these are.
        research_workers: research jobs run at once.
    """
    from mcp.server.mcpserver import MCPServer

    from medlit import __version__
    from medlit.assistant import Assistant
    from medlit.research.worker import ResearchWorkers

    assistant = Assistant(runtime=runtime)
    workers = ResearchWorkers(runtime, workers=research_workers)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        await workers.start()
        try:
            yield {}
        finally:
            await workers.stop()
            await assistant.aclose()

    server: MCPServer[Any] = MCPServer(
        "medlit", instructions=INSTRUCTIONS, version=__version__, lifespan=lifespan
    )

    @server.tool()
    async def search_literature(
        query: str,
        source: Literal["pubmed", "europepmc", "local", "all"] = "all",
        limit: int = 10,
        from_year: int | None = None,
        to_year: int | None = None,
    ) -> dict[str, Any]:
        """Search the biomedical literature; returns articles (PMID, DOI, title, journal, year,
        authors, abstract) and how each source fared."""

        async def work() -> dict[str, Any]:
            return await _search(runtime, query, source, limit, from_year, to_year)

        return await _tool_call(work)

    @server.tool()
    async def ask(question: str, session_id: str | None = None) -> dict[str, Any]:
        """Answer a biomedical question from the literature, citing the PMIDs it used (a
        session id, 1-128 letters, digits, '.', '_', ':' or '-', keeps the conversation for
        follow-up questions)."""

        async def work() -> dict[str, Any]:
            text = assistant.validate_question(question)
            result = await assistant.ask(text, session_id=session_id, namespace=tenant)
            return result.model_dump(mode="json")

        return await _tool_call(work)

    _add_research_tools(server, workers, tenant)
    return server


def _add_research_tools(server: MCPServer[Any], workers: ResearchWorkers, tenant: str) -> None:
    """The research tools: start a job, follow it."""
    from medlit.research.report import render_markdown
    from medlit.service.research_routes import job_view

    @server.tool()
    async def start_research(
        question: str, depth: Literal["quick", "standard", "deep"] = "standard"
    ) -> dict[str, Any]:
        """Start a deep-research job (plan, search, cross-check, referenced report); returns
        its id at once. Follow it with research_status."""

        async def work() -> dict[str, Any]:
            job = await workers.submit(question, depth, tenant)
            return job_view(job).model_dump(mode="json")

        return await _tool_call(work)

    @server.tool()
    async def research_status(job_id: str, include_report: bool = True) -> dict[str, Any]:
        """A research job's status, stage, sub-questions and usage; with its Markdown report
        once COMPLETED."""

        async def work() -> dict[str, Any]:
            job = await workers.get(job_id, tenant)
            view = job_view(job).model_dump(mode="json")
            if include_report and job.report is not None:
                view["report_markdown"] = render_markdown(job.report, job)
            return view

        return await _tool_call(work)


async def _search(
    runtime: Runtime,
    query: str,
    source: str,
    limit: int,
    from_year: int | None,
    to_year: int | None,
) -> dict[str, Any]:
    """The search_literature tool: the articles found, and how each source fared."""
    from pydantic import ValidationError as PydanticValidationError

    from medlit.cli.search import article_json
    from medlit.errors import ValidationError
    from medlit.sources.search import resolve_source_names, validate_query
    from medlit.types import SearchQuery

    settings = runtime.settings
    try:
        wanted = SearchQuery(term=query, limit=limit, min_year=from_year,
                             max_year=to_year)  # fmt: skip
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ValidationError(f"invalid {where}: {first['msg']}") from None
    wanted = validate_query(wanted, settings)
    names = resolve_source_names(source, settings, all_means_enabled=True)
    results = await runtime.source_set(names).search(wanted)
    return {
        "articles": [article_json(a) for a in results.articles[: wanted.limit]],
        "providers": {
            name: {"status": st.status, "count": st.count, "error": st.error}
            for name, st in results.providers.items()
        },
    }


def run_stdio(
    settings: Settings, *, tenant: str = DEFAULT_TENANT, research_workers: int = 1
) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    import anyio

    from medlit.runtime import Runtime

    async def main() -> None:
        runtime = Runtime.open(settings)
        try:
            server = build_server(runtime, tenant=tenant, research_workers=research_workers)
            await server.run_stdio_async()
        finally:
            await runtime.aclose()

    anyio.run(main)
