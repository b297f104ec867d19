"""The LLM client: every language-model call in medlit goes through :class:`LLMClient`.

It routes each task to its provider and model, owns the one retry policy (429 with exponential
backoff honouring ``Retry-After``; timeouts, 5xx and connection errors retried a bounded number
of times, each timeout doubling the next attempt's limit (up to :data:`TIMEOUT_GROWTH` times the
setting: a seeded request to a slow server writes the same reply again, so an equal limit would
cut it off again); a server that does not resolve or refuses connections not retried at all:
:class:`~medlit.errors.LLMUnreachable`), turns replies into validated pydantic objects
(``complete_json``), and accounts every request sent: in the caller's
:func:`medlit.usage.usage_scope` and cumulatively in :attr:`LLMClient.usage`.

Usage::

    async with LLMClient.from_settings(settings) as llm:
        if llm.is_configured(LLMTask.ANSWER):
            reply = await llm.complete(LLMTask.ANSWER, [{"role": "user", "content": prompt}])
            plan = await llm.complete_json(LLMTask.PLAN_QUERY, messages, QueryPlan)
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from medlit.errors import (
    LLMConfigError,
    LLMOutputError,
    LLMProviderError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnreachable,
)
from medlit.llm.base import (
    ChatMessage,
    LLMProvider,
    ProviderFailure,
    ProviderReply,
    TokenLogprob,
)
from medlit.llm.hf_provider import HFProvider
from medlit.llm.jsonout import (
    JSONExtractionError,
    describe_error,
    json_instruction,
    response_format_for,
    strip_reasoning,
    validate_reply,
)
from medlit.llm.openai_provider import OpenAIProvider
from medlit.llm.server_notes import SERVER_NOTES_FILE, ServerNotes
from medlit.llm.streaming import LLMStream
from medlit.llm.tasks import LLMTask, Route, how_to_configure, resolve_route
from medlit.log import get_logger
from medlit.usage import LLMTaskUsage, Usage, record_llm

if TYPE_CHECKING:
    from pathlib import Path

    from medlit.config import LLMSettings, Settings

__all__ = ["LLMClient", "LLMReply", "LLMStream", "Messages"]

T = TypeVar("T", bound=BaseModel)
Messages = str | Sequence[ChatMessage]
"""A prompt: a plain string (one user message) or OpenAI-style chat messages."""
FormatMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
ProviderFactory = Callable[..., LLMProvider]

_PROVIDERS: dict[str, ProviderFactory] = {"openai": OpenAIProvider, "hf": HFProvider}
# json_object with a "schema" member is llama-cpp-python's grammar-constrained JSON mode (other
# servers ignore the member or refuse it, and the next step drops it).
_DOWNGRADE: dict[FormatMode, FormatMode] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "json_object": "prompt",
}
#: A timed-out request is sent again with twice the limit, up to this many times the setting.
TIMEOUT_GROWTH = 4

_REPAIR_REQUEST = "Reply again with only the corrected JSON, nothing else."

log = get_logger("llm")


@dataclass(frozen=True)
class LLMReply:
    """A completed ``complete`` call.

    Attributes:
        text: the reply with reasoning blocks (``<think>...</think>``) removed.
        raw: the reply exactly as the model sent it.
        task: the task type.
        model: the model that answered (as the server names it).
        prompt_tokens: prompt tokens of the successful request.
        completion_tokens: completion tokens of the successful request.
        latency_s: seconds spent, retries and waits included.
        attempts: requests sent (1 + retries).
        finish_reason: ``stop``, ``length``...
        logprobs: per generated token, its logprob and the top alternatives, when asked for
            (``top_logprobs``) and the server sent them; else ``None``.
    """

    text: str
    raw: str
    task: str
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    finish_reason: str | None
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class _Sent:
    reply: ProviderReply
    attempts: int
    latency_s: float


class _FormatRejected(Exception):
    """The server refused the response_format (a 400, a 422, or a 500 that says so)."""


class LLMClient:
    """Routes, retries, validates and accounts LLM calls. One per process (or per app)."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        providers: dict[str, ProviderFactory] | None = None,
        state_path: Path | None = None,
    ) -> None:
        """Build the client; no connection is opened until the first call.

        Args:
            settings: the ``llm`` section of the settings.
            providers: provider factories by kind (``openai``, ``hf``), to register another.
            state_path: a small JSON file where what was learnt about servers is kept for the
                next process (a server that does not stream); None: kept in memory only.
        """
        self.settings = settings
        self._servers = ServerNotes(state_path)
        self._factories = {**_PROVIDERS, **(providers or {})}
        self._providers: dict[tuple[str, str | None, str | None], LLMProvider] = {}
        self._format_modes: dict[tuple[str, str | None, str | None], FormatMode] = {}
        self._usage = Usage()
        known = {t.value for t in LLMTask}
        for name in settings.tasks:
            if name not in known:
                log.warning("llm_unknown_task_override", task=name, known=sorted(known))

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient:
        """The client for ``settings.llm`` (what it learns of servers kept under the home)."""
        return cls(settings.llm, state_path=settings.home / SERVER_NOTES_FILE)

    def streams(self, route: Route) -> bool:
        """Whether ``route``'s server streams, as far as is known (True until one answered a
        streamed request with a whole completion)."""
        return self._servers.streams(route)

    def remember_no_stream(self, route: Route) -> None:
        """Note that ``route``'s server answers streamed requests with one whole completion:
        the next streamed call to it asks without streaming, in this process and the next."""
        self._servers.no_stream(route)

    # -- routing -----------------------------------------------------------------------------

    def route(self, task: str | None = None) -> Route:
        """Where ``task`` goes (``None``: the default route)."""
        return resolve_route(self.settings, task or "")

    def is_configured(self, task: str | None = None) -> bool:
        """Whether ``task`` (``None``: the default) has a provider and model to call."""
        return self.route(task).configured

    def model_for(self, task: str) -> str | None:
        """The model ``task`` uses, or ``None`` when not configured (for cache fingerprints)."""
        route = self.route(task)
        return route.model if route.configured else None

    def provider_for(self, route: Route) -> LLMProvider:
        """The provider ``route``'s calls go through (for :mod:`medlit.llm.probe`)."""
        return self._provider(route)

    @property
    def usage(self) -> Usage:
        """Every request this client has sent, by task (cumulative, all scopes)."""
        return self._usage

    # -- calls -------------------------------------------------------------------------------

    async def complete(
        self,
        task: str,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_logprobs: int | None = None,
    ) -> LLMReply:
        """Chat completion for ``task``; reasoning blocks are stripped from the text.

        ``top_logprobs=N`` asks the server for token logprobs with N alternatives per token
        (``LLMReply.logprobs``; ``None`` when the server does not give them).

        Raises:
            LLMConfigError: no provider/model configured for the task (the message says how).
            LLMRateLimited: still 429 after every retry.
            LLMTimeout: no reply in time after every retry.
            LLMProviderError: any other provider failure.
            LLMOutputError: the model returned no text.
        """
        route = self._configured_route(task)
        sent = await self._send_plain(
            route, _as_messages(messages), temperature, max_tokens, top_logprobs
        )
        text = strip_reasoning(sent.reply.text)
        if not text:
            raise LLMOutputError(
                f"{route.label} returned no text for task {task!r}"
                f" (finish_reason={sent.reply.finish_reason})",
                raw=sent.reply.text,
            )
        return LLMReply(
            text=text,
            raw=sent.reply.text,
            task=str(task),
            model=sent.reply.model or route.model,
            prompt_tokens=sent.reply.prompt_tokens,
            completion_tokens=sent.reply.completion_tokens,
            latency_s=sent.latency_s,
            attempts=sent.attempts,
            finish_reason=sent.reply.finish_reason,
            logprobs=sent.reply.logprobs,
        )

    def stream(
        self,
        task: str,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMStream:
        """A chat completion for ``task`` streamed as text deltas (see :mod:`.streaming`).

        Iterate the returned :class:`LLMStream` for the deltas, then read its ``reply``. The
        first chunk may take ``timeout_s``; after it, ``stream_idle_timeout_s`` of silence
        ends the request (there is no total limit).

        Raises:
            LLMConfigError: at once, when no provider/model is configured for the task.
            LLMRateLimited, LLMTimeout, LLMProviderError, LLMOutputError: while iterating, as
                for ``complete``.
        """
        route = self._configured_route(task)
        return LLMStream(
            self, route, _as_messages(messages), temperature=temperature, max_tokens=max_tokens
        )

    async def complete_json(
        self,
        task: str,
        messages: Messages,
        schema: type[T],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> T:
        """A reply parsed and validated as ``schema`` (a pydantic model).

        The schema goes to the server as ``response_format={"type": "json_schema", ...}``; a
        server that refuses that (400, 422, or a 500 whose body is the refusal, as
        llama-cpp-python sends) gets ``json_object`` with the schema (llama-cpp-python's
        grammar mode), then plain ``json_object``, then a prompt instruction only. Each step
        is taken at once, without retries, and remembered per route. Reasoning blocks, code
        fences and prose around the JSON are removed; an invalid reply gets one repair request
        quoting the validation error.

        Raises:
            LLMOutputError: still invalid after the repair attempt (``.raw`` holds the reply).
            LLMConfigError, LLMRateLimited, LLMTimeout, LLMProviderError: as for ``complete``.
        """
        route = self._configured_route(task)
        base = _as_messages(messages)
        key = (route.provider, route.base_url, route.model)
        mode: FormatMode = self._format_modes.get(
            key, "json_schema" if self.settings.structured_output else "prompt"
        )
        while True:
            prompt = _with_instruction(
                base, json_instruction(schema, include_schema=mode != "json_schema")
            )
            fmt = None if mode == "prompt" else response_format_for(schema, mode)
            try:
                sent = await self._send(route, prompt, fmt, temperature, max_tokens)
                break
            except _FormatRejected as exc:
                mode = _DOWNGRADE.get(mode, "prompt")
                self._format_modes[key] = mode
                log.warning(
                    "llm_response_format_rejected", route=route.label, now=mode, error=str(exc)
                )

        try:
            return validate_reply(sent.reply.text, schema)
        except (JSONExtractionError, PydanticValidationError) as exc:
            problem = describe_error(exc)
            log.warning("llm_json_invalid", task=str(task), route=route.label, error=problem)
        repair = [
            *prompt,
            {"role": "assistant", "content": strip_reasoning(sent.reply.text)},
            {"role": "user", "content": f"{problem}\n{_REPAIR_REQUEST}"},
        ]
        fixed = await self._send(route, repair, fmt, temperature, max_tokens)
        try:
            return validate_reply(fixed.reply.text, schema)
        except (JSONExtractionError, PydanticValidationError) as exc:
            hint = " (cut off: raise max_tokens)" if fixed.reply.finish_reason == "length" else ""
            raise LLMOutputError(
                f"{route.label} gave no valid {schema.__name__} for task {task!r} after one "
                f"repair attempt{hint}: {describe_error(exc)}",
                raw=fixed.reply.text,
            ) from exc

    # -- lifecycle ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every provider's connections."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            await provider.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- internals ---------------------------------------------------------------------------

    def _configured_route(self, task: str) -> Route:
        route = self.route(task)
        if not route.configured:
            raise LLMConfigError(how_to_configure(route))
        return route

    def _provider(self, route: Route) -> LLMProvider:
        provider = self._providers.get(route.endpoint)
        if provider is None:
            factory = self._factories.get(route.provider)
            if factory is None:
                raise LLMConfigError(f"unknown LLM provider {route.provider!r}")
            provider = factory(
                base_url=route.base_url, api_key=route.api_key, timeout_s=self.settings.timeout_s
            )
            self._providers[route.endpoint] = provider
        return provider

    async def _send_plain(
        self,
        route: Route,
        messages: list[ChatMessage],
        temperature: float | None,
        max_tokens: int | None,
        top_logprobs: int | None = None,
    ) -> _Sent:
        try:
            return await self._send(
                route, messages, None, temperature, max_tokens, top_logprobs=top_logprobs
            )
        except _FormatRejected as exc:  # cannot happen without a response_format
            raise LLMProviderError(str(exc)) from exc

    async def _send(
        self,
        route: Route,
        messages: list[ChatMessage],
        response_format: dict[str, object] | None,
        temperature: float | None,
        max_tokens: int | None,
        *,
        top_logprobs: int | None = None,
    ) -> _Sent:
        """One logical request: send, retry by the policy, account every attempt."""
        provider = self._provider(route)
        # Only passed when asked for: a provider registered without the parameter still works.
        extra = {"top_logprobs": top_logprobs} if top_logprobs else {}
        settings = self.settings
        started = time.monotonic()
        attempt = 0
        limit = settings.timeout_s
        while True:
            attempt += 1
            sent_at = time.monotonic()
            try:
                async with asyncio.timeout(limit):
                    reply = await provider._chat(
                        route,
                        messages,
                        response_format=response_format,
                        temperature=route.temperature if temperature is None else temperature,
                        max_tokens=route.max_tokens if max_tokens is None else max_tokens,
                        timeout_s=limit,
                        **extra,
                    )
            except TimeoutError:
                failure = ProviderFailure(f"no reply within {limit:g} s", kind="timeout")
                limit = min(limit * 2, settings.timeout_s * TIMEOUT_GROWTH)
            except ProviderFailure as exc:
                failure = exc
            except asyncio.CancelledError:
                # The caller gave up (a verification past its time limit, a cancelled job):
                # the request was sent and may be billed, so it counts, as a failed call.
                self._account(route, None, time.monotonic() - sent_at)
                raise
            else:
                self._account(route, reply, time.monotonic() - sent_at)
                return _Sent(reply, attempt, time.monotonic() - started)
            self._account(route, None, time.monotonic() - sent_at)

            if response_format is not None and failure.rejects_format:
                # Whatever the status (400, 422, or llama-cpp-python's 500), retrying the same
                # format cannot help: fall back at once, without spending the retry budget.
                raise _FormatRejected(str(failure))
            await asyncio.sleep(self._retry_wait(route, failure, attempt))

    def _retry_wait(
        self, route: Route, failure: ProviderFailure, attempt: int, *, streamed: bool = False
    ) -> float:
        """Seconds to wait before trying ``route`` again after ``failure`` (logged), or raise
        when no retry may help: unreachable, a bad request, tries spent, too long a wait."""
        if failure.kind == "unreachable":
            raise unreachable_llm(route, failure) from failure
        if failure.kind in ("bad_request", "fatal"):
            raise LLMProviderError(f"{route.label} (task {route.task}): {failure}") from failure
        wait = self._delay(failure, attempt)
        if attempt > self.settings.max_retries or wait is None:
            raise _exhausted(route, failure, attempt) from failure
        log.warning(
            "llm_retry",
            task=route.task,
            route=route.label,
            kind=failure.kind,
            attempt=attempt,
            wait_s=round(wait, 3),
            **({"streamed": True} if streamed else {}),
        )
        return wait

    def _delay(self, failure: ProviderFailure, attempt: int) -> float | None:
        """Seconds to wait before the next try; ``None``: the wait asked for is too long."""
        if failure.kind == "rate_limit" and failure.retry_after is not None:
            if failure.retry_after > self.settings.backoff_max_s:
                return None
            return failure.retry_after
        backoff: float = min(
            self.settings.backoff_base_s * 2.0 ** (attempt - 1), self.settings.backoff_max_s
        )
        # Equal jitter: concurrent callers that failed together do not retry in lockstep.
        return backoff * (0.5 + random.random() / 2)

    def _account(self, route: Route, reply: ProviderReply | None, latency_s: float) -> None:
        prompt_tokens = reply.prompt_tokens if reply else 0
        completion_tokens = reply.completion_tokens if reply else 0
        cost = 0.0
        price = self.settings.prices.get(route.model or "")
        if price is None and reply is not None and reply.model:
            price = self.settings.prices.get(reply.model)
        if price is not None:
            cost = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
        record_llm(
            route.task,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency_s,
            cost_usd=cost,
            failed=reply is None,
        )
        total = self._usage.llm.setdefault(route.task, LLMTaskUsage())
        total.calls += 1
        total.failed += int(reply is None)
        total.prompt_tokens += prompt_tokens
        total.completion_tokens += completion_tokens
        total.latency_s += latency_s
        total.cost_usd += cost


def unreachable_llm(route: Route, failure: ProviderFailure) -> LLMUnreachable:
    """The error for a server that does not resolve or refuses connections (not retried)."""
    return LLMUnreachable(f"the language model is unreachable: {failure} ({route.label})")


def _exhausted(route: Route, failure: ProviderFailure, attempts: int) -> Exception:
    where = f"{route.label} (task {route.task}) after {attempts} attempt(s)"
    if failure.kind == "rate_limit":
        if failure.retry_after is not None:
            where += f"; the server asks to wait {failure.retry_after:g} s"
        return LLMRateLimited(f"rate limited by {where}: {failure}")
    if failure.kind == "timeout":
        return LLMTimeout(f"timed out: {where}: {failure}")
    return LLMProviderError(f"{where}: {failure}")


def _as_messages(messages: Messages) -> list[ChatMessage]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages)


def _with_instruction(messages: list[ChatMessage], instruction: str) -> list[ChatMessage]:
    """Add the JSON instruction to the system message (some templates allow only one, first)."""
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content', '')}\n\n{instruction}".strip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]
