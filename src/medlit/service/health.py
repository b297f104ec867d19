"""``GET /healthz`` (the process is up), ``GET /readyz`` (it can serve), ``GET /metrics``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from medlit.errors import MedlitError
from medlit.service.deps import ServiceState, ServiceStateDep

__all__ = ["router"]

router = APIRouter(tags=["operations"])

_SOURCE_CHECK_TTL_S = 30.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (no dependency is checked)."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "The store cannot be read."}})
async def readyz(state: ServiceStateDep) -> JSONResponse:
    """Ready to serve: the store answers; also says whether an LLM is configured and whether
    each enabled source answers (a source down only degrades answers: still ready)."""
    runtime = state.runtime
    store_ok, store_detail = True, "open"
    try:
        await asyncio.to_thread(runtime.store.read, "SELECT 1")
    except MedlitError as exc:
        store_ok, store_detail = False, str(exc)
    body: dict[str, Any] = {
        "status": "ready" if store_ok else "not ready",
        "store": {"ok": store_ok, "detail": store_detail},
        "llm": {
            task: runtime.llm_configured(task) for task in ("answer", "plan_research", "synthesize")
        },
        "sources": await _sources(state),
    }
    return JSONResponse(body, status_code=200 if store_ok else 503)


async def _sources(state: ServiceState) -> dict[str, Any]:
    """Whether each enabled source answers HTTP at all (checked at most every 30 s; the
    request goes to the base URL, not to an E-utility, so it costs no search)."""
    cached = state.extras.get("sources_checked")
    now = time.monotonic()
    if isinstance(cached, tuple) and now - cached[0] < _SOURCE_CHECK_TTL_S:
        result: dict[str, Any] = cached[1]
        return result
    settings = state.runtime.settings
    targets = {"pubmed": settings.pubmed.base_url, "europepmc": settings.europepmc.base_url}
    enabled = {"pubmed": settings.pubmed.enabled, "europepmc": settings.europepmc.enabled}
    result = {}
    async with httpx.AsyncClient(timeout=2.0) as client:

        async def probe(name: str, url: str) -> None:
            if not enabled.get(name, True):
                result[name] = {"reachable": None, "detail": "disabled"}
                return
            try:
                reply = await client.get(url)
                # Any status: the base URL is no E-utility, so a 404 there is a live server.
                # The URL itself is left out: /readyz needs no key, and a URL may carry one.
                detail = f"answers (HTTP {reply.status_code} at its base URL)"
                result[name] = {"reachable": True, "detail": detail}
            except httpx.HTTPError as exc:
                result[name] = {"reachable": False, "detail": type(exc).__name__}

        await asyncio.gather(*(probe(n, u) for n, u in targets.items()))
    state.extras["sources_checked"] = (now, result)
    return result


@router.get("/metrics", response_class=Response)
async def metrics(state: ServiceStateDep) -> Response:
    """Prometheus metrics (text exposition format)."""
    body = await asyncio.to_thread(state.metrics.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
