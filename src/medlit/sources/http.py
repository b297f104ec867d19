"""The one place source requests are sent: rate limit, retries, timeouts, accounting.

`send` holds a slot of the host's :class:`~medlit.sources.ratelimit.RateLimiter` around
every attempt (a retry is a request like any other), counts it with
:func:`medlit.usage.record_call`, and retries what is worth retrying:

* 429: waits what ``Retry-After`` says (seconds or an HTTP date), else the backoff delay;
* 5xx, timeouts, connection errors, and a 2xx body its ``parse`` finds cut short or
  unparsable (:class:`~medlit.errors.MalformedResponse`): exponential backoff with jitter,
  bounded tries.

A host that does not resolve or refuses connections is not retried: a retry cannot help, and
:class:`~medlit.errors.SourceUnreachable` says at once which host and which setting to check.

After the last try it raises :class:`~medlit.errors.RateLimited` or
:class:`~medlit.errors.SourceUnavailable`; any other 4xx becomes a
:class:`~medlit.errors.SourceResponseError` carrying the server's error message. httpx
exceptions never leave this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from medlit.errors import (
    MalformedResponse,
    RateLimited,
    SourceResponseError,
    SourceUnavailable,
    SourceUnreachable,
)
from medlit.log import get_logger
from medlit.reachability import host_of, unreachable_reason
from medlit.sources.ratelimit import RateLimiter
from medlit.usage import record_call

if TYPE_CHECKING:
    from medlit.config import EuropePMCSettings, PubMedSettings

__all__ = [
    "RetryPolicy",
    "error_message",
    "parse_retry_after",
    "send",
    "unreachable_source",
    "without_advice",
]

log = get_logger("sources.http")

_PARSE_ON_LOOP_BYTES = 16_384  # smaller bodies parse in well under a millisecond

T = TypeVar("T")

# A server asking us to wait longer than this is treated as "not now": fail fast and let the
# caller (search_all_providers) report the provider as rate-limited instead of hanging.
_MAX_RETRY_AFTER_S = 120.0


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one request.

    Attributes:
        max_retries: retries after the first attempt (0: one attempt only).
        backoff_base_s: delay before the first retry; doubles each retry.
        backoff_max_s: longest single delay.
        timeout_s: timeout of one attempt.
    """

    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    timeout_s: float = 20.0

    @classmethod
    def from_settings(cls, section: PubMedSettings | EuropePMCSettings) -> RetryPolicy:
        """The policy a source's settings section describes (same field names)."""
        return cls(
            max_retries=section.max_retries,
            backoff_base_s=section.backoff_base_s,
            backoff_max_s=section.backoff_max_s,
            timeout_s=section.timeout_s,
        )

    def delay(self, retry: int) -> float:
        """Backoff before retry number ``retry`` (0-based), with up to 25% jitter."""
        base = min(self.backoff_base_s * (2**retry), self.backoff_max_s)
        return base * (0.75 + random.random() * 0.25)


def _response(response: httpx.Response) -> httpx.Response:
    return response


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


#: How a person names each service, and the setting that says where it is.
_SERVICES = {
    "pubmed": ("PubMed", "MEDLIT_PUBMED_BASE_URL"),
    "europepmc": ("Europe PMC", "MEDLIT_EUROPEPMC_BASE_URL"),
}


#: The ways in without a network, named wherever an online source is out of reach.
OFFLINE_WAYS = (
    "To work offline, add documents to the local corpus (`medlit corpus add --sample` "
    "for a sample) and ask with `--source local`."
)


def unreachable_source(service: str, url: str, reason: str) -> SourceUnreachable:
    """The one-line error for a source whose host ``reason`` (does not resolve, refuses
    connections): which host, what to check, and the offline way in."""
    name, setting = _SERVICES.get(service, (service, "its base URL setting"))
    return SourceUnreachable(
        f"{name} is unreachable: {host_of(url)} {reason}." + _advice(setting), source=service
    )


def _advice(setting: str) -> str:
    return f" Check your network or {setting}. " + OFFLINE_WAYS


def without_advice(message: str) -> str:
    """``message`` less the advice :func:`unreachable_source` ends it with (for a caller that
    gives its own, e.g. ``medlit doctor``): what went wrong, once."""
    for _, setting in _SERVICES.values():
        if message.endswith(_advice(setting)):
            return message[: -len(_advice(setting))]
    return message


def error_message(response: httpx.Response) -> str:
    """The server's own words about an error response, short."""
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("error", "ERROR", "errorMessage", "message"):
            if body.get(key):
                return str(body[key])[:300]
    return text[:300] or response.reason_phrase


async def send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    service: str,
    limiter: RateLimiter | None,
    policy: RetryPolicy,
    params: dict[str, Any] | None = None,
    data: dict[str, Any] | None = None,
    parse: Callable[[httpx.Response], T] = _response,  # type: ignore[assignment]
) -> T:
    """Send one logical request, with rate limiting, retries and accounting.

    Args:
        client: the provider's HTTP client.
        method: ``GET`` or ``POST``.
        url: absolute URL.
        service: accounting name (``pubmed``, ``europepmc``).
        limiter: the host's limiter (None: unlimited, e.g. the local corpus).
        policy: retries, backoff and timeout.
        params: query-string parameters.
        data: form fields (POST).
        parse: turns the successful response into the result; a
            :class:`~medlit.errors.MalformedResponse` it raises (a body cut short or
            unparsable) is retried like a 5xx, within the same tries.

    Returns:
        ``parse(response)`` of the successful (2xx) response (the response by default).

    Raises:
        RateLimited: 429 on every try.
        SourceUnavailable: 5xx, timeouts or connection errors on every try.
        SourceUnreachable: at the first try, when the host does not resolve or refuses
            connections (no retry can help).
        SourceResponseError: another 4xx (its message is the server's), or an error body.
        MalformedResponse: a truncated or unparsable body on every try.
    """
    problem = _Problem("")
    for attempt in range(policy.max_retries + 1):
        hold = limiter.slot(policy.timeout_s + 5.0) if limiter else contextlib.nullcontext()
        try:
            async with hold:
                record_call(service)
                response = await client.request(
                    method, url, params=params, data=data, timeout=policy.timeout_s
                )
        except httpx.TimeoutException:
            problem = _Problem(f"timed out after {policy.timeout_s:g}s")
        except httpx.TransportError as exc:
            reason = unreachable_reason(exc)
            if reason is not None:
                raise unreachable_source(service, url, reason) from None
            problem = _Problem(f"connection failed ({type(exc).__name__}: {exc})")
        else:
            outcome = await _answered(response, service, parse)
            if not isinstance(outcome, _Problem):
                return outcome
            problem = outcome
        if attempt == policy.max_retries:
            break
        wait = problem.retry_after if problem.retry_after is not None else policy.delay(attempt)
        log.info(
            "source_retry",
            service=service,
            attempt=attempt + 1,
            problem=problem.text,
            wait_s=round(wait, 3),
        )
        await asyncio.sleep(wait)
    raise problem.error(service, policy.max_retries + 1)


@dataclass(frozen=True)
class _Problem:
    """Why one try failed in a way another try may mend."""

    text: str
    retry_after: float | None = None
    malformed: MalformedResponse | None = None

    def error(self, service: str, tries: int) -> Exception:
        """The error to raise when every try failed this way."""
        if self.malformed is not None:
            return MalformedResponse(f"{self.malformed} after {tries} tries", source=service)
        if self.text.startswith("rate limited"):
            return RateLimited(
                f"{service}: {self.text} after {tries} tries",
                source=service,
                retry_after=self.retry_after,
            )
        return SourceUnavailable(f"{service}: {self.text} after {tries} tries", source=service)


async def _answered(
    response: httpx.Response, service: str, parse: Callable[[httpx.Response], T]
) -> T | _Problem:
    """The parsed result of a response, or the retryable problem it shows.

    Raises:
        RateLimited: a 429 whose Retry-After is longer than medlit waits.
        SourceResponseError: another 4xx (no retry can help).
    """
    status = response.status_code
    if status < 400:
        try:
            if len(response.content) < _PARSE_ON_LOOP_BYTES:
                return parse(response)
            # A page of PubMed XML takes milliseconds to parse: in a worker thread,
            # while the event loop serves cached answers.
            return await asyncio.to_thread(parse, response)
        except MalformedResponse as exc:
            return _Problem(str(exc), malformed=exc)
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        text = f"rate limited (429: {error_message(response)})"
        if retry_after is not None and retry_after > _MAX_RETRY_AFTER_S:
            raise RateLimited(
                f"{service}: {text}; server asks to wait {retry_after:.0f}s",
                source=service,
                retry_after=retry_after,
            )
        return _Problem(text, retry_after=retry_after)
    if status >= 500:
        return _Problem(f"server error {status} ({error_message(response)})")
    message = f"{service}: HTTP {status}: {error_message(response)}"
    raise SourceResponseError(message, source=service)
