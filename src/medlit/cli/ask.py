"""``medlit ask``: a cited answer from the literature, behind the two-tier cache.

Everything heavy (the assistant, the embedder, LangGraph, the LLM and source clients) is
imported inside the command, and only as far as the question needs: a cached question in a new
process loads the settings, the store and the embedder, and nothing else.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from medlit.cli.app import (
    WIDE_TABLE_MIN,
    app,
    build_settings,
    console,
    default_source_help,
    detail_cell,
    err_console,
    joined,
    print_json,
    run,
    run_async,
    words_argument,
)
from medlit.cli.footer import (
    VERDICT_LABELS,
    footer_line,
    recheck_line,
    refused_hit_line,
    verbose_lines,
)

if TYPE_CHECKING:
    from rich.table import Table

    from medlit.assistant import AskResult
    from medlit.config import Settings
    from medlit.types import Citation

__all__ = ["ask_command"]


class SourceOption(StrEnum):
    """Where to search."""

    pubmed = "pubmed"
    europepmc = "europepmc"
    local = "local"
    all = "all"


@app.command("ask")
@run
def ask_command(
    question: Annotated[list[str], words_argument("The question, in plain language.")],
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Chat session id: follow-ups use its memory."),
    ] = None,
    source: Annotated[
        SourceOption | None,
        typer.Option(
            "--source",
            help=f"Where to search (default: {default_source_help()}).",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Answer from a fresh search; read no cache.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also show the internals: cache tier and miss reason, stop rule, answer mode, "
            "evidence reused, time by step.",
        ),
    ] = False,
) -> None:
    """Answer a biomedical question from the literature, citing the PMIDs it used.

    Under the answer, one line says where it came from, the requests it cost and the time
    ("3 PubMed calls · 2.1 s"). Exit codes: 0 answered; 2 bad input; 3 bad settings; 5 no
    source could be searched; 6 the language model failed; 7 the store failed.
    """
    settings = build_settings()
    result = run_async(
        _ask(
            settings,
            joined(question),
            session,
            source.value if source else None,
            not no_cache,
            as_json,
        )
    )
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _render(result, verbose=verbose)
    if result.outage:  # every source failed and nothing was cited: no answer (exit 5)
        raise typer.Exit(5)


async def _ask(
    settings: Settings,
    question: str,
    session: str | None,
    source: str | None,
    use_cache: bool,
    quiet: bool,
) -> AskResult:
    from medlit.assistant import Assistant

    assistant = Assistant(settings)
    text = assistant.validate_question(question)  # exit 2 before opening anything
    session = assistant.validate_session_id(session)
    live = not quiet and sys.stderr.isatty()
    try:
        if live:
            from medlit.cli.live import AskLiveView
            from medlit.progress import progress_scope

            # Stages on stderr, the answer on stdout as the model writes it.
            with AskLiveView(console, err_console) as view, progress_scope(view):
                return await assistant.ask(
                    text, session_id=session, sources=source, use_cache=use_cache
                )
        return await assistant.ask(text, session_id=session, sources=source, use_cache=use_cache)
    finally:
        await assistant.aclose()


_VERDICT_STYLE = {"yes": "bold green", "no": "bold red", "uncertain": "bold yellow"}


def _citations_table(citations: list[Citation]) -> Table:
    """The citations as a table the terminal's width can hold: a column each for the title,
    journal, year, design and link in a wide terminal; in a narrow one, the title with the
    rest under it, and the link on a line of its own (whole, to click or copy)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Citations", title_justify="left")
    table.add_column("PMID", no_wrap=True)
    if console.width < WIDE_TABLE_MIN:
        table.show_lines = True
        table.add_column("Article", ratio=1, overflow="fold")
        for c in citations:
            about = ", ".join(p for p in (c.journal, str(c.year or "")) if p)
            details = f"{about} · {c.study_type}" if about else c.study_type
            table.add_row(c.pmid or "-", detail_cell(c.title, details, c.url or ""))
        return table
    for column in ("Title", "Journal", "Year", "Study type"):
        table.add_column(column, overflow="fold", ratio=1 if column == "Title" else None)
    # A link split over two lines cannot be clicked nor copied: its column keeps it whole.
    longest = max((len(c.url or "-") for c in citations), default=1)
    table.add_column("Link", no_wrap=True, overflow="ignore", min_width=longest)
    for c in citations:
        table.add_row(
            c.pmid or "-",
            escape(c.title),
            escape(c.journal or "-"),
            str(c.year or "-"),
            c.study_type,
            c.url or "-",
        )
    return table


def _render(result: AskResult, *, verbose: bool = False) -> None:
    from rich.markup import escape

    answer = result.answer
    if result.language_note:  # medlit searches English abstracts: said before the answer
        console.print(f"[yellow]{escape(result.language_note)}[/]", highlight=False, soft_wrap=True)
    if result.verdict:
        style = _VERDICT_STYLE[result.verdict]
        console.print(f"[{style}]Verdict: {VERDICT_LABELS[result.verdict]}[/]")
        # The answer opens with the same line (medlit moved it there): show it once, styled.
        first, _, rest = answer.partition("\n")
        if first.strip().lower() == f"verdict: {result.verdict}":
            answer = rest.lstrip("\n")
    console.print(escape(answer), soft_wrap=True)
    if result.citations:
        console.print(_citations_table(result.citations))
    for warning in result.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    for item in result.excluded:  # a retracted article found for the question: never evidence
        name = f"PMID {item.pmid}" if item.pmid else escape(item.title[:80])
        err_console.print(f"[yellow]excluded:[/] {name} ({item.reason})", highlight=False)
    if verbose:
        for line in verbose_lines(result):
            console.print(f"[dim]{escape(line)}[/]", highlight=False)
    elif (refused := refused_hit_line(result)) is not None:
        console.print(f"[dim]{escape(refused)}[/]", highlight=False, soft_wrap=True)
    if (rechecked := recheck_line(result)) is not None:
        console.print(f"[yellow]{escape(rechecked)}[/]", highlight=False, soft_wrap=True)
    # One line in any terminal: cut with an ellipsis rather than wrapped.
    console.print(
        f"[dim]{escape(footer_line(result))}[/]", highlight=False, no_wrap=True, overflow="ellipsis"
    )
