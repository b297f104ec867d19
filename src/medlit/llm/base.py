"""The provider seam: one private method per provider; the client owns everything else.

A provider (``openai_provider``, ``hf_provider``) sends ONE chat request and either returns a
:class:`ProviderReply` or raises :class:`ProviderFailure` whose ``kind`` tells the client what
to do (retry after a wait, retry now, downgrade the response format, or give up). Providers
never retry, never sleep and never count: :class:`medlit.llm.client.LLMClient` does that, so
there is exactly one retry policy and one place where calls are accounted.

``ProviderFailure`` never leaves the client; callers only see :mod:`medlit.errors`.
"""

from __future__ import annotations

import email.utils
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from medlit.llm.tasks import Route

__all__ = [
    "ChatMessage",
    "FailureKind",
    "LLMProvider",
    "ProviderFailure",
    "ProviderReply",
    "StreamEvent",
    "TokenLogprob",
    "parse_logprobs",
    "parse_retry_after",
]

ChatMessage = Mapping[str, Any]
"""An OpenAI-style chat message: ``{"role": "system"|"user"|"assistant", "content": str}``."""

FailureKind = Literal["rate_limit", "timeout", "unavailable", "unreachable", "bad_request", "fatal"]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log probability and the most likely alternatives.

    Attributes:
        token: the token as the server spells it.
        logprob: its natural-log probability.
        top: ``(token, logprob)`` of the most likely tokens at that position, best first.
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ProviderReply:
    """What one successful chat request returned.

    ``logprobs`` is set only when they were asked for and the server sent them. ``streamed``
    is False when a streamed request was answered with the whole completion in one body (a
    server that does not stream).
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    streamed: bool = True


def parse_logprobs(content: Any) -> tuple[TokenLogprob, ...] | None:
    """Token logprobs from an OpenAI-format ``choice.logprobs.content`` list (SDK objects or
    dicts); ``None`` when the server sent none."""
    if not content:
        return None

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)

    tokens = []
    for item in content:
        top = tuple(
            (str(get(alt, "token")), float(get(alt, "logprob")))
            for alt in (get(item, "top_logprobs") or ())
        )
        tokens.append(TokenLogprob(str(get(item, "token")), float(get(item, "logprob")), top))
    return tuple(tokens)


# Words of a refusal (validation error, unsupported feature), not of a crash.
_REFUSAL_CUES = (
    "validation error",
    "input should be",
    "literal_error",
    "not supported",
    "unsupported",
    "not permitted",
    "invalid",
    "unknown",
    "expected",
)


StreamEvent = str | ProviderReply
"""What a streamed request yields: text deltas, then one :class:`ProviderReply` (whole text,
usage when the server reports it, finish reason)."""


class ProviderFailure(Exception):
    """One chat request failed; ``kind`` drives the client's retry policy.

    Kinds:
        rate_limit: 429; retry after ``retry_after`` seconds (or the backoff).
        timeout: no answer in time; retry.
        unavailable: 5xx, 408/409 or a connection error; retry.
        unreachable: the host does not resolve or refuses connections; no retry can help
            (the message says which host and why).
        bad_request: 400 or 422; maybe the ``response_format`` was rejected
            (``rejects_format``, which also recognises a 500 that is really such a refusal).
        fatal: authentication, unknown model, anything retrying cannot fix.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def rejects_format(self) -> bool:
        """Whether the server refused the request's ``response_format`` (so a plainer one may work).

        Servers say so in different ways: OpenAI and vLLM with a 400, FastAPI-based servers with
        a 422 validation error, llama-cpp-python with a **500** whose body is the pydantic
        validation error ("Input should be 'text' or 'json_object'"), Ollama with a 500
        "invalid JSON schema in format". A 5xx counts only when its body names the format and
        reads like a refusal, so a server that merely crashed is still retried.
        """
        if self.kind == "bad_request" or self.status in (400, 422):
            return self.mentions_format
        if self.status is not None and self.status >= 500 and self.mentions_format:
            text = str(self).lower()
            return any(cue in text for cue in _REFUSAL_CUES)
        return False

    @property
    def mentions_format(self) -> bool:
        """Whether a 400's message is about structured output (so a plainer format may work)."""
        text = str(self).lower()
        return any(
            cue in text
            for cue in (
                "response_format",
                "response format",
                "json_schema",
                "json_object",
                "json schema",
                "structured",
                "grammar",
                "guided",
            )
        )


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


class LLMProvider(ABC):
    """A way to reach chat models. Subclasses implement :meth:`_chat` (and :meth:`aclose`).

    A provider instance is bound to one endpoint (provider kind, base URL, key) and may serve
    many routes (models) on it.
    """

    name: str = "provider"

    @abstractmethod
    async def _chat(
        self,
        route: Route,
        messages: Sequence[ChatMessage],
        *,
        response_format: dict[str, Any] | None,
        temperature: float,
        max_tokens: int,
        timeout_s: float,
        top_logprobs: int | None = None,
    ) -> ProviderReply:
        """Send one chat-completions request; raise :class:`ProviderFailure` on any failure.

        ``top_logprobs``: when set, ask for token logprobs with that many alternatives per
        token (``ProviderReply.logprobs``; ``None`` there if the server ignores the request).
        """

    async def _chat_stream(
        self,
        route: Route,
        messages: Sequence[ChatMessage],
        *,
        temperature: float,
        max_tokens: int,
        timeout_s: float,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Send one streamed request: yield text deltas as they arrive, then the whole reply.

        The default sends an ordinary request and yields its text as one delta (a provider
        that can stream overrides this). Raise :class:`ProviderFailure` on any failure.
        """
        reply = await self._chat(
            route,
            messages,
            response_format=None,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout_s=timeout_s,
        )
        if reply.text:
            yield reply.text
        yield reply

    async def list_models(self) -> list[str] | None:
        """The models the endpoint serves (``GET /models``), or ``None`` where the provider
        lists none. Raise :class:`ProviderFailure` when the endpoint cannot be reached."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook, providers may hold nothing
        """Release connections."""
