"""medlit corpus: add PubMed XML / MEDLINE files to the local corpus, show its stats."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from medlit.cli.app import (
    app,
    build_settings,
    console,
    err_console,
    print_error,
    print_json,
    printable,
    run,
)
from medlit.errors import MedlitError, ValidationError

__all__ = ["corpus_app"]

corpus_app = typer.Typer(
    help="The local corpus (your own PubMed XML / MEDLINE files), searched offline.",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("add")
@run
def add(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="PubMed XML (.xml, .xml.gz) or MEDLINE.", show_default=False),
    ] = None,
    sample: Annotated[
        bool,
        typer.Option(
            "--sample",
            help="Add the sample shipped with medlit: 60 PubMedQA abstracts (MIT), to try "
            "every command offline with --source local.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Add files to the corpus (re-adding a file changes nothing)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from medlit.sources.local import AddResult, LocalCorpus

    files = list(files or [])
    if sample:
        files.append(sample_corpus_path())
    if not files:
        raise ValidationError("give the files to add, or --sample for the sample corpus")
    settings = build_settings()
    totals = AddResult()
    failures: list[MedlitError] = []
    per_file: dict[str, dict[str, int | str]] = {}
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} records"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )
    with LocalCorpus.from_settings(settings) as corpus, progress:
        overall = progress.add_task("files", total=len(files))
        for path in files:
            shown = printable(path)
            task = progress.add_task(printable(path.name), total=None)
            try:
                _check_file(path)
                result = corpus.add_file(
                    path, progress=lambda n, task=task: progress.update(task, completed=n)
                )
            except Exception as exc:
                # Each file fails alone (its records rolled back); the others are still added.
                error = exc if isinstance(exc, MedlitError) else _unexpected(path, exc)
                failures.append(error)
                per_file[shown] = {"error": printable(error)}
                print_error(error)
            else:
                totals.added += result.added
                totals.updated += result.updated
                totals.skipped += result.skipped
                per_file[shown] = {
                    "added": result.added,
                    "updated": result.updated,
                    "skipped": result.skipped,
                }
            progress.remove_task(task)
            progress.advance(overall)
    examples = sample_questions() if sample and not failures else []
    if as_json:
        print_json(
            {
                "added": totals.added,
                "updated": totals.updated,
                "skipped": totals.skipped,
                "failed": len(failures),
                "files": per_file,
                **({"try": examples} if sample else {}),
            }
        )
    else:
        console.print(
            f"added {totals.added}, updated {totals.updated}, skipped {totals.skipped}"
            + (f" ({len(failures)} of {len(files)} files failed)" if failures else "")
        )
        if examples:
            console.print("The sample answers questions such as:", highlight=False)
            for question in examples:
                console.print(
                    f"  medlit ask {shlex.quote(question)} --source local",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
    if failures:
        raise typer.Exit(failures[0].exit_code)


def sample_corpus_path() -> Path:
    """The sample corpus shipped inside the package (see ``sources/sample/NOTICE.md``)."""
    from importlib.resources import files

    return Path(str(files("medlit.sources").joinpath("sample", "pubmedqa-sample.xml.gz")))


def sample_questions() -> list[str]:
    """Two questions the sample corpus answers, one labelled yes and one no: the self-test's
    (``medlit/doctor/self_test.json``), each the question of an expert-labelled record of the
    sample, so its own article is there to answer it."""
    from medlit.doctor.self_test import load_questions

    cases = load_questions()
    return [
        next(str(case["question"]) for case in cases if case["label"] == label)
        for label in ("yes", "no")
    ]


def _check_file(path: Path) -> None:
    """A ValidationError (exit 2) naming ``path`` when it is not a readable regular file."""
    from medlit.text import require_clean_text

    require_clean_text(str(path), f"the file name '{printable(path)}'")
    if path.is_dir():
        raise ValidationError(f"{path}: is a directory (give the files in it)")
    if not path.exists():
        raise ValidationError(f"{path}: no such file")
    if not path.is_file():
        raise ValidationError(f"{path}: not a regular file")


def _unexpected(path: Path, exc: Exception) -> MedlitError:
    return MedlitError(f"{printable(path)}: cannot add it ({type(exc).__name__}: {exc})")


@corpus_app.command("stats")
@run
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """How many articles the corpus holds, years, languages, size."""
    from medlit.sources.local import LocalCorpus

    settings = build_settings()
    with LocalCorpus.from_settings(settings) as corpus:
        data = corpus.stats()
    if as_json:
        print_json(data)
        return
    years = f"{data['first_year']}–{data['last_year']}" if data["first_year"] else "-"
    languages = ", ".join(f"{k} {v}" for k, v in data["languages"].items()) or "-"
    console.print(
        f"corpus      {data['path']}\n"
        f"articles    {data['articles']} ({data['with_abstract']} with abstract)\n"
        f"files       {data['files']}\n"
        f"years       {years}\n"
        f"languages   {languages}\n"
        f"size        {data['size_bytes'] / 1e6:.1f} MB"
    )
