"""``medlit research``: deep-research jobs (seed 002).

Command lines::

    medlit research "question" [--depth quick|standard|deep] [--out report.md] [--json]
    medlit research status JOB [--json]
    medlit research list [--json]
    medlit research resume JOB [--out report.md] [--json]
    medlit research cancel JOB
    medlit research export JOB [--format ris|bibtex|csl-json] [--out FILE]
    medlit research rerun-search JOB [--since DATE] [--json]
    medlit research refresh JOB [--since DATE] [--out report.md] [--json]
    medlit research versions JOB [VERSION] [--out report.md] [--json]

``research`` is a group whose default command takes the question: a first argument that is not
a subcommand name (``status``, ``list``, ``resume``, ``cancel``, ``export``) is a question. A
question that *is* one of those words is asked as ``medlit research run "list"``.

A slip that looks like a subcommand is refused rather than researched (a job costs LLM calls),
with a usage error naming the command meant: unquoted words whose first is a near-miss of a
subcommand or a word people use for one (``staus``, ``report``, ``show``, ``stop``...) and whose
only other word looks like a job id (4-12 hex digits, one of them a digit); or a lone word that
is a near-miss of a subcommand (``staus``, ``exprot``), which ``medlit research run WORD``
researches. Options and their values (``--out r.md``) are not words here. A subcommand given
more words than it takes (``medlit research list of statin trials``) is refused with the quoted
command line that researches them.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Awaitable, Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

try:  # Typer's own Click: a usage error main() reports like Typer's (Click itself is not loaded)
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - Typer before it vendored Click
    from click import UsageError  # type: ignore[assignment]

from medlit.cli.app import (
    WIDE_TABLE_MIN,
    app,
    build_settings,
    console,
    detail_cell,
    err_console,
    joined,
    print_json,
    printable,
    run,
    run_async,
    words_argument,
)

if TYPE_CHECKING:
    from medlit.config import Settings
    from medlit.research.models import ProgressEvent, ResearchJob
    from medlit.research.orchestrator import ProgressCallback

__all__ = ["research_app"]


# Words people type for a subcommand that does not have that name: the command line meant.
_SUBCOMMAND_WORDS = {
    "report": "resume {job} --out report.md",
    "show": "status {job}",
    "view": "status {job}",
    "get": "status {job}",
    "info": "status {job}",
    "stop": "cancel {job}",
    "kill": "cancel {job}",
    "abort": "cancel {job}",
    "continue": "resume {job}",
    "restart": "resume {job}",
}
# Words people type before the question to start a job: "medlit research start 'Q'" researched
# "start Q" (the planner then searched for "start").
_RUN_WORDS = frozenset(["start", "new", "create", "begin", "launch", "submit", "add"])
_JOB_ID_LIKE = re.compile(r"^(?=.*[0-9])[0-9a-f]{4,12}$")


def _words(args: list[str], takes_value: Collection[str]) -> list[str]:
    """The words of ``args``: not options, nor the values of options in ``takes_value``."""
    words: list[str] = []
    value_next = False
    for n, arg in enumerate(args):
        if value_next:
            value_next = False
        elif arg == "--":
            return words + args[n + 1 :]
        elif arg.startswith("-") and arg != "-":
            value_next = arg in takes_value  # "--out=r.md" carries its value
        else:
            words.append(arg)
    return words


def _slip_for_subcommand(
    args: list[str], commands: list[str], takes_value: Collection[str]
) -> str | None:
    """Why ``args`` read as a slip for a subcommand, with the command line meant (``None``:
    they read as a question). ``takes_value``: the run command's options that take a value
    (their values are not words)."""
    words = _words(args, takes_value)
    if not words or words[0] != args[0]:
        return None
    first = words[0].lower()
    if len(words) == 1 and len(first) >= 8 and _JOB_ID_LIKE.match(first):
        # A job's id (12 hex digits) is never a question; "ace2" may be one.
        return (
            f"'{args[0]}' looks like a research job id; did you mean 'medlit research status "
            f"{args[0]}'? (To research it as a question, use 'medlit research run {args[0]}'.)"
        )
    if len(words) == 1 and first in _RUN_WORDS:
        return (
            f"'{args[0]}' is not a research subcommand: a job starts from its question alone, "
            'medlit research "your question"'
        )
    if len(words) == 1:
        close = difflib.get_close_matches(first, commands, n=1, cutoff=0.8)
        if not close:
            return None
        return (
            f"'{args[0]}' is not a research subcommand; did you mean 'medlit research "
            f"{close[0]}'? (To research the word, use 'medlit research run {args[0]}'.)"
        )
    if len(words) == 2 and first in _RUN_WORDS and " " in words[1].strip():
        return (
            f"'{args[0]}' is not a research subcommand: a job starts from its question alone, "
            f"medlit research {shlex.quote(words[1].strip())}. (To research a question that begins "
            f"with '{args[0]}', quote it whole.)"
        )
    if len(words) != 2 or not _JOB_ID_LIKE.match(words[1]):
        return None
    if first in _SUBCOMMAND_WORDS:
        meant = _SUBCOMMAND_WORDS[first].format(job=words[1])
    else:
        close = difflib.get_close_matches(first, commands, n=1, cutoff=0.75)
        if not close:
            return None
        meant = f"{close[0]} {words[1]}"
    return (
        f"'{args[0]}' is not a research subcommand; did you mean 'medlit research {meant}'? "
        "(To research a question that begins with these words, quote it.)"
    )


def _options_with_values(command: Any) -> set[str]:
    """The option names of ``command`` that take a value (``--out r.md``)."""
    return {
        name
        for param in command.params
        # Typer's own (vendored) click: duck-typed, not isinstance(param, click.Option)
        if param.param_type_name == "option"
        and not getattr(param, "is_flag", False)
        and not getattr(param, "count", False)
        for name in param.opts
    }


def _question_after_subcommand(args: list[str], command: Any) -> str | None:
    """Why ``args`` (a subcommand and its arguments) read as a question that begins with a
    subcommand's name: more words than the subcommand takes (``medlit research list of
    statin trials``). ``None``: they fit the subcommand (click reports anything else)."""
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    if any(p.nargs < 0 for p in arguments):
        return None
    words = _words(args[1:], _options_with_values(command))
    if len(words) <= sum(p.nargs for p in arguments):
        return None
    takes = " ".join((p.name or "").upper() for p in arguments) or "no words"
    question = shlex.quote(" ".join([args[0], *words]))
    return (
        f"'medlit research {args[0]}' takes {takes}, not '{' '.join(words)}'; to research a "
        f"question that begins with '{args[0]}', quote it: medlit research {question}"
    )


class _QuestionFirstGroup(TyperGroup):
    """A group whose first argument, unless it names a subcommand, goes to ``run``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            takes_value = _options_with_values(self.commands["run"])
            slip = _slip_for_subcommand(args, [c for c in self.commands if c != "run"], takes_value)
            if slip is not None:
                raise UsageError(slip, ctx)
            args = ["run", *args]
        elif args and args[0] in self.commands and args[0] != "run":
            extra = _question_after_subcommand(args, self.commands[args[0]])
            if extra is not None:
                raise UsageError(extra, ctx)
        return super().parse_args(ctx, args)

    _shown_params: tuple[Any, ...] = ()

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The question's options (--depth, --out, --json) are the run command's; the group's
        # help lists them too, since "medlit research QUESTION --depth deep" is how a job starts.
        run_params = self.commands["run"].params
        self._shown_params = tuple(p for p in run_params if p.param_type_name == "option")
        try:
            super().format_help(ctx, formatter)
        finally:
            self._shown_params = ()

    def get_params(self, ctx: Any) -> list[Any]:
        return [*self._shown_params, *super().get_params(ctx)]

    def list_commands(self, ctx: Any) -> list[str]:
        # Keep the help listing in the order people use the commands.
        order = (
            "run",
            "status",
            "list",
            "resume",
            "cancel",
            "export",
            "rerun-search",
            "refresh",
            "versions",
            "worker",
        )
        return [name for name in order if name in self.commands]


research_app = typer.Typer(
    cls=_QuestionFirstGroup,
    no_args_is_help=True,
    help='Deep research: medlit research "question" [--depth quick|standard|deep] '
    "[--out report.md] [--json]; then status, list, resume, cancel, export.",
)
app.add_typer(research_app, name="research")


class DepthOption(StrEnum):
    """How deep a job researches."""

    quick = "quick"
    standard = "standard"
    deep = "deep"


OutOption = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Write the report here (.json: JSON, else Markdown)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the job as one JSON object.")]


@research_app.command("run")
@run
def research_run(
    question: Annotated[list[str], words_argument("The research question.")],
    depth: Annotated[
        DepthOption,
        typer.Option("--depth", "-d", help="How deep: quick, standard or deep."),
    ] = DepthOption.standard,
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """Research a question: plan, search, extract, cross-check, write a referenced report."""
    settings = build_settings()
    _check_out(out)  # before any paid work: a report nobody can write is money thrown away
    running: list[str] = []
    with _interruptible(running):
        job = run_async(_start(settings, joined(question), depth.value, as_json, running))
    _finish(job, out, as_json)


@research_app.command("status")
@run
def research_status(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    as_json: JsonOption = False,
) -> None:
    """Show a job's status, stages, sub-questions and usage."""
    from medlit.research.report import job_to_dict
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(build_settings())
    try:
        job = jobs.get(job_id)
    finally:
        db.close()
    if as_json:
        print_json(job_to_dict(job))
    else:
        _show_status(job)


@research_app.command("list")
@run
def research_list(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Jobs to show.")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the jobs as one JSON list.")
    ] = False,
) -> None:
    """List research jobs, newest first."""
    from rich.markup import escape
    from rich.table import Table

    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(build_settings())
    try:
        rows = jobs.list(limit)
    finally:
        db.close()
    if as_json:
        keys = ("id", "status", "depth", "created_at", "question")
        print_json([dict(zip(keys, row, strict=True)) for row in rows])
        return
    if not rows:
        console.print('No research jobs yet: medlit research "your question"')
        return
    table = Table(title="Research jobs", title_justify="left")
    wide = console.width >= WIDE_TABLE_MIN
    columns = ("Job", "Status", "Depth", "Created (UTC)") if wide else ("Job", "Status")
    for column in columns:
        table.add_column(column, no_wrap=True)
    table.add_column("Question", ratio=1, overflow="fold")
    for job_id, status, depth, created, question in rows:
        when = created[:16].replace("T", " ")
        if wide:
            table.add_row(job_id, status, depth, when, escape(question))
        else:  # the depth and the time under the question, which keeps the room
            table.add_row(job_id, status, detail_cell(question, f"{depth} · {when} UTC"))
    console.print(table)


@research_app.command("resume")
@run
def research_resume(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """Continue a failed or interrupted job from its last completed stage."""
    settings = build_settings()
    _check_out(out)
    running: list[str] = []
    with _interruptible(running):
        job = run_async(_resume(settings, job_id, as_json, running))
    _finish(job, out, as_json)


@research_app.command("cancel")
@run
def research_cancel(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
) -> None:
    """Cancel a queued or running job: it stops at its next step and ends CANCELLED."""
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(build_settings())
    try:
        before = jobs.get(job_id)
        job = jobs.cancel(before.id)
    finally:
        db.close()
    if before.status.terminal:
        console.print(f"job {job.id} has already ended: {job.status.value}", highlight=False)
    elif job.status.value == "CANCELLED":
        console.print(f"job {job.id}: CANCELLED", highlight=False)
    else:
        console.print(
            f"job {job.id}: cancel requested; it stops at its next step "
            f"(follow it with `medlit research status {job.id}`)",
            highlight=False,
        )


@research_app.command("worker")
@run
def research_worker(
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=32, help="Research jobs run at once.")
    ] = 2,
) -> None:
    """Run queued research jobs from the store until Ctrl-C (e.g. on more hosts).

    Ctrl-C saves the running jobs' progress; any worker (or `medlit serve`) sharing the store
    resumes them.
    """
    import asyncio

    from medlit.research.worker_process import run_workers

    settings = build_settings()
    store = "the PostgreSQL store" if settings.database_url else str(settings.db_path)
    err_console.print(
        f"running research jobs from {store}, {workers} at once; Ctrl-C stops",
        highlight=False,
    )
    run_async(run_workers(settings, workers, asyncio.Event()))


class ExportFormatOption(StrEnum):
    """Reference-manager formats."""

    ris = "ris"
    bibtex = "bibtex"
    csl_json = "csl-json"
    csv = "csv"


@research_app.command("export")
@run
def research_export(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    fmt: Annotated[
        ExportFormatOption,
        typer.Option(
            "--format",
            "-f",
            help="ris (EndNote, Zotero), bibtex or csl-json; csv: the evidence table.",
        ),
    ] = ExportFormatOption.ris,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the file here (default: stdout).")
    ] = None,
) -> None:
    """Export a completed job's references (Zotero, EndNote, Mendeley) or evidence table.

    A job with nothing to export (no cited article; for csv, no evidence-table row) exits 4
    and writes nothing.
    """
    from medlit.errors import NotFoundError
    from medlit.research.exports import export_job, records_of
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(build_settings())
    try:
        job = jobs.get(job_id)
    finally:
        db.close()
    text = export_job(job, fmt.value)
    if fmt.value == "csv" and not job.evidence_table:
        # An empty file (or nothing on stdout, exit 0) would read as a successful export.
        raise NotFoundError(f"job {job.id} has no evidence-table rows to export (nothing written)")
    if fmt.value != "csv" and not records_of(job):
        raise NotFoundError(
            f"job {job.id} has no references to export: its report cites no article "
            "(nothing written)"
        )
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8", newline="")
    from medlit.text import counted

    if fmt.value == "csv":
        told = counted(len(job.evidence_table), "evidence-table row")
    else:
        told = counted(len(job.report.references) if job.report else 0, "reference")
    err_console.print(f"{told} written to {out}", highlight=False)


def _since(value: str | None) -> datetime | None:
    """``--since``: a date (``2026-11-20``, midnight UTC) or a time (``2026-11-20T08:00``,
    UTC unless it names its zone)."""
    from datetime import UTC

    from medlit.errors import ValidationError

    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValidationError(
            f"--since {value!r} is no date; give one as 2026-11-20 or 2026-11-20T08:00"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


SinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Look for articles entered since this date or time (UTC; default: when the job "
        "last searched).",
    ),
]


@research_app.command("rerun-search")
@run
def research_rerun_search(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    since: SinceOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rerun as JSON.")] = False,
) -> None:
    """Repeat a job's logged searches for articles entered since it searched: what is new.

    One search per logged query and source, a fetch only of the new articles; no model call.
    The job's report is not changed (`medlit research refresh` takes the new articles in).
    """
    from medlit.research.rerun import render_rerun
    from medlit.research.runtime import open_job_store

    settings = build_settings()
    window = _since(since)
    jobs, db = open_job_store(settings)
    try:
        job = jobs.get(job_id)
    finally:
        db.close()
    report = run_async(_rerun(settings, job, window))
    if as_json:
        print_json(report.model_dump(mode="json"))
    else:
        typer.echo(render_rerun(report))


async def _rerun(settings: Settings, job: ResearchJob, since: datetime | None) -> Any:
    import asyncio

    from medlit.research.rerun import rerun_search
    from medlit.research.runtime import source_search
    from medlit.runtime import Runtime
    from medlit.sources.base import HeldArticles

    async with Runtime(settings) as runtime:
        known = HeldArticles(job.articles, runtime.evidence)
        report = await rerun_search(job, source_search(runtime), since=since, known=known)
        if not await asyncio.to_thread(runtime.jobs.mark_checked, job.id, report.rerun_at):
            err_console.print(
                f"job {job.id} is running: the check time was not recorded", highlight=False
            )
        return report


@research_app.command("refresh")
@run
def research_refresh(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    since: SinceOption = None,
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """Take into a completed job's report the articles entered since it searched.

    Its searches are rerun (as rerun-search); nothing new: no model call, the report as it
    was. Else the new articles are screened and read, their findings checked, the evidence
    table and report written again, saying what changed; the old version is kept
    (`medlit research versions JOB`).
    """
    settings = build_settings()
    window = _since(since)
    _check_out(out)
    running: list[str] = []
    with _interruptible(running):
        rerun, job = run_async(_refresh(settings, job_id, window, as_json, running))
    told = {
        "refreshed": rerun is None or bool(rerun.found),
        "rerun": rerun.model_dump(mode="json") if rerun is not None else None,
    }
    if rerun is not None and not rerun.found:
        if as_json:
            from medlit.research.report import job_to_dict

            print_json({**job_to_dict(job), **told})
        else:
            from medlit.research.rerun import render_rerun

            typer.echo(render_rerun(rerun, advise=False))
            typer.echo(f"Report version {job.report_version} unchanged.")
        return
    _finish(job, out, as_json, extra=told)


async def _refresh(
    settings: Settings, job_id: str, since: datetime | None, quiet: bool, running: list[str]
) -> Any:
    from medlit.research.runtime import source_search
    from medlit.runtime import Runtime

    async with Runtime(settings) as runtime, runtime.orchestrator() as orchestrator:
        job_id = orchestrator.jobs.get(job_id).id
        running.append(job_id)
        search = source_search(runtime)
        outcome: list[Any] = []

        async def start(show: ProgressCallback | None) -> ResearchJob:
            rerun, job = await orchestrator.refresh(job_id, search, show, since=since)
            outcome.append(rerun)
            return job

        job = await _with_progress(start, quiet)
        return outcome[0], job


@research_app.command("versions")
@run
def research_versions(
    job_id: Annotated[str, typer.Argument(help="Job id (a unique prefix is enough).")],
    version: Annotated[
        int | None, typer.Argument(help="Show this version of the report (default: list them).")
    ] = None,
    out: OutOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the versions of a job's report (one per refresh that found something new), or
    show one of them."""
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(build_settings())
    try:
        job = jobs.get(job_id)
        kept = jobs.versions(job.id)
        shown = jobs.version(job.id, version) if version is not None else None
    finally:
        db.close()
    if shown is not None:
        _show_version(shown, out, as_json)
        return
    rows = [{"version": v, "saved_at": saved, "generated_at": made} for v, saved, made in kept]
    current = job.report.generated_at.isoformat() if job.report else None
    rows.append({"version": job.report_version, "saved_at": None, "generated_at": current})
    if as_json:
        print_json({"job": job.id, "current": job.report_version, "versions": rows})
        return
    for row in rows:
        made = str(row["generated_at"] or "no report")[:16].replace("T", " ")
        if row["saved_at"] is not None:
            state = f"replaced {str(row['saved_at'])[:16].replace('T', ' ')}"
        elif job.refresh is not None:  # the report is still the last one's
            state = f"being written (resume it with: medlit research resume {job.id})"
        else:
            state = "current"
        console.print(f"version {row['version']}: written {made} UTC, {state}", highlight=False)
    if job.checked_at is not None:
        console.print(f"last checked for new articles {job.checked_at:%Y-%m-%d %H:%M} UTC")


def _show_version(job: ResearchJob, out: Path | None, as_json: bool) -> None:
    from medlit.errors import NotFoundError
    from medlit.research.report import job_to_dict, render_json, render_markdown

    if job.report is None:
        raise NotFoundError(f"version {job.report_version} of job {job.id} has no report")
    if out is not None:
        text = (
            render_json(job.report) if out.suffix == ".json" else render_markdown(job.report, job)
        )
        out.write_text(text + "\n", encoding="utf-8")
        err_console.print(f"report version {job.report_version} written to {out}", highlight=False)
    elif as_json:
        print_json(job_to_dict(job))
    else:
        console.print(
            render_markdown(job.report, job, drawings=False),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


# -- running, with a progress display on stderr ----------------------------------------------


@contextmanager
def _interruptible(running: list[str]) -> Iterator[None]:
    """Run a job's command so that SIGINT (Ctrl-C) and SIGTERM both interrupt it: the run
    saves the job INTERRUPTED, and the command says how to resume it and exits 130.

    ``running`` gets the job's id once it has one. SIGTERM is made to do what SIGINT does
    (asyncio cancels the running job, which saves itself, then KeyboardInterrupt); its own
    handler comes back afterwards.
    """
    import signal
    import threading

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    except KeyboardInterrupt:
        if not running:
            raise  # nothing started yet: the plain "interrupted"
        err_console.print(
            f"interrupted: research job {running[0]} is INTERRUPTED, its work so far saved; "
            f"resume it with: medlit research resume {running[0]}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM: what Ctrl-C does, through SIGINT's own handler (asyncio's, while a loop runs:
    it cancels the job's task; else Python's: KeyboardInterrupt)."""
    import signal

    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


async def _start(
    settings: Settings, question: str, depth: str, quiet: bool, running: list[str]
) -> ResearchJob:
    from medlit.llm.client import LLMClient
    from medlit.research.orchestrator import require_llm
    from medlit.research.planner import validate_request
    from medlit.research.runtime import open_orchestrator

    # Bad input and a missing model fail before anything is opened or paid for.
    validate_request(question, depth, settings.research)
    require_llm(LLMClient.from_settings(settings))
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(question, depth)  # validation and LLM check first
        running.append(job.id)
        if not quiet:
            err_console.print(f"research job [bold]{job.id}[/] ({depth})", highlight=False)
        return await _with_progress(lambda show: orchestrator.run(job, show), quiet)


async def _resume(settings: Settings, job_id: str, quiet: bool, running: list[str]) -> ResearchJob:
    from medlit.research.runtime import open_orchestrator

    async with open_orchestrator(settings) as orchestrator:
        job_id = orchestrator.jobs.get(job_id).id  # an unknown id: one line, no progress bar
        running.append(job_id)
        return await _with_progress(lambda show: orchestrator.resume(job_id, show), quiet)


async def _with_progress(
    start: Callable[[ProgressCallback | None], Awaitable[ResearchJob]], quiet: bool
) -> ResearchJob:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if quiet:
        return await start(None)
    if not err_console.is_terminal:
        return await start(_log_line)
    progress = Progress(
        TextColumn("[bold]{task.fields[stage]:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )
    task = progress.add_task("research", total=None, stage="PENDING", detail="")

    def show(event: ProgressEvent) -> None:
        progress.update(
            task,
            total=event.sub_questions_total or None,
            completed=event.sub_questions_done,
            stage=event.stage.value,
            # What just happened ("q2 completed", "section 1/3"): a slow local model takes
            # minutes per step, and the elapsed-time column alone would look stuck.
            detail=(f"{event.message} · " if event.message else "")
            + f"findings {event.findings} · facts {event.facts} · calls: "
            f"{event.provider_calls} source, {event.llm_calls} LLM",
        )

    with progress:
        return await start(show)


def _log_line(event: ProgressEvent) -> None:
    """One plain line per progress event, for a stderr that is a file or a pipe.

    A progress bar is redrawn in place, which a log cannot show: a job written to a log
    would say nothing for the minutes (an hour, on a slow model) it runs.
    """
    from datetime import datetime

    done = (
        f" · {event.sub_questions_done}/{event.sub_questions_total} sub-questions"
        if event.sub_questions_total
        else ""
    )
    err_console.print(
        f"{datetime.now().strftime('%H:%M:%S')} {event.stage.value:<12} {event.message}{done}"
        f" · findings {event.findings} · facts {event.facts} · calls: "
        f"{event.provider_calls} source, {event.llm_calls} LLM",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _check_out(out: Path | None) -> None:
    """A ValidationError (exit 2) when the report could not be written to ``out``."""
    import os

    from medlit.errors import ValidationError
    from medlit.text import require_clean_text

    if out is None:
        return
    require_clean_text(str(out), "the --out path")
    parent = out.parent
    if out.is_dir():
        raise ValidationError(f"--out {out} is a directory; give a file name such as report.md")
    if not parent.is_dir():
        raise ValidationError(f"--out {out}: the directory {parent} does not exist")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValidationError(f"--out {out} is not writable")
    if not out.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ValidationError(f"--out {out}: the directory {parent} is not writable")


def _finish(
    job: ResearchJob, out: Path | None, as_json: bool, *, extra: dict[str, Any] | None = None
) -> None:
    from rich.markup import escape

    from medlit.errors import ResearchError, StorageError
    from medlit.research.report import failed_sources, job_to_dict, render_json, render_markdown

    unwritten: StorageError | None = None
    if out is not None and job.report is not None:
        text = (
            render_json(job.report) if out.suffix == ".json" else render_markdown(job.report, job)
        )
        try:
            out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            # The job already holds the report: say how to get it without paying again.
            unwritten = StorageError(
                f"cannot write the report to {out} ({exc.strerror or exc}); it is kept in job "
                f"{job.id}: write it elsewhere with `medlit research resume {job.id} --out FILE` "
                f"(no new work) or see `medlit research status {job.id}`"
            )
        else:
            err_console.print(f"report written to {out}", highlight=False)
    if as_json:
        print_json({**job_to_dict(job), **(extra or {})})
    elif job.report is not None and out is None:
        console.print(  # the flow as its table: a terminal shows no image
            render_markdown(job.report, job, drawings=False),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if job.status.value == "CANCELLED":
        raise ResearchError(
            f"research job {job.id} was cancelled (continue it with: "
            f"medlit research resume {job.id})"
        )
    if job.status.value == "FAILED":
        raise ResearchError(
            f"research job {job.id} failed in {job.failed_stage.value if job.failed_stage else '?'}"
            f": {job.error} (continue it with: medlit research resume {job.id})"
        )
    from medlit.text import counted

    for name, entry in failed_sources(job.plan).items():
        err_console.print(
            f"[yellow]warning:[/] {name} failed for "
            f"{counted(len(entry['sub_questions']), 'sub-question')}: "
            f"{escape(printable(entry['error']))}",
            highlight=False,
            soft_wrap=True,
        )
    if job.budget_stop_reason and not as_json:
        err_console.print(f"[yellow]stopped early:[/] {job.budget_stop_reason}", highlight=False)
    _usage_line(job)
    if unwritten is not None:
        raise unwritten


def _usage_line(job: ResearchJob) -> None:
    usage: dict[str, Any] = dict(job.usage)
    calls = usage.get("calls") or {}
    err_console.print(
        f"[dim]job {job.id}: {job.status.value}; calls: "
        + ", ".join(f"{k} {v}" for k, v in calls.items())
        + f"{', ' if calls else ''}llm {_llm_calls(usage)}; "
        f"tokens {usage.get('tokens', 0)}[/]",
        highlight=False,
    )


def _llm_calls(usage: dict[str, Any]) -> str:
    """``5`` or ``5 (7 attempts, 2 failed)``: a failed attempt is not an LLM call made."""
    attempts = int(usage.get("llm_calls", 0) or 0)
    failed = int(usage.get("llm_failed", 0) or 0)
    if not failed:
        return str(attempts)
    return f"{attempts - failed} ({attempts} attempts, {failed} failed)"


def _show_status(job: ResearchJob) -> None:
    from rich.markup import escape
    from rich.table import Table

    from medlit.text import counted

    console.print(f"[bold]{job.id}[/]  {job.status.value}  ({job.depth})", highlight=False)
    console.print(escape(job.question), highlight=False)
    for stage, times in job.stages.items():
        started = times.started_at.strftime("%H:%M:%S") if times.started_at else "-"
        finished = times.finished_at.strftime("%H:%M:%S") if times.finished_at else "…"
        console.print(f"  {stage:<13} {started} → {finished}", highlight=False)
    if job.status.value == "CANCELLED":
        stopped = job.failed_stage.value if job.failed_stage else "PENDING"
        console.print(f"[yellow]cancelled in {stopped}[/]", highlight=False)
    elif job.status.value == "INTERRUPTED":
        stopped = job.failed_stage.value if job.failed_stage else "PENDING"
        console.print(
            f"[yellow]interrupted in {stopped}[/]: resume it with: medlit research resume {job.id}",
            highlight=False,
        )
    elif job.error:
        failed = job.failed_stage.value if job.failed_stage else "?"
        console.print(f"[red]failed in {failed}:[/] {escape(job.error)}", highlight=False)
    if job.budget_stop_reason:
        console.print(f"[yellow]stopped early:[/] {escape(job.budget_stop_reason)}")
    if job.report_version > 1 or job.checked_at is not None:
        checked = f"{job.checked_at:%Y-%m-%d %H:%M} UTC" if job.checked_at else "never"
        console.print(
            f"report version {job.report_version} · last checked for new articles {checked}",
            highlight=False,
        )
    if job.plan is not None:
        table = Table(title="Sub-questions", title_justify="left")
        wide = console.width >= WIDE_TABLE_MIN
        for column in ("Id", "Depth", "Status", "Articles") if wide else ("Id", "Status"):
            table.add_column(column, no_wrap=True)
        table.add_column("Question", ratio=1, overflow="fold")
        for q in job.plan.sub_questions:
            # The question keeps the room: a skip's reason (and, in a narrow terminal, the
            # depth and articles) go under it.
            about = [] if wide else [f"depth {q.depth}", counted(q.articles_found, "article")]
            about += [q.skip_reason] if q.skip_reason else []
            text = detail_cell(q.text, " · ".join(about))
            status = q.status.value
            short = [str(q.depth), status, str(q.articles_found)] if wide else [status]
            table.add_row(q.id, *short, text)
        console.print(table)
    console.print(
        f"articles {len(job.articles)} · findings {len(job.findings)} · facts {len(job.facts)} · "
        f"discrepancies {len(job.discrepancies)}",
        highlight=False,
    )
    _usage_line(job)
