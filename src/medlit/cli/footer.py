"""What ``medlit ask`` says under an answer: one footer line in plain words, and the internals
behind ``--verbose``.

The footer names what a person cares about (served from the cache or searched, the requests
sent, the time) and stays short enough for an 80-column terminal; the cache tier, the miss
reason, the stop rule, the answer mode and the evidence reused are the ``--verbose`` lines.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from medlit.text import counted

if TYPE_CHECKING:
    from medlit.assistant import AskResult

__all__ = [
    "FOOTER_SEPARATOR",
    "VERDICT_LABELS",
    "footer_line",
    "recheck_line",
    "refused_hit_line",
    "verbose_lines",
]

#: The one spelling of each verdict in the terminal (JSON keeps the lowercase enum).
VERDICT_LABELS = {"yes": "Yes", "no": "No", "uncertain": "Uncertain"}
FOOTER_SEPARATOR = " · "

_SERVICES = (
    ("pubmed", "PubMed call", "PubMed calls"),
    ("europepmc", "Europe PMC call", "Europe PMC calls"),
    ("local", "local corpus search", "local corpus searches"),
)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms < 100_000 else f"{ms / 1000:.0f} s"


def footer_line(result: AskResult) -> str:
    """ "answered from cache · no searches · 0.4 s", "3 PubMed calls · 1 LLM call · 812
    tokens · 2.1 s", "2 local corpus searches · 0.1 s" (and the cost, "$0.0004", where a
    price is configured).

    Each source is named by the requests sent to it, and only a source that was asked: an
    answer from the local corpus never reads as "0 PubMed calls", and one that asked no source
    at all (a cache hit) says "no searches"."""
    calls = result.api_calls
    parts = []
    if result.cache.tier1 == "hit":
        parts.append("answered from cache")
        if result.cache.checked_at is not None:
            parts[-1] += f" (checked {_ago(result.cache.checked_at)})"
    counts = {name: getattr(calls, name) for name, _, _ in _SERVICES}
    searched = [
        f"{counts[name]} {one if counts[name] == 1 else many}"
        for name, one, many in _SERVICES
        if counts[name]
    ]
    parts += searched or ["no searches"]
    if result.full_texts_read:  # texts read, not the requests sent to look for them
        read = result.full_texts_read
        parts.append(f"{read} full text{'' if read == 1 else 's'} read")
    if calls.llm:
        parts.append(counted(calls.llm, "LLM call"))
    parts += _spent(result.usage)
    parts.append(_seconds(result.timings_ms.get("total", 0.0)))
    return FOOTER_SEPARATOR.join(parts)


def _ago(when: float, now: float | None = None) -> str:
    """ "just now", "5 min ago", "3 h ago", "2 days ago"."""
    seconds = max(0.0, (time.time() if now is None else now) - when)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds // 3600:.0f} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'' if days == 1 else 's'} ago"


def recheck_line(result: AskResult) -> str | None:
    """One line when the cached answer was due for a check for new articles and the check
    found something, failed or was left to another process: "rechecked: 1 new article (PMID
    39100001), answered again; verdict turned: Yes → No; new citations: PMID 39100001";
    None otherwise (nothing new is said by the footer's "checked ... just now")."""
    check = result.cache.recheck
    if check is None or check.status == "unchanged":
        return None
    if check.status == "failed":
        return f"not checked for new articles: {check.error or 'a source failed'}"
    if check.status == "busy":
        return "not checked for new articles: another process is checking this answer"
    if check.status == "unrecorded":
        head = "rechecked: cached before its searches were kept, answered again"
    else:
        pmids = ", ".join(check.new_pmids[:5]) + (", ..." if len(check.new_pmids) > 5 else "")
        head = f"rechecked: {counted(check.new_articles, 'new article')}"
        head += f" (PMID {pmids}), answered again" if pmids else ", answered again"
    before = VERDICT_LABELS.get(check.verdict_before or "", check.verdict_before or "none")
    after = VERDICT_LABELS.get(check.verdict_after or "", check.verdict_after or "none")
    verdict = (
        f"verdict turned: {before} → {after}"
        if check.verdict_turned
        else (f"verdict the same: {after}")
    )
    cited = ", ".join(check.new_citations)
    return f"{head}; {verdict}; " + (f"new citations: PMID {cited}" if cited else "no new citation")


def _spent(usage: dict[str, Any]) -> list[str]:
    """The tokens the LLM calls used ("1,234 tokens") and their cost where a price is
    configured ("$0.0012"); nothing without tokens."""
    tokens = int(usage.get("tokens") or 0)
    if not tokens:
        return []
    cost = float(usage.get("cost_usd") or 0.0)
    spent = [f"{tokens:,} tokens"]
    if cost > 0:
        spent.append(f"${cost:.4f}" if cost < 1 else f"${cost:.2f}")
    return spent


def refused_hit_line(result: AskResult) -> str | None:
    """One short line when the cache held a near question but would not serve its answer, and
    why ("not answered from cache: a similar question was refused (differs: improve /
    compromise)", "not answered from cache: cached answer came from http://127.0.0.1:8765/...
    not https://eutils..."); None otherwise."""
    cache = result.cache
    if cache.tier1 == "hit" or not cache.guard_reason:
        return None
    if cache.miss_reason == "other_source":  # "cached answer came from ... not ..."
        return f"not answered from cache: {cache.guard_reason}"
    return f"not answered from cache: a similar question was refused ({cache.guard_reason})"


def verbose_lines(result: AskResult) -> list[str]:
    """The internals, one fact a line: the cache's tiers, why tier 1 missed, the stop rule,
    the answer mode, why the verdict is withheld, the evidence reused, the requests by service
    and the time by step."""
    cache = result.cache
    if cache.tier1 == "hit":
        tier1 = "hit"
        if cache.similarity is not None:
            tier1 += f" (similarity {cache.similarity:.3f}"
            tier1 += f", verified by {cache.verified_by})" if cache.verified_by else ")"
        if cache.matched_question:
            tier1 += f" for {cache.matched_question!r}"
    else:
        tier1 = f"miss ({cache.miss_reason or 'n/a'}"
        tier1 += f": {cache.guard_reason})" if cache.guard_reason else ")"
    calls = result.api_calls
    steps = ", ".join(
        f"{name} {ms:.0f} ms" for name, ms in result.timings_ms.items() if name != "total"
    )
    lines = [
        f"cache: tier 1 {tier1}; stored in tier 1: {'yes' if cache.admitted else 'no'}",
        f"evidence reused: {counted(cache.evidence_reused, 'chunk')}",
        f"stop rule: {result.stop_reason}",
        f"mode: {result.mode}",
        f"calls: pubmed {calls.pubmed}, europepmc {calls.europepmc}, local {calls.local}, "
        f"full text {calls.full_text}, llm {calls.llm}",
        f"standalone question: {result.standalone_question}",
    ]
    if (cause := result.verdict_cause) is not None:
        named = cause.check or cause.rule
        lines.insert(
            4, f"verdict withheld: {cause.kind}{f' {named}' if named else ''}: {cause.detail}"
        )
    if steps:
        lines.append(f"steps: {steps}")
    return lines
