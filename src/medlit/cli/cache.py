"""``medlit cache stats | clear``: inspect and empty the two-tier cache.

Heavy imports (numpy, usearch) happen inside the commands, so registering them costs nothing
at start-up.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from medlit.cli.app import app, build_settings, console, print_json, run
from medlit.errors import ValidationError

__all__ = ["cache_app"]

cache_app = typer.Typer(
    help="Inspect or empty the answer and evidence caches.", no_args_is_help=True
)
app.add_typer(cache_app, name="cache")

_REASONS = (
    "nothing_similar",
    "fingerprint_mismatch",
    "expired",
    "low_score",
    "guard_rejected",
    "not_verified",
    "cites_retracted",
    "disabled",
)


def collect_stats() -> dict[str, Any]:
    """Entries, hits/misses by reason, evictions and disk use, as a JSON-ready dict."""
    from medlit.storage import open_store

    settings = build_settings()
    with open_store(settings) as store:
        counters = store.counters()
        sizes = store.size_on_disk()
        answers_by_ns = {
            ns: int(n)
            for ns, n in store.read("SELECT namespace, count(*) FROM answers GROUP BY namespace")
        }
        return {
            "path": settings.database_label,
            "answers": {
                "entries": sum(answers_by_ns.values()),
                "by_namespace": answers_by_ns,
                "capacity": settings.cache.answer_capacity,
                "hits": counters.get("answers.hits", 0),
                "hits_at_tau": counters.get("answers.hits", 0)
                - counters.get("answers.hits.verified", 0),
                "hits_verified": counters.get("answers.hits.verified", 0),
                "verification": {
                    k: counters.get(f"answers.verify.{k}", 0)
                    for k in ("calls", "accepted", "refused", "remembered", "errors")
                },
                "misses": {r: counters.get(f"answers.miss.{r}", 0) for r in _REASONS},
                "inserts": counters.get("answers.inserts", 0),
                "evictions": counters.get("answers.evictions", 0),
                "expired": counters.get("answers.expired", 0),
            },
            "evidence": {
                "articles": store.count_articles(),
                "chunks": store.count_chunks(),
                "capacity_chunks": settings.cache.evidence_capacity,
                "articles_added": counters.get("evidence.articles_added", 0),
                "chunks_embedded": counters.get("evidence.chunks_embedded", 0),
                "articles_reused": counters.get("evidence.reused", 0),
                "evictions": counters.get("evidence.evictions", 0),
                "expired": counters.get("evidence.expired", 0),
            },
            "disk_bytes": {"total": sum(sizes.values()), **sizes},
        }


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


@cache_app.command("stats")
@run
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Entries per tier, hits and misses by reason, evictions, size on disk."""
    data = collect_stats()
    if as_json:
        print_json(data)
        return
    from rich.table import Table

    a, e = data["answers"], data["evidence"]
    lookups = a["hits"] + sum(a["misses"].values())
    table = Table(title=f"medlit cache ({data['path']})", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("answers (tier 1)", f"{a['entries']:,} / {a['capacity']:,}")
    for ns, n in sorted(a["by_namespace"].items()):
        table.add_row(f"  namespace {ns}", f"{n:,}")
    rate = f" ({a['hits'] / lookups:.0%})" if lookups else ""
    table.add_row("  hits", f"{a['hits']:,}{rate}")
    table.add_row(
        "    at tau / verified by the LLM", f"{a['hits_at_tau']:,} / {a['hits_verified']:,}"
    )
    v = a["verification"]
    if v["calls"] or v["remembered"]:
        table.add_row(
            "  verification: calls / accepted / refused",
            f"{v['calls']:,} / {v['accepted']:,} / {v['refused']:,}",
        )
        table.add_row("    remembered / failed", f"{v['remembered']:,} / {v['errors']:,}")
    for reason, n in a["misses"].items():
        if n:
            table.add_row(f"  misses: {reason}", f"{n:,}")
    table.add_row("  evictions / expired", f"{a['evictions']:,} / {a['expired']:,}")
    table.add_row("evidence (tier 2)", f"{e['articles']:,} articles, {e['chunks']:,} chunks")
    table.add_row("  articles reused (not fetched)", f"{e['articles_reused']:,}")
    table.add_row("  chunks embedded", f"{e['chunks_embedded']:,}")
    table.add_row("  evictions / expired", f"{e['evictions']:,} / {e['expired']:,}")
    for name, size in data["disk_bytes"].items():
        table.add_row(f"disk: {name}", _human(size))
    console.print(table)


@cache_app.command("clear")
@run
def clear(
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Only this namespace's answers.")
    ] = None,
    tier: Annotated[
        str | None, typer.Option("--tier", help="answers or evidence (default: both).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete cached answers and/or evidence."""
    if namespace is not None:
        from medlit.text import require_clean_text

        namespace = require_clean_text(namespace, "the namespace")
    if tier not in (None, "answers", "evidence"):
        raise ValidationError(f"--tier must be answers or evidence, not {tier!r}")
    if namespace is not None and tier == "evidence":
        raise ValidationError("--namespace applies to answers; evidence is shared by all")
    tiers: list[str] = [tier] if tier else ["answers", "evidence"]
    if namespace is not None:
        tiers = ["answers"]
    what = " and ".join(tiers) + (f" of namespace {namespace!r}" if namespace else "")
    if not yes:
        if not sys.stdin.isatty():
            raise ValidationError(f"refusing to clear {what} without --yes (not a terminal)")
        typer.confirm(f"Delete all cached {what}?", abort=True)
    from medlit.storage import open_store

    with open_store(build_settings()) as store:
        if "answers" in tiers:
            n = store.clear_answers(namespace)
            console.print(f"deleted {n:,} answers")
        if "evidence" in tiers:
            articles, chunks = store.clear_evidence()
            console.print(f"deleted {articles:,} articles ({chunks:,} chunks)")
