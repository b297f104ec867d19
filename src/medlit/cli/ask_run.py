"""The work of ``medlit ask`` without Typer: the ask, its output, and the thin entry that a
``medlit ask`` process tries first.

Typer and Click cost a cached answer's new process a tenth of its start-up. A command line
made of the question's words and the ask's own options (:data:`OPTIONS`, each once) is read
here (:func:`read_command_line`) and answered by the same :func:`answer_command` as the Typer
command (:mod:`medlit.cli.ask`); anything else (``--help``, an option not listed, a value
missing or not allowed, ``--``) goes to Typer, which answers or refuses it as before.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from medlit.cli.footer import (
    VERDICT_LABELS,
    footer_line,
    recheck_line,
    refused_hit_line,
    verbose_lines,
)
from medlit.cli.shared import (
    WIDE_TABLE_MIN,
    build_settings,
    console,
    detail_cell,
    err_console,
    print_error,
    print_json,
    report_bug,
    run_async,
)
from medlit.errors import MedlitError

if TYPE_CHECKING:
    from rich.table import Table

    from medlit.assistant import AskResult
    from medlit.config import Settings
    from medlit.types import Citation

__all__ = ["OPTIONS", "SOURCES", "AskLine", "answer_command", "read_command_line", "thin_main"]

#: What ``--source`` may be.
SOURCES = ("pubmed", "europepmc", "local", "all")
#: The ask's options as the command line spells them: the field of :class:`AskLine` each
#: sets, and whether it takes a value (the Typer command declares the same; a test holds
#: them together).
OPTIONS = {
    "--session": ("session", True),
    "-s": ("session", True),
    "--source": ("source", True),
    "--no-cache": ("no_cache", False),
    "--json": ("as_json", False),
    "--verbose": ("verbose", False),
    "-v": ("verbose", False),
}


@dataclass(frozen=True)
class AskLine:
    """One ``medlit ask`` command line, read."""

    question: tuple[str, ...]
    session: str | None = None
    source: str | None = None
    no_cache: bool = False
    as_json: bool = False
    verbose: bool = False


def read_command_line(args: list[str]) -> AskLine | None:
    """The ask of ``args`` (what follows ``ask``), or None for Typer to read: anything but the
    question's words and :data:`OPTIONS` given once each with their values."""
    words: list[str] = []
    given: dict[str, str | bool] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in OPTIONS or (eq and not name.startswith("--")):
            return None
        field, takes_value = OPTIONS[name]
        if field in given:
            return None
        if not takes_value:
            if eq:
                return None
            given[field] = True
            continue
        if not eq:
            if i == len(args) or args[i].startswith("-"):
                return None
            value, i = args[i], i + 1
        if not value:
            return None
        given[field] = value
    if not words or given.get("source", SOURCES[0]) not in SOURCES:
        return None
    return AskLine(tuple(words), **given)  # type: ignore[arg-type]


def thin_main(argv: list[str]) -> int | None:
    """The exit code of ``medlit ask ...`` answered without Typer, or None when Typer must
    read ``argv`` (see the module's docstring). Errors are one line, as the command's."""
    line = read_command_line(argv[2:]) if len(argv) > 1 and argv[1] == "ask" else None
    if line is None:
        return None
    try:
        return answer_command(line)
    except MedlitError as exc:
        print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except Exception as exc:
        report_bug(exc)
        return 1


def answer_command(line: AskLine) -> int:
    """Answer and show ``line``'s question; the exit code: 0, or 5 when every source failed
    and nothing was cited (no answer)."""
    settings = build_settings()
    result = run_async(
        _ask(
            settings,
            " ".join(line.question),
            line.session,
            line.source,
            not line.no_cache,
            line.as_json,
        )
    )
    if line.as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _render(result, verbose=line.verbose)
    return 5 if result.outage else 0


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
