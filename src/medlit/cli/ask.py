"""``medlit ask``: a cited answer from the literature, behind the two-tier cache.

Everything heavy (the assistant, the embedder, LangGraph, the LLM and source clients) is
imported inside the command, and only as far as the question needs: a cached question in a new
process loads the settings, the store and the embedder, and nothing else.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from medlit.cli.app import app, default_source_help, run, words_argument
from medlit.cli.ask_run import AskLine, answer_command

__all__ = ["ask_command"]


class SourceOption(StrEnum):
    """Where to search (:data:`medlit.cli.ask_run.SOURCES`)."""

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
    line = AskLine(
        tuple(question),
        session,
        source.value if source else None,
        no_cache,
        as_json,
        verbose,
    )
    if code := answer_command(line):  # every source failed and nothing was cited (exit 5)
        raise typer.Exit(code)
