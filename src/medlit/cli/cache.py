"""``medlit cache stats | list | clear | recheck | words | calibrate``: inspect and empty the
two-tier cache (by source address too: ``list --source``, ``clear --source``), check the
cached answers due for new articles, settle the word pairs that let reworded questions reach
cached answers, and measure a judge.

Heavy imports (numpy, usearch) happen inside the commands, so registering them costs nothing
at start-up.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from medlit.cli.app import app, build_settings, console, print_json, run, run_async
from medlit.errors import ValidationError

__all__ = ["cache_app"]

cache_app = typer.Typer(
    help="Inspect or empty the answer and evidence caches.", no_args_is_help=True
)
app.add_typer(cache_app, name="cache")
words_app = typer.Typer(
    help="Word pairs that let a reworded question reach a cached answer: list, approve, revoke.",
    no_args_is_help=True,
)
cache_app.add_typer(words_app, name="words")

_REASONS = (
    "nothing_similar",
    "fingerprint_mismatch",
    "expired",
    "other_source",
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
        pairs = _pair_stats(store, counters)
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
                "hits_word_pair": counters.get("answers.hits.word_pair", 0),
                "verification": {
                    k: counters.get(f"answers.verify.{k}", 0)
                    for k in ("calls", "accepted", "refused", "remembered", "errors")
                },
                "misses": {r: counters.get(f"answers.miss.{r}", 0) for r in _REASONS},
                "inserts": counters.get("answers.inserts", 0),
                "evictions": counters.get("answers.evictions", 0),
                "expired": counters.get("answers.expired", 0),
                "rechecks": {
                    k: counters.get(f"answers.rechecks.{k}", 0)
                    for k in ("unchanged", "changed", "unrecorded", "failed", "busy", "dropped")
                },
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
            "word_pairs": pairs,
            "guard_error": _guard_error(),
            "disk_bytes": {"total": sum(sizes.values()), **sizes},
        }


def _guard_error() -> dict[str, Any]:
    from medlit.cache.bound import MEASURED

    return MEASURED.as_dict()


def _pair_stats(store: Any, counters: dict[str, int]) -> dict[str, Any]:
    """Remembered word pairs by verdict, and each judge model's kept calibration."""
    from medlit.cache.word_pairs import WordPairStore

    pairs = WordPairStore(store)
    by_verdict = {"same": 0, "different": 0, "pending": 0}
    for record in pairs.pairs():
        by_verdict[record.verdict] += 1
    return {
        **by_verdict,
        "proposed": counters.get("answers.word_pairs.proposed", 0),
        "judges": [_calibration_json(c) for c in pairs.calibrations()],
    }


def _calibration_json(c: Any) -> dict[str, Any]:
    return {
        "model": c.model,
        "prompt_version": c.prompt_version,
        "pairs": c.pairs,
        "same_pairs": c.same_pairs,
        "accepted": c.accepted,
        "wrong": c.wrong,
        "precision": None if c.precision is None else round(c.precision, 4),
        "recall": round(c.recall, 4),
        "opens": c.opens,
        "contrast_set": c.contrast,
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
    r = a["rechecks"]
    if any(r.values()):
        table.add_row(
            "  checked for new articles: unchanged / answered again / failed",
            f"{r['unchanged']:,} / {r['changed'] + r['unrecorded']:,} / {r['failed']:,}",
        )
    _pair_rows(table, data)
    table.add_row("evidence (tier 2)", f"{e['articles']:,} articles, {e['chunks']:,} chunks")
    table.add_row("  articles reused (not fetched)", f"{e['articles_reused']:,}")
    table.add_row("  chunks embedded", f"{e['chunks_embedded']:,}")
    table.add_row("  evictions / expired", f"{e['evictions']:,} / {e['expired']:,}")
    for name, size in data["disk_bytes"].items():
        table.add_row(f"disk: {name}", _human(size))
    console.print(table)


def _pair_rows(table: Any, data: dict[str, Any]) -> None:
    """The stats table's rows for word pairs, judges and the guard's measured error."""
    a, p, g = data["answers"], data["word_pairs"], data["guard_error"]
    table.add_row("  hits through a word pair", f"{a['hits_word_pair']:,}")
    table.add_row(
        "word pairs: same / different / pending",
        f"{p['same']:,} / {p['different']:,} / {p['pending']:,}",
    )
    for judge in p["judges"]:
        precision = "-" if judge["precision"] is None else f"{judge['precision']:.3f}"
        state = "open" if judge["opens"] else "closed"
        table.add_row(
            f"  judge {judge['model']} ({judge['prompt_version']})",
            f"precision {precision} ({judge['accepted']} accepted of {judge['pairs']}): {state}",
        )
    table.add_row(
        "guard error (near-miss edits served)",
        f"{g['wrong_hits']} of {g['near_miss_edits']}, 95% upper bound {g['upper_95']:.1%}",
    )
    table.add_row("  measured on", g["contrast_set"])


_SOURCE_HELP = (
    "Only entries from this source address (a base URL, local:<corpus file>, or 'unknown' "
    "for entries stored before addresses were recorded)."
)


def _origin(source: str | None) -> str | None:
    """The stored origin ``--source`` names (``unknown``: the empty one), or None."""
    if source is None:
        return None
    from medlit.provenance import normalise_address
    from medlit.text import require_clean_text

    text = require_clean_text(source, "the source address")
    return "" if text == "unknown" else normalise_address(text)


def _answer_ids(store: Any, origin: str, namespace: str | None = None) -> list[int]:
    """Ids of the answers whose origin is or includes ``origin`` (an answer asked of several
    sources records their addresses joined by ", "), newest first."""
    sql = "SELECT id, origin FROM answers"
    params: list[Any] = []
    if namespace is not None:
        sql, params = sql + " WHERE namespace = ?", [namespace]
    rows = store.read(sql + " ORDER BY created_at DESC", params)
    return [int(i) for i, stored in rows if _includes(str(stored), origin)]


def _includes(stored: str, origin: str) -> bool:
    return stored == origin or (origin != "" and origin in stored.split(", "))


def collect_sources(origin: str | None, *, limit: int) -> dict[str, Any]:
    """Entries per source address; with ``origin``, that address's entries (``limit`` each)."""
    from medlit.provenance import origin_label
    from medlit.storage import open_store

    settings = build_settings()
    with open_store(settings) as store:
        answer_rows = store.read("SELECT origin, count(*) FROM answers GROUP BY origin")
        article_rows = store.read("SELECT origin, count(*) FROM articles GROUP BY origin")
        counts: dict[str, dict[str, int]] = {}
        for stored, n in answer_rows:
            for part in str(stored).split(", ") if stored else [""]:
                row = counts.setdefault(origin_label(part), {"answers": 0, "articles": 0})
                row["answers"] += int(n)
        for stored, n in article_rows:
            row = counts.setdefault(origin_label(str(stored)), {"answers": 0, "articles": 0})
            row["articles"] += int(n)
        data: dict[str, Any] = {"path": settings.database_label, "sources": counts}
        if origin is None:
            return data
        ids = _answer_ids(store, origin)[:limit]
        marks = ",".join("?" * len(ids))
        answers = (
            store.read(
                "SELECT id, namespace, question, origin, created_at FROM answers "
                f"WHERE id IN ({marks}) ORDER BY created_at DESC",
                ids,
            )
            if ids
            else []
        )
        articles = store.read(
            "SELECT key, data, origin, fetched_at FROM articles WHERE origin = ? "
            "ORDER BY fetched_at DESC LIMIT ?",
            (origin, limit),
        )
    import json

    data["source"] = origin_label(origin)
    data["answers"] = [
        {"id": int(i), "namespace": ns, "question": q, "origin": origin_label(o),
         "created_at": float(t)}
        for i, ns, q, o, t in answers
    ]  # fmt: skip
    data["articles"] = [
        {"key": k, "title": json.loads(d).get("title", ""), "origin": origin_label(o),
         "fetched_at": float(t)}
        for k, d, o, t in articles
    ]  # fmt: skip
    return data


@cache_app.command("list")
@run
def list_entries(
    source: Annotated[str | None, typer.Option("--source", help=_SOURCE_HELP)] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Entries shown per tier with --source.")
    ] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Cached answers and articles per source address (where they came from); with
    --source, that address's entries."""
    data = collect_sources(_origin(source), limit=limit)
    if as_json:
        print_json(data)
        return
    from rich.table import Table

    table = Table(title=f"medlit cache by source ({data['path']})")
    for column in ("source address", "answers", "articles"):
        table.add_column(column)
    for address, n in sorted(data["sources"].items()):
        table.add_row(address, f"{n['answers']:,}", f"{n['articles']:,}")
    console.print(table)
    if "source" not in data:
        return
    for a in data["answers"]:
        console.print(f"answer {a['id']} [{a['namespace']}] {a['question']}", markup=False)
    for a in data["articles"]:
        console.print(f"article {a['key']}: {a['title']}", markup=False)


@cache_app.command("clear")
@run
def clear(
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Only this namespace's answers.")
    ] = None,
    tier: Annotated[
        str | None, typer.Option("--tier", help="answers or evidence (default: both).")
    ] = None,
    source: Annotated[str | None, typer.Option("--source", help=_SOURCE_HELP)] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete cached answers and/or evidence (all, or of one namespace or source address)."""
    if namespace is not None:
        from medlit.text import require_clean_text

        namespace = require_clean_text(namespace, "the namespace")
    origin = _origin(source)
    if tier not in (None, "answers", "evidence"):
        raise ValidationError(f"--tier must be answers or evidence, not {tier!r}")
    if namespace is not None and tier == "evidence":
        raise ValidationError("--namespace applies to answers; evidence is shared by all")
    tiers: list[str] = [tier] if tier else ["answers", "evidence"]
    if namespace is not None:
        tiers = ["answers"]
    what = " and ".join(tiers) + (f" of namespace {namespace!r}" if namespace else "")
    if origin is not None:
        what += f" from {source}"
    if not yes:
        if not sys.stdin.isatty():
            raise ValidationError(f"refusing to clear {what} without --yes (not a terminal)")
        typer.confirm(f"Delete all cached {what}?", abort=True)
    from medlit.storage import open_store

    with open_store(build_settings()) as store:
        if origin is not None:
            _clear_source(store, origin, namespace, tiers)
            return
        if "answers" in tiers:
            n = store.clear_answers(namespace)
            console.print(f"deleted {n:,} answers")
        if "evidence" in tiers:
            articles, chunks = store.clear_evidence()
            console.print(f"deleted {articles:,} articles ({chunks:,} chunks)")


def _clear_source(store: Any, origin: str, namespace: str | None, tiers: list[str]) -> None:
    """Delete the entries from ``origin`` (an answer that asked it among other sources too):
    answers through the store (its indexes follow), articles with their chunks."""
    if "answers" in tiers:
        n = store.delete_answers(_answer_ids(store, origin, namespace))
        console.print(f"deleted {n:,} answers")
    if "evidence" in tiers:
        with store.transaction() as conn:
            chunks = conn.execute(
                "SELECT coalesce(sum(chunk_count), 0) FROM articles WHERE origin = ?", (origin,)
            ).fetchone()[0]
            # Chunks go with their article (ON DELETE CASCADE), and so out of the index.
            articles = conn.execute("DELETE FROM articles WHERE origin = ?", (origin,)).rowcount
        console.print(f"deleted {articles:,} articles ({int(chunks):,} chunks)")


_NAMESPACE = typer.Option("--namespace", "-n", help="The namespace (tenant); default: settings'.")
_CONTEXT = typer.Option("--context", help="One context kind only (default: every kind).")


def _namespace(namespace: str | None) -> str:
    from medlit.text import require_clean_text

    return (
        build_settings().namespace
        if namespace is None
        else require_clean_text(namespace, "the namespace")
    )


@words_app.command("list")
@run
def words_list(
    namespace: Annotated[str | None, _NAMESPACE] = None,
    verdict: Annotated[
        str | None, typer.Option("--verdict", help="same, different or pending.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Remembered word pairs: their verdict, who decided, the questions they were met in."""
    from medlit.cache.word_pairs import WordPairStore
    from medlit.storage import open_store
    from medlit.words.seed import seed_relation

    if verdict not in (None, "same", "different", "pending"):
        raise ValidationError(f"--verdict must be same, different or pending, not {verdict!r}")
    with open_store(build_settings()) as store:
        records = WordPairStore(store).pairs(_namespace(namespace), verdict)  # type: ignore[arg-type]
    rows = [
        {
            "words": list(r.words),
            "context": r.context,
            "verdict": r.verdict,
            "decided_by": r.decided_by or None,
            "model": r.model or None,
            "score": r.score,
            "uses": r.uses,
            "seed": seed_relation(*r.words),
            "example_new": r.example_new,
            "example_cached": r.example_cached,
        }
        for r in records
    ]
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    table = Table(title="word pairs")
    for column in ("words", "context", "verdict", "by", "uses", "seed", "met in"):
        table.add_column(column)
    for r in records:
        by = r.model if r.decided_by == "model" else r.decided_by
        table.add_row(
            " / ".join(r.words), r.context, r.verdict, by, str(r.uses),
            seed_relation(*r.words) or "", r.example_new,
        )  # fmt: skip
    console.print(table)


_FIRST = typer.Argument(help="One side of the pair.")
_SECOND = typer.Argument(help="The other side.")


def _settle(first: str, second: str, namespace: str | None, context: str | None, how: str) -> Any:
    """Approve or revoke a remembered pair; refuses one never met."""
    from medlit.cache.word_pairs import WordPairStore
    from medlit.storage import open_store

    with open_store(build_settings()) as store:
        pairs = WordPairStore(store)
        settle = pairs.approve if how == "approve" else pairs.revoke
        result = settle(_namespace(namespace), first, second, context)
    if not (result[0] if isinstance(result, tuple) else result):
        raise ValidationError(f"no remembered pair {first!r} / {second!r} (see cache words list)")
    return result


@words_app.command("approve")
@run
def words_approve(
    first: Annotated[str, _FIRST],
    second: Annotated[str, _SECOND],
    namespace: Annotated[str | None, _NAMESPACE] = None,
    context: Annotated[str | None, _CONTEXT] = None,
) -> None:
    """Approve a remembered pair: questions that differ only by it are served from now on."""
    changed = _settle(first, second, namespace, context, "approve")
    console.print(f"approved {first} / {second} ({changed} context kind(s))")


@words_app.command("revoke")
@run
def words_revoke(
    first: Annotated[str, _FIRST],
    second: Annotated[str, _SECOND],
    namespace: Annotated[str | None, _NAMESPACE] = None,
    context: Annotated[str | None, _CONTEXT] = None,
) -> None:
    """Revoke a pair: it serves nothing more, and the cached answers it let through are
    deleted."""
    _, dropped = _settle(first, second, namespace, context, "revoke")
    console.print(f"revoked {first} / {second}; deleted {dropped:,} answers it let through")


@cache_app.command("calibrate")
@run
def calibrate(
    contrast: Annotated[
        Path,
        typer.Option("--contrast", help="The contrast set (benchmarks/data/cache_contrast.csv)."),
    ] = Path("benchmarks/data/cache_contrast.csv"),
    parts: Annotated[
        str, typer.Option("--parts", help="Parts of the set to judge, comma-separated.")
    ] = "check,check-seen",
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Judge only the first N pairs.")
    ] = None,
    scores_out: Annotated[
        Path | None,
        typer.Option("--scores", help="Also write each pair's score here (JSON lines)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Measure the configured judge model (task verify_cache_hit) on the contrast set's word
    pairs and keep the figure: its judge opens only at precision >= 0.99 on at least 30
    accepted pairs."""
    import asyncio
    import csv

    from medlit.cache.guard import QuestionGuard
    from medlit.cache.word_pairs import (
        MIN_ACCEPTED,
        REQUIRED_PRECISION,
        WordPairStore,
        contrast_items,
    )
    from medlit.cache.word_pairs import calibrate as measure
    from medlit.llm.client import LLMClient
    from medlit.llm.tasks import resolve_route
    from medlit.storage import open_store

    settings = build_settings()
    route = resolve_route(settings.llm, "verify_cache_hit")
    if not route.configured or route.model is None:
        raise ValidationError("no model for the verify_cache_hit task (MEDLIT_LLM_* settings)")
    if not contrast.exists():
        raise ValidationError(f"no contrast set at {contrast} (--contrast)")
    wanted = {p.strip() for p in parts.split(",") if p.strip()}
    with contrast.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("part") in wanted]
    items = contrast_items(rows, QuestionGuard())[:limit]
    label = f"{contrast.name}, parts {','.join(sorted(wanted))}, {len(items)} pairs"

    async def go() -> Any:
        async with LLMClient(settings.llm) as llm:
            with open_store(settings) as store:
                pairs = WordPairStore(store)
                judge = pairs.judge(str(route.model), lambda: llm)
                result = await measure(judge, items, contrast=label, scores=scores)
                pairs.keep_calibration(result)
                return result

    scores: list[tuple[Any, bool, float]] = []
    result = asyncio.run(go())
    if scores_out is not None:
        import json

        scores_out.write_text(
            "".join(
                json.dumps(
                    {"new": p.new, "cached": p.cached, "context": p.context, "same": same,
                     "score": round(score, 4)}
                ) + "\n"
                for p, same, score in scores
            ),
            encoding="utf-8",
        )  # fmt: skip
    data = _calibration_json(result)
    if as_json:
        print_json(data)
        return
    precision = "-" if data["precision"] is None else f"{data['precision']:.3f}"
    console.print(
        f"{data['model']}: accepted {data['accepted']} of {data['pairs']} pairs "
        f"({data['same_pairs']} true rewordings), {data['wrong']} wrong; precision {precision}, "
        f"recall {data['recall']:.3f}; judge {'opens' if data['opens'] else 'stays closed'} "
        f"(needs precision >= {REQUIRED_PRECISION} on >= {MIN_ACCEPTED} accepted pairs)"
    )


@cache_app.command("recheck")
@run
def recheck(
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", help="One tenant's answers (default: every tenant's)."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="At most this many answers, oldest first.")
    ] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check every cached answer due (cache.recheck_after_s) for new articles: for a
    scheduled run (cron, a systemd timer). Nothing new: the check is recorded. Something new:
    the question is answered again and its entry replaced."""
    settings = build_settings()
    report = run_async(_recheck(settings, namespace, limit, quiet=as_json))
    data = {
        "due": report.due,
        "outcomes": report.outcomes,
        "changed": report.changed,
        "recheck_after_s": settings.cache.recheck_after_s,
    }
    if as_json:
        print_json(data)
        return
    if not report.due:
        console.print("no cached answer is due for a check")
        return
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.outcomes.items()))
    console.print(f"{report.due} cached answer(s) checked for new articles: {counts}")
    for item in report.changed:
        turned = "verdict turned" if item.get("verdict_turned") else "verdict the same"
        console.print(
            f"  {item['question']} — {item.get('new_articles', 0)} new, {turned} "
            f"({item.get('verdict_before')} → {item.get('verdict_after')})",
            markup=False,
        )


async def _recheck(settings: Any, namespace: str | None, limit: int, *, quiet: bool) -> Any:
    from medlit.assistant import Assistant
    from medlit.cli.app import err_console

    async with Assistant(settings) as assistant:
        if quiet or not err_console.is_terminal:
            return await assistant.recheck_due(namespace=namespace, limit=limit)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        with Progress(
            "checking cached answers for new articles",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
        ) as progress:
            task = progress.add_task("recheck", total=None)

            def advance(done: int, due: int, status: str) -> None:
                progress.update(task, completed=done, total=due)

            return await assistant.recheck_due(namespace=namespace, limit=limit, on_entry=advance)
