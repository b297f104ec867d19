"""Who is calling: Bearer API keys → :class:`Tenant`, and per-key request limits.

Routes take the caller as a dependency::

    @router.post("/v1/ask")
    async def ask(body: AskRequest, tenant: CurrentTenant) -> AskResult: ...

Auth is decided on every request from the store:

- Once any API key has been created (the store remembers it for good, revoked and expired keys
  count), every request needs ``Authorization: Bearer <key>``; a missing, unknown, revoked or
  expired key is a 401 that says which, a key over its rate a 429 with ``Retry-After`` (the
  rate is counted in the store, so it holds across replicas: :mod:`medlit.service.limits`).
- Before any key was created (and ``require_keys`` not forced), a request without a key runs
  as tenant ``default``, but only from a loopback peer that names a loopback host in its
  ``Host`` header (``localhost``, ``127.0.0.1``, ``[::1]``, with or without a port): anything
  else is a 403. The peer rule holds even if the server was started on another address; the
  ``Host`` rule stops a web page elsewhere from reaching a local medlit by DNS rebinding.

The key checks touch the store, so they run off the event loop.
"""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
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
    "is_loopback_host",
    "is_loopback_peer",
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
    ``ttl_s``; an expiry is checked on every request).

    Whether keys are required is read from the store too: once keys have been created, that
    stays true for good, so the answer is remembered for good; until then it is read again
    every ``ttl_s``.
    """

    def __init__(self, keys: KeyStore, ttl_s: float) -> None:
        self._keys = keys
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, ApiKey | None]] = {}
        self._required: tuple[float, bool] = (-1e18, False)

    def keys_required_cached(self) -> bool | None:
        """:meth:`keys_required` when the remembered answer is still good, else None (without
        the store: the event loop may call it)."""
        with self._lock:
            at, required = self._required
        if required:
            return True
        return None if time.monotonic() - at > self._ttl else False

    def keys_required(self) -> bool:
        """Whether any key was ever created (then every request needs one)."""
        cached = self.keys_required_cached()
        if cached is not None:
            return cached
        required = self._keys.ever_created()
        with self._lock:
            self._required = (time.monotonic(), required)
        return required

    def lookup(self, token: str) -> ApiKey | None:
        """The key of ``token`` (revoked or expired alike), or None."""
        now = time.monotonic()
        with self._lock:
            hit = self._seen.get(token)
        if hit is not None and now - hit[0] <= self._ttl:
            return hit[1]
        key = self._keys.lookup(token)
        with self._lock:
            if len(self._seen) > 10_000:  # bounded: unknown tokens must not grow it forever
                self._seen.clear()
            self._seen[token] = (now, key)
        return key

    def verify(self, token: str) -> ApiKey | None:
        """The usable key of ``token`` (neither revoked nor expired), or None."""
        key = self.lookup(token)
        return key if key is not None and key.usable() else None


@functools.lru_cache(maxsize=1024)  # asked on every request, of a few addresses
def is_loopback_peer(host: str | None) -> bool:
    """Whether a peer address is on this machine (127.0.0.0/8, ::1, or IPv4 on ::ffff:)."""
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


@functools.lru_cache(maxsize=1024)
def is_loopback_host(value: str | None) -> bool:
    """Whether a ``Host`` header names this machine: ``localhost``, a 127.x address or
    ``[::1]``, each with or without a port. Any other name (one a DNS record could point at
    127.0.0.1) is refused."""
    if not value or len(value) > 300:
        return False
    host = value.strip().lower()
    if host.startswith("["):
        name, sep, rest = host[1:].partition("]")
        if not sep or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return False
    else:
        name, sep, port = host.partition(":")
        if sep and not port.isdigit():
            return False
        if name == "localhost":
            return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


async def current_tenant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Tenant:
    """The tenant of the request's API key (``default`` when keys are not in use)."""
    token = None if credentials is None else credentials.credentials
    peer = request.client.host if request.client is not None else None
    return await resolve_tenant(
        get_state(request), token, peer=peer, host=request.headers.get("host")
    )


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (None for no header or another
    scheme), read as the route dependency reads it."""
    scheme, token = get_authorization_scheme_param(authorization)
    if not (authorization and scheme and token) or scheme.lower() != "bearer":
        return None
    return token


async def resolve_tenant(
    state: ServiceState, token: str | None, *, peer: str | None, host: str | None
) -> Tenant:
    """The tenant of ``token`` (``default`` when no key was ever created).

    Args:
        state: the service's state.
        token: the bearer token sent, or None.
        peer: the client's address (the TCP peer).
        host: the request's ``Host`` header.

    Raises:
        ProblemError: 401 for a missing, unknown, revoked or expired key when keys are in use;
            403 for a request without keys from another machine or naming another host; 429
            when the key is over its rate (with ``Retry-After``).
    """
    verifier: KeyVerifier = state.extras["verifier"]  # type: ignore[assignment]
    if token is None:
        required = state.require_keys
        if required is None:
            required = verifier.keys_required_cached()
        if required is None:
            required = await anyio.to_thread.run_sync(verifier.keys_required)
        if required:
            raise ProblemError(
                401,
                "an API key is required: send 'Authorization: Bearer <key>' "
                "(create one with: medlit keys create --tenant NAME)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not is_loopback_peer(peer):
            raise ProblemError(
                403,
                "this server has no API keys, so it answers only requests from this machine "
                "(loopback); create a key with 'medlit keys create --tenant NAME' to serve "
                "others",
            )
        if not is_loopback_host(host):
            raise ProblemError(
                403,
                "this server has no API keys, so it answers only requests addressed to "
                "localhost, 127.0.0.1 or [::1] (the Host header); open it by one of those "
                "names, or create a key with 'medlit keys create --tenant NAME'",
            )
        return Tenant(DEFAULT_TENANT)
    key, wait = await anyio.to_thread.run_sync(_check_key, state, token)
    if key is None or not key.active:
        raise ProblemError(
            401,
            "unknown API key" if key is None else "this API key was revoked",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if key.expired():
        assert key.expires_at is not None
        when = dt.datetime.fromtimestamp(key.expires_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise ProblemError(
            401,
            f"this API key expired on {when}; ask for a new one (medlit keys create)",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    if wait > 0:
        raise ProblemError(
            429,
            "too many requests for this API key; retry later",
            headers={"Retry-After": str(max(1, round(wait + 0.5)))},
        )
    return Tenant(key.tenant, key.key_id)


def _check_key(state: ServiceState, token: str) -> tuple[ApiKey | None, float]:
    """The key of ``token`` (revoked or expired alike) and the seconds it must wait (0: go
    on), in one trip to a worker thread (both may read or write the store)."""
    verifier: KeyVerifier = state.extras["verifier"]  # type: ignore[assignment]
    key = verifier.lookup(token)
    if key is None or not key.usable():
        return key, 0.0
    return key, state.limiter.take(key.key_id, key.rate_per_minute)


CurrentTenant = Annotated[Tenant, Depends(current_tenant)]
"""The calling tenant (a route dependency)."""
