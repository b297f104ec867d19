"""Who is calling: Bearer API keys → :class:`Tenant`, and per-key request limits.

Routes take the caller as a dependency::

    @router.post("/v1/ask")
    async def ask(body: AskRequest, tenant: CurrentTenant) -> AskResult: ...

With no API key created (and ``require_keys`` not forced), every request runs as tenant
``default``; the server then listens on loopback only (see :mod:`medlit.service.server`). Once a
key exists, every request needs ``Authorization: Bearer <key>``; a missing or unknown key is a
401, a key over its rate a 429 with ``Retry-After`` (the rate is counted in the store, so it
holds across replicas: :mod:`medlit.service.limits`). The key checks touch the store, so they
run off the event loop.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Annotated

import anyio.to_thread
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from medlit.service.deps import ServiceState, get_state
from medlit.service.keys import ApiKey, KeyStore
from medlit.service.problems import ProblemError

__all__ = [
    "DEFAULT_TENANT",
    "CurrentTenant",
    "KeyVerifier",
    "Tenant",
    "bearer_token",
    "resolve_tenant",
]

DEFAULT_TENANT = "default"

_bearer = HTTPBearer(auto_error=False, description="An API key from `medlit keys create`.")


@dataclass(frozen=True)
class Tenant:
    """The caller.

    Attributes:
        name: the tenant (the namespace of its cached answers, sessions and jobs).
        key_id: the public id of the key used, or None without keys.
    """

    name: str
    key_id: str | None = None


class KeyVerifier:
    """Verifies tokens against the key table, remembering answers for ``ttl_s`` seconds so a
    busy server does not read the table on every request (a revoked key stops working within
    ``ttl_s``).
    """

    def __init__(self, keys: KeyStore, ttl_s: float) -> None:
        self._keys = keys
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, ApiKey | None]] = {}
        self._count: tuple[float, int] = (-1e18, 0)

    def any_keys_cached(self) -> bool | None:
        """:meth:`any_keys` when the remembered answer is fresh, else None (without the store:
        the event loop may call it)."""
        with self._lock:
            at, count = self._count
        return None if time.monotonic() - at > self._ttl else count > 0

    def any_keys(self) -> bool:
        """Whether at least one active key exists."""
        now = time.monotonic()
        with self._lock:
            at, count = self._count
        if now - at > self._ttl:
            count = self._keys.active_count()
            with self._lock:
                self._count = (now, count)
        return count > 0

    def verify(self, token: str) -> ApiKey | None:
        """The active key of ``token``, or None."""
        now = time.monotonic()
        with self._lock:
            hit = self._seen.get(token)
        if hit is not None and now - hit[0] <= self._ttl:
            return hit[1]
        key = self._keys.verify(token)
        with self._lock:
            if len(self._seen) > 10_000:  # bounded: unknown tokens must not grow it forever
                self._seen.clear()
            self._seen[token] = (now, key)
        return key


async def current_tenant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Tenant:
    """The tenant of the request's API key (``default`` when keys are not in use)."""
    token = None if credentials is None else credentials.credentials
    return await resolve_tenant(get_state(request), token)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (None for no header or another
    scheme), read as the route dependency reads it."""
    scheme, token = get_authorization_scheme_param(authorization)
    if not (authorization and scheme and token) or scheme.lower() != "bearer":
        return None
    return token


async def resolve_tenant(state: ServiceState, token: str | None) -> Tenant:
    """The tenant of ``token`` (``default`` when keys are not in use).

    Raises:
        ProblemError: 401 for a missing, unknown or revoked key when keys are in use; 429 when
            the key is over its rate (with ``Retry-After``).
    """
    verifier: KeyVerifier = state.extras["verifier"]  # type: ignore[assignment]
    if token is None:
        required = state.require_keys
        if required is None:
            required = verifier.any_keys_cached()
        if required is None:
            required = await anyio.to_thread.run_sync(verifier.any_keys)
        if required:
            raise ProblemError(
                401,
                "an API key is required: send 'Authorization: Bearer <key>' "
                "(create one with: medlit keys create --tenant NAME)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return Tenant(DEFAULT_TENANT)
    key, wait = await anyio.to_thread.run_sync(_check_key, state, token)
    if key is None:
        raise ProblemError(
            401, "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"}
        )
    if wait > 0:
        raise ProblemError(
            429,
            "too many requests for this API key; retry later",
            headers={"Retry-After": str(max(1, round(wait + 0.5)))},
        )
    return Tenant(key.tenant, key.key_id)


def _check_key(state: ServiceState, token: str) -> tuple[ApiKey | None, float]:
    """The active key of ``token`` and the seconds it must wait (0: go on), in one trip to a
    worker thread (both may read or write the store)."""
    verifier: KeyVerifier = state.extras["verifier"]  # type: ignore[assignment]
    key = verifier.verify(token)
    if key is None:
        return None, 0.0
    return key, state.limiter.take(key.key_id, key.rate_per_minute)


CurrentTenant = Annotated[Tenant, Depends(current_tenant)]
"""The calling tenant (a route dependency)."""
