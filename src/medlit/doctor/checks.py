"""The checks of ``medlit doctor``: sources, LLM routes, store, embedder (see the package)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from medlit.errors import MedlitError

if TYPE_CHECKING:
    from medlit.config import Settings
    from medlit.llm.probe import RouteProbe
    from medlit.runtime import Runtime

__all__ = ["DoctorItem", "DoctorReport", "run_doctor"]

Status = Literal["ok", "warn", "fail", "skip"]
_SOURCES = ("pubmed", "europepmc", "local")
#: Generation speed below which an answer takes minutes (tokens/s).
_SLOW_GENERATION = 5.0


class DoctorItem(BaseModel):
    """One thing checked."""

    area: Literal["source", "llm", "store", "embedder", "self-test"]
    name: str = Field(description="What was checked, e.g. 'pubmed' or 'answer: JSON mode'.")
    status: Status
    needed: bool = Field(description="medlit cannot do its work without it.")
    detail: str = ""
    fix: str = Field("", description="What to do about a failure or a warning.")


class DoctorReport(BaseModel):
    """Every item checked, in order."""

    items: list[DoctorItem] = Field(default_factory=list)

    @property
    def usable(self) -> bool:
        """No needed item failed, or only online sources did while the local corpus answers
        (:attr:`offline`)."""
        return not self._failed() or self.offline

    @property
    def offline(self) -> bool:
        """Usable offline only: every needed failure is an online source out of reach, and
        the local corpus, which has documents, answers (``--source local``)."""
        failed = self._failed()
        local_ok = any(
            item.area == "source" and item.name == "local" and item.status == "ok"
            for item in self.items
        )
        return bool(failed) and local_ok and all(_online_source(item) for item in failed)

    def _failed(self) -> list[DoctorItem]:
        return [item for item in self.items if item.needed and item.status == "fail"]


def _online_source(item: DoctorItem) -> bool:
    return item.area == "source" and item.name in ("pubmed", "europepmc")


async def run_doctor(settings: Settings, *, self_test: bool = False) -> DoctorReport:
    """Check the set-up ``settings`` describe (with ``self_test``: five questions answered end
    to end over the bundled sample corpus, scored against their labels)."""
    from medlit.runtime import Runtime

    report = DoctorReport()
    try:
        runtime = Runtime.open(settings)
    except MedlitError as exc:
        report.items.append(
            DoctorItem(
                area="store",
                name="open",
                status="fail",
                needed=True,
                detail=str(exc),
                fix="check MEDLIT_HOME (writable) or MEDLIT_DATABASE_URL",
            )
        )
        return report
    async with runtime:
        # The sources and the LLM are asked at once: a dead server is known in a second.
        sources, llm = await asyncio.gather(_sources(runtime), _llm(runtime))
        report.items += sources + llm + _store(runtime) + await _embedder(runtime)
    if self_test:
        from medlit.doctor.self_test import run_self_test

        report.items += await run_self_test(settings)
    return report


# -- sources -------------------------------------------------------------------------------


def _needed_sources(settings: Settings) -> set[str]:
    default = settings.search.default_source
    return set(_SOURCES) if default == "all" else {default}


async def _sources(runtime: Runtime) -> list[DoctorItem]:
    from medlit.types import SearchQuery

    settings = runtime.settings
    needed = _needed_sources(settings)
    enabled = {
        "pubmed": settings.pubmed.enabled,
        "europepmc": settings.europepmc.enabled,
        "local": settings.local.enabled,
    }
    names = [name for name in _SOURCES if enabled[name]]
    items = [
        DoctorItem(area="source", name=name, status="skip", needed=False, detail="disabled")
        for name in _SOURCES
        if not enabled[name]
    ]
    if not names:
        return items
    from medlit.sources.http import without_advice

    found = await runtime.source_set(names).search(SearchQuery(term="aspirin", limit=1))
    local_articles = 0
    for name in names:
        status = found.providers.get(name)
        if status is None:
            continue
        item = DoctorItem(area="source", name=name, status="ok", needed=name in needed)
        latency = f"answered in {status.elapsed_ms / 1000:.2f} s"
        if status.status in ("ok", "no_match"):
            item.detail = latency
        elif status.status == "disabled":
            item.status, item.detail = "skip", "disabled"
        else:
            item.status = "fail"
            item.detail = without_advice(status.error or status.status).rstrip(".")
            item.fix = "medlit corpus add FILES" if name == "local" else ""
        if name == "local" and item.status == "ok":
            local_articles = _local_count(settings, item)
        if name == "pubmed":
            item.detail += "; " + _pubmed_rate(settings)
            if not settings.pubmed.api_key and item.status == "ok":
                item.fix = "set MEDLIT_PUBMED_API_KEY (free from NCBI) for 10 requests/s"
        items.append(item)
    for item in items:
        if item.status == "fail" and item.name != "local":
            item.fix = _source_fix(item.name, local_articles)
    return items


def _local_count(settings: Settings, item: DoctorItem) -> int:
    """How many articles the local corpus holds (a warning when none)."""
    from medlit.sources.local import LocalCorpus

    with LocalCorpus.from_settings(settings) as corpus:
        count = corpus.count()
    item.detail = f"{count} articles; {item.detail}"
    if not count:
        item.status = "fail" if item.needed else "warn"
        item.fix = "medlit corpus add FILES (or --sample to try it)"
    return count


def _pubmed_rate(settings: Settings) -> str:
    key = "API key in use" if settings.pubmed.api_key else "no API key"
    return f"{key}, {settings.pubmed.rate:g} requests/s"


def _source_fix(name: str, local_articles: int) -> str:
    """What to do about an online source out of reach (``local_articles``: what the local
    corpus holds, so the offline way is said as it stands)."""
    variable = "MEDLIT_PUBMED_BASE_URL" if name == "pubmed" else "MEDLIT_EUROPEPMC_BASE_URL"
    if local_articles:
        offline = f"meanwhile ask the local corpus ({local_articles} articles) with --source local"
    else:
        offline = "to work offline, medlit corpus add FILES (or --sample), then --source local"
    return f"check the network or {variable}; {offline}"


# -- LLM -----------------------------------------------------------------------------------


async def _llm(runtime: Runtime) -> list[DoctorItem]:
    from medlit.llm.tasks import LLMTask, how_to_point, resolve_route

    settings = runtime.settings
    routes: dict[tuple[object, ...], list[str]] = {}
    unconfigured: list[str] = []
    for task in LLMTask:
        route = resolve_route(settings.llm, task.value)
        if not route.configured:
            unconfigured.append(task.value)
            continue
        routes.setdefault((*route.endpoint, route.model), []).append(task.value)
    if not routes:
        return [
            DoctorItem(
                area="llm",
                name="model",
                status="warn",
                needed=False,
                detail="none configured: answers are evidence digests (quoted sentences)",
                fix=how_to_point(),
            )
        ]
    client = runtime.llm()
    timeout = min(settings.llm.timeout_s, 60.0)

    async def probe(tasks: list[str]) -> RouteProbe:
        from medlit.llm.probe import probe_route

        route = client.route(tasks[0])
        return await probe_route(client.provider_for(route), route, timeout_s=timeout, tasks=tasks)

    probes = await asyncio.gather(*(probe(tasks) for tasks in routes.values()))
    items = [item for found in probes for item in _route_items(found, settings)]
    if unconfigured:
        items.append(
            DoctorItem(
                area="llm",
                name=", ".join(unconfigured),
                status="warn",
                needed=False,
                detail="no model for these tasks",
                fix="set MEDLIT_LLM_MODEL, or MEDLIT_LLM_TASKS for each",
            )
        )
    return items


def _route_items(found: RouteProbe, settings: Settings) -> list[DoctorItem]:
    """The lines of one probed route."""
    who = f"{'/'.join(found.tasks)} ({found.label})"
    if not found.reachable:
        return [
            DoctorItem(
                area="llm",
                name=who,
                status="fail",
                needed=True,
                detail=f"unreachable: {found.error}",
                fix="start the server, or check MEDLIT_LLM_BASE_URL and MEDLIT_LLM_API_KEY",
            )
        ]
    items = [DoctorItem(area="llm", name=who, status="ok", needed=True, detail="reachable")]

    def add(name: str, ok: bool | None, detail: str, fix: str, *, needed: bool = False) -> None:
        status: Status = "skip" if ok is None else ("ok" if ok else ("fail" if needed else "warn"))
        items.append(
            DoctorItem(
                area="llm",
                name=f"{found.tasks[0]}: {name}",
                status=status,
                needed=needed,
                detail=detail,
                fix="" if ok else fix,
            )
        )

    shown = ", ".join(found.models[:5]) or "none"
    if found.model_found and found.model_listed is False:
        served = f"answers under this name (it lists {shown})"
    elif found.model_found:
        served = "found"
    else:
        served = f"not served: {found.error} (it lists {shown})"
    add(
        "model",
        found.model_found,
        served,
        "set MEDLIT_LLM_MODEL to a model the server serves",
        needed=True,
    )
    if not found.model_found:
        return items  # nothing else can be asked of a model the server refuses
    add(
        "JSON mode",
        found.json_mode == "json_schema",
        f"{found.json_mode}",
        "JSON is asked for in the prompt only, and a small model's JSON breaks more often: "
        "use a server with json_schema (llama.cpp's llama-server, vLLM, Ollama)",
    )
    add(
        "streaming",
        found.streams,
        "streams" if found.streams else "answers in one piece",
        "the answer shows only once written; nothing else changes",
    )
    add(
        "logprobs",
        found.logprobs,
        "given" if found.logprobs else "not given",
        "the verdict read asks again in JSON and the cache's verified band stays closed",
    )
    seed = settings.llm.seed
    add(
        "seed",
        found.seed,
        ("honoured" if found.seed else "not honoured")
        + (f" (MEDLIT_LLM_SEED={seed})" if seed is not None else " (MEDLIT_LLM_SEED unset)"),
        "reruns cannot reproduce answers on this server",
    )
    if found.prompt_tokens_per_s is not None:
        gen = found.generation_tokens_per_s or 0.0
        add(
            "speed",
            gen >= _SLOW_GENERATION,
            f"prompt {found.prompt_tokens_per_s:.0f} tokens/s, generation {gen:.0f} tokens/s",
            "answers will take minutes: use a smaller model, a GPU, or a hosted API",
        )
    return items


# -- store and embedder --------------------------------------------------------------------


def _store(runtime: Runtime) -> list[DoctorItem]:
    settings = runtime.settings
    store = runtime.store
    postgres = settings.database_url is not None
    name = "postgresql" if postgres else "sqlite"
    try:
        store.read("SELECT 1")
        applied = store.read("SELECT count(*) FROM _migrations")[0][0]
    except MedlitError as exc:
        return [
            DoctorItem(
                area="store",
                name=name,
                status="fail",
                needed=True,
                detail=str(exc),
                fix="check MEDLIT_DATABASE_URL"
                if postgres
                else "check that MEDLIT_HOME is writable",
            )
        ]
    where = settings.database_label
    items = [
        DoctorItem(
            area="store",
            name=name,
            status="ok",
            needed=True,
            detail=f"{where}; {applied} migrations applied",
        )
    ]
    if postgres:
        rows = store.read("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        items.append(
            DoctorItem(
                area="store",
                name="pgvector",
                status="ok" if rows else "fail",
                needed=True,
                detail=f"version {rows[0][0]}" if rows else "missing",
                fix="" if rows else "run CREATE EXTENSION vector as a superuser once",
            )
        )
    return items


async def _embedder(runtime: Runtime) -> list[DoctorItem]:
    backend = runtime.settings.embeddings.backend
    started = time.monotonic()
    try:
        await asyncio.to_thread(runtime.embedder.embed, ["medlit doctor"])
    except MedlitError as exc:
        return [
            DoctorItem(
                area="embedder",
                name=backend,
                status="fail",
                needed=True,
                detail=str(exc),
                fix="reinstall medlit (pip install --force-reinstall medlit)",
            )
        ]
    checked = "files' SHA-256 checked" if backend == "onnx" else "no digest (PyTorch weights)"
    return [
        DoctorItem(
            area="embedder",
            name=backend,
            status="ok",
            needed=True,
            detail=f"loaded in {time.monotonic() - started:.1f} s, {checked}",
        )
    ]
