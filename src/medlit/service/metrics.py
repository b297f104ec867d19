"""Prometheus metrics of the service (``GET /metrics``), through ``prometheus_client``.

Each app has its own registry (two apps in one process, as in the tests, never mix counts).
Labels are few and bounded: the route *template* (never the raw path), the method, the status,
a cache miss reason, a service or LLM task name. No question text, no tenant, no key.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from medlit.usage import Usage, usage_scope

__all__ = ["MetricsMiddleware", "ServiceMetrics"]

_LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class _JobsCollector(Collector):
    """Research jobs by status, read from the job table when scraped."""

    def __init__(self, count_jobs: Callable[[], dict[str, int]]) -> None:
        self._count_jobs = count_jobs

    def collect(self) -> Any:
        family = GaugeMetricFamily(
            "medlit_research_jobs", "Research jobs by status.", labels=["status"]
        )
        try:
            counts = self._count_jobs()
        except Exception:  # a scrape must not fail because the table is not there yet
            counts = {}
        for status, n in sorted(counts.items()):
            family.add_metric([status], n)
        yield family


class ServiceMetrics:
    """The counters and histograms of one app.

    Args:
        count_jobs: returns research jobs by status (read at each scrape), or None.
    """

    def __init__(self, count_jobs: Callable[[], dict[str, int]] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "medlit_http_requests_total",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "medlit_http_request_duration_seconds",
            "Time to answer an HTTP request (to the end of the body), by route template.",
            ["route", "method"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.tier1 = Counter(
            "medlit_answer_cache_lookups_total",
            "Tier-1 answer-cache lookups of asks, by result and miss reason.",
            ["result", "reason"],
            registry=r,
        )
        self.source_requests = Counter(
            "medlit_source_requests_total",
            "Requests sent to literature sources (pubmed, europepmc, local).",
            ["service"],
            registry=r,
        )
        self.llm_calls = Counter(
            "medlit_llm_calls_total", "LLM requests sent, by task.", ["task"], registry=r
        )
        self.llm_tokens = Counter(
            "medlit_llm_tokens_total",
            "LLM tokens used, by task and kind (prompt or completion).",
            ["task", "kind"],
            registry=r,
        )
        self.single_flight = Counter(
            "medlit_ask_shared_total",
            "Asks answered by joining an identical ask already in flight.",
            registry=r,
        )
        self._lock = threading.Lock()
        self._by_tenant: dict[str, collections.Counter[str]] = {}
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        if count_jobs is not None:
            r.register(_JobsCollector(count_jobs))

    def child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, remembered: ``labels`` checks and locks on every call,
        and every request counts and times itself under a handful of label sets."""
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def observe_usage(self, usage: Usage) -> None:
        """Add the source and LLM calls of one piece of work (a request, a research step)."""
        for service, n in usage.calls.items():
            if n:
                self.source_requests.labels(service).inc(n)
        for task, u in usage.llm.items():
            if u.calls:
                self.llm_calls.labels(task).inc(u.calls)
            if u.prompt_tokens:
                self.llm_tokens.labels(task, "prompt").inc(u.prompt_tokens)
            if u.completion_tokens:
                self.llm_tokens.labels(task, "completion").inc(u.completion_tokens)

    def observe_lookup(self, tenant: str, hit: bool, reason: str | None) -> None:
        """Count one tier-1 lookup of an ask (the tenant only in the per-tenant stats)."""
        label = "" if hit else (reason or "unknown")
        self.child(self.tier1, "hit" if hit else "miss", label).inc()
        with self._lock:
            counts = self._by_tenant.setdefault(tenant, collections.Counter())
            counts["hit" if hit else f"miss:{label}"] += 1

    def tier1_counts(self, tenant: str) -> dict[str, Any]:
        """One tenant's tier-1 hits and misses by reason since the server started."""
        with self._lock:
            counts = dict(self._by_tenant.get(tenant, {}))
        misses = {k[5:]: n for k, n in counts.items() if k.startswith("miss:")}
        return {"hits": counts.get("hit", 0), "misses": misses}

    def render(self) -> bytes:
        """The exposition text."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts each request by route template and status, times it, and counts the source and
    LLM calls it caused (pure ASGI: cheap, and it times a streamed body to its end)."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            # Every source and LLM call this request causes (tasks it starts included).
            with usage_scope() as usage:
                await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.observe_usage(usage)
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "GET")
            metrics = self.metrics
            metrics.child(metrics.requests, template, method, str(status)).inc()
            metrics.child(metrics.latency, template, method).observe(time.perf_counter() - start)
