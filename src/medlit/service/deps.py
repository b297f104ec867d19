"""What a route may ask FastAPI for: the app's :class:`~medlit.runtime.Runtime` and the rest
of the service's shared state, as ``Annotated`` dependencies::

    @router.get("/v1/thing")
    async def thing(runtime: RuntimeDep, tenant: CurrentTenant) -> ...

``RuntimeDep`` and :data:`medlit.service.auth.CurrentTenant` are the two names other modules
(research routes, the MCP server) build on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from medlit.runtime import Runtime

if TYPE_CHECKING:
    from medlit.assistant import Assistant
    from medlit.service.flights import AskFlights
    from medlit.service.keys import KeyStore
    from medlit.service.leases import AskLeases
    from medlit.service.limits import KeyRateLimiter
    from medlit.service.metrics import ServiceMetrics

__all__ = ["RuntimeDep", "ServiceState", "ServiceStateDep", "get_runtime", "get_state"]


@dataclass
class ServiceState:
    """The shared parts of one running app (``app.state.medlit``).

    Attributes:
        runtime: the composition root (store, caches, sources, LLM).
        assistant: the one assistant every ask goes through (it holds no per-question state).
        keys: the API-key table.
        require_keys: True: every request needs a key; False: a request without one runs as
            tenant ``default`` (loopback only); None: keys are needed once any was created.
        metrics: the Prometheus metrics of this app.
        limiter: per-key request limits (counted in the store).
        flights: single-flight of identical asks (in this process).
        leases: single-flight of identical asks across processes over one store.
        extras: room for other parts of the service (the research worker pool...).
    """

    runtime: Runtime
    assistant: Assistant
    keys: KeyStore
    require_keys: bool | None
    metrics: ServiceMetrics
    limiter: KeyRateLimiter
    flights: AskFlights
    leases: AskLeases
    extras: dict[str, object] = field(default_factory=dict)


def get_state(request: Request) -> ServiceState:
    """The app's :class:`ServiceState`."""
    state: ServiceState = request.app.state.medlit
    return state


async def get_runtime(request: Request) -> Runtime:
    """The app's runtime (a dependency)."""
    return get_state(request).runtime


async def _state_dependency(request: Request) -> ServiceState:
    # ``async``: FastAPI runs a plain ``def`` dependency in a worker thread, a hop (and a wait
    # for a free thread) on every request, cached hits included.
    return get_state(request)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
"""The app's :class:`~medlit.runtime.Runtime`."""

ServiceStateDep = Annotated[ServiceState, Depends(_state_dependency)]
"""The app's :class:`ServiceState`."""
