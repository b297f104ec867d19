"""Any OpenAI-compatible chat-completions server, through the official ``openai`` SDK.

OpenAI itself, vLLM, Ollama (``http://localhost:11434/v1``), llama.cpp's server, OpenRouter, the
Hugging Face router: they all take ``POST {base_url}/chat/completions``. The SDK's own retries
are disabled (``max_retries=0``) so that :class:`~medlit.llm.client.LLMClient`'s policy is the
only one, and every ``openai`` exception is translated into a :class:`ProviderFailure` here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

from medlit.errors import LLMConfigError
from medlit.llm.base import (
    ChatMessage,
    LLMProvider,
    ProviderFailure,
    ProviderReply,
    StreamEvent,
    parse_logprobs,
    parse_retry_after,
)
from medlit.llm.tasks import OPENAI_DEFAULT_BASE_URL, Route
from medlit.reachability import host_of, unreachable_reason

if TYPE_CHECKING:
    import openai
    from openai import AsyncOpenAI

__all__ = ["OpenAIProvider"]

# Local servers (Ollama, vLLM, llama.cpp) need no key, but the SDK insists on one; a
# placeholder also stops the SDK from picking up OPENAI_API_KEY and sending it elsewhere.
_NO_KEY = "not-needed"


class OpenAIProvider(LLMProvider):
    """Chat completions on one OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(self, *, base_url: str | None, api_key: str | None, timeout_s: float) -> None:
        """Create the SDK client (``openai`` is imported here: it is slow to import).

        Args:
            base_url: server base URL ending in ``/v1``; ``None`` means OpenAI's.
            api_key: the key; ``None`` sends a placeholder (or, for OpenAI's own server, lets
                the SDK read ``OPENAI_API_KEY``).
            timeout_s: per-request timeout handed to the SDK.
        """
        import openai

        url = base_url or OPENAI_DEFAULT_BASE_URL
        key = api_key
        if key is None and "api.openai.com" not in url:
            key = _NO_KEY
        try:
            self._client: AsyncOpenAI = openai.AsyncOpenAI(
                base_url=url, api_key=key, timeout=timeout_s, max_retries=0
            )
        except openai.OpenAIError as exc:  # e.g. no key for api.openai.com
            raise LLMConfigError(
                f"cannot create the OpenAI client for {url}: {exc} (set MEDLIT_LLM_API_KEY)"
            ) from exc

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
        import openai

        kwargs: dict[str, Any] = {}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = top_logprobs
        if route.seed is not None:
            kwargs["seed"] = route.seed
        try:
            completion = await self._client.chat.completions.create(
                model=route.model or "",
                messages=[dict(m) for m in messages],  # type: ignore[misc]
                temperature=temperature,
                max_tokens=max_tokens,
                timeout=timeout_s,
                **kwargs,
            )
        except openai.OpenAIError as exc:
            raise _sdk_failure(exc, route) from exc

        if not completion.choices:
            return ProviderReply(text="", model=completion.model, finish_reason=None)
        choice = completion.choices[0]
        usage = completion.usage
        return ProviderReply(
            text=choice.message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            model=completion.model,
            finish_reason=choice.finish_reason,
            logprobs=parse_logprobs(choice.logprobs.content) if choice.logprobs else None,
        )

    async def _chat_stream(
        self,
        route: Route,
        messages: Sequence[ChatMessage],
        *,
        temperature: float,
        max_tokens: int,
        timeout_s: float,
    ) -> AsyncGenerator[StreamEvent, None]:
        import openai

        parts: list[str] = []
        prompt_tokens = completion_tokens = 0
        model: str | None = None
        finish: str | None = None
        try:
            raw = await self._client.chat.completions.with_raw_response.create(  # type: ignore[call-overload]
                model=route.model or "",
                messages=[dict(m) for m in messages],
                temperature=temperature,
                max_tokens=max_tokens,
                timeout=timeout_s,
                stream=True,
                # OpenAI, vLLM and Ollama then send usage in a last chunk; llama-cpp-python
                # takes the option but sends none (the client estimates it).
                stream_options={"include_usage": True},
                **({"seed": route.seed} if route.seed is not None else {}),
            )
            if "text/event-stream" not in raw.headers.get("content-type", ""):
                # A server that does not stream answered with the whole completion: it is the
                # answer (asking again without streaming would be a second, paid call).
                whole = _whole_reply(await raw.http_response.aread())
                if whole.text:
                    yield whole.text
                yield whole
                return
            stream = raw.parse()
            async with stream:
                async for chunk in stream:
                    model = chunk.model or model
                    if chunk.usage is not None:
                        prompt_tokens = chunk.usage.prompt_tokens
                        completion_tokens = chunk.usage.completion_tokens
                    choice = chunk.choices[0] if chunk.choices else None
                    if choice is not None:
                        finish = choice.finish_reason or finish
                    delta = (choice.delta.content if choice and choice.delta else None) or ""
                    parts.append(delta)
                    yield delta  # "" too: the server is alive (the idle timer restarts)
        except openai.OpenAIError as exc:
            raise _sdk_failure(exc, route) from exc
        yield ProviderReply(
            text="".join(parts),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            model=model,
            finish_reason=finish,
        )

    async def list_models(self) -> list[str] | None:
        """The ids ``GET {base_url}/models`` lists (aliases too, as llama.cpp gives them)."""
        import openai

        route = Route("models", "openai", str(self._client.base_url), None, None, 0.0, 1)
        try:
            page = await self._client.models.list()
        except openai.OpenAIError as exc:
            raise _sdk_failure(exc, route) from exc
        names: list[str] = []
        for model in page.data:
            names.append(model.id)
            names += [str(a) for a in (getattr(model, "aliases", None) or [])]
        return names

    async def aclose(self) -> None:
        """Close the SDK's connection pool."""
        await self._client.close()


def _whole_reply(body: bytes) -> ProviderReply:
    """The reply of a streamed request answered with one ``chat.completion`` JSON body."""
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    try:
        completion = ChatCompletion.model_validate_json(body)
    except ValidationError as exc:
        raise ProviderFailure(
            f"the server answered a streamed request with neither events nor a completion: "
            f"{body[:200]!r}",
            kind="fatal",
        ) from exc
    choice = completion.choices[0] if completion.choices else None
    usage = completion.usage
    return ProviderReply(
        text=(choice.message.content or "") if choice else "",
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        model=completion.model,
        finish_reason=choice.finish_reason if choice else None,
        streamed=False,
    )


def _sdk_failure(exc: openai.OpenAIError, route: Route) -> ProviderFailure:
    """Translate any error of the SDK (a plain or a streamed request) for the retry policy."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ProviderFailure(f"timed out: {exc}", kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        reason = unreachable_reason(exc)
        if reason is not None:
            where = host_of(route.base_url or OPENAI_DEFAULT_BASE_URL)
            return ProviderFailure(f"{where} {reason}", kind="unreachable")
        return ProviderFailure(
            f"cannot reach {route.base_url or OPENAI_DEFAULT_BASE_URL}: {exc}", kind="unavailable"
        )
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc)
    return ProviderFailure(f"{type(exc).__name__}: {exc}", kind="fatal")  # validation and the like


def _status_failure(exc: openai.APIStatusError) -> ProviderFailure:
    """Translate an ``openai.APIStatusError`` (any HTTP error status)."""
    status = exc.status_code
    message = exc.message  # "Error code: 429 - <server message>"
    if " - " not in message and exc.body:
        # No OpenAI-style "message" member (FastAPI's 422 {"detail": [...]}, vLLM's own
        # shape): keep the body, it is what says which parameter was refused.
        message += f" - {str(exc.body)[:500]}"
    if status == 429:
        headers = dict(exc.response.headers) if exc.response is not None else {}
        return ProviderFailure(
            message, kind="rate_limit", status=status, retry_after=parse_retry_after(headers)
        )
    if status in (408, 409) or status >= 500:
        return ProviderFailure(message, kind="unavailable", status=status)
    if status in (400, 422):
        if exc.param:
            message += f" (param: {exc.param})"
        return ProviderFailure(message, kind="bad_request", status=status)
    return ProviderFailure(message, kind="fatal", status=status)
