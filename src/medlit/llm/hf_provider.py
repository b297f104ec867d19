"""The Hugging Face Inference API, through ``huggingface_hub.AsyncInferenceClient``.

With no ``base_url`` the model id (``meta-llama/Llama-3.1-8B-Instruct``) is served by whichever
Inference Provider Hugging Face routes it to; with a ``base_url`` (a dedicated Inference
Endpoint, or a TGI server) requests go to ``{base_url}/v1/chat/completions``. The token is the
route's ``api_key`` or, when unset, the one ``huggingface_hub`` finds itself (``HF_TOKEN``, the
cached login). Every ``huggingface_hub`` exception is translated into a :class:`ProviderFailure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from medlit.llm.base import (
    ChatMessage,
    LLMProvider,
    ProviderFailure,
    ProviderReply,
    parse_logprobs,
    parse_retry_after,
)
from medlit.llm.tasks import Route
from medlit.reachability import unreachable_reason

if TYPE_CHECKING:
    from huggingface_hub import AsyncInferenceClient

__all__ = ["HFProvider"]


class HFProvider(LLMProvider):
    """Chat completions through the Hugging Face Inference API (or a TGI endpoint)."""

    name = "hf"

    def __init__(self, *, base_url: str | None, api_key: str | None, timeout_s: float) -> None:
        """Create the client (``huggingface_hub`` is imported here, not at module import).

        Args:
            base_url: an Inference Endpoint / TGI URL, or ``None`` for HF's routing.
            api_key: the HF token (``hf_...``); ``None`` lets ``huggingface_hub`` look it up.
            timeout_s: per-request timeout handed to the client.
        """
        from huggingface_hub import AsyncInferenceClient

        root = base_url
        if root and root.rstrip("/").endswith("/v1"):
            # The client appends /v1/chat/completions itself; accept OpenAI-style URLs too.
            root = root.rstrip("/")[: -len("/v1")]
        self._client: AsyncInferenceClient = AsyncInferenceClient(
            base_url=root, api_key=api_key, timeout=timeout_s
        )

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
        from huggingface_hub.errors import (
            HfHubHTTPError,
            InferenceTimeoutError,
            OfflineModeIsEnabled,
        )

        try:
            output = await self._client.chat_completion(  # type: ignore[misc]
                [dict(m) for m in messages],
                model=route.model,
                temperature=temperature,
                max_tokens=max_tokens,
                # The OpenAI-style dict is accepted at runtime (and turned into TGI's grammar
                # form for TGI endpoints); the stubs only name huggingface_hub's dataclasses.
                response_format=response_format,  # type: ignore[arg-type]
                logprobs=True if top_logprobs else None,
                top_logprobs=top_logprobs or None,
                seed=route.seed,
            )
        except InferenceTimeoutError as exc:
            raise ProviderFailure(f"timed out: {exc}", kind="timeout") from exc
        except OfflineModeIsEnabled as exc:
            raise ProviderFailure(
                "huggingface_hub is in offline mode (HF_HUB_OFFLINE=1): unset it to use the "
                "hf provider",
                kind="fatal",
            ) from exc
        except HfHubHTTPError as exc:
            raise _http_failure(exc) from exc
        except (ConnectionError, OSError) as exc:
            # httpx transport errors subclass OSError in huggingface_hub's HTTP stack.
            reason = unreachable_reason(exc)
            if reason is not None:
                raise ProviderFailure(f"the HF Inference API {reason}", kind="unreachable") from exc
            raise ProviderFailure(
                f"cannot reach the HF Inference API: {exc}", kind="unavailable"
            ) from exc
        except ValueError as exc:  # unknown provider/model mapping, bad arguments
            raise ProviderFailure(f"{type(exc).__name__}: {exc}", kind="fatal") from exc

        if not output.choices:
            return ProviderReply(text="", model=output.model)
        choice = output.choices[0]
        usage = output.usage
        return ProviderReply(
            text=choice.message.content or "",
            prompt_tokens=int(usage.prompt_tokens) if usage else 0,
            completion_tokens=int(usage.completion_tokens) if usage else 0,
            model=output.model,
            finish_reason=choice.finish_reason,
            logprobs=parse_logprobs(choice.logprobs.content) if choice.logprobs else None,
        )

    async def aclose(self) -> None:
        """Close the client's HTTP session."""
        await self._client.close()


def _http_failure(exc: Any) -> ProviderFailure:
    """Translate an ``HfHubHTTPError`` by its status code."""
    response = exc.response
    status = int(response.status_code) if response is not None else 0
    detail = getattr(exc, "server_message", None) or (response.text if response is not None else "")
    message = f"HTTP {status}: {detail or exc}"
    if status == 429:
        headers = dict(response.headers) if response is not None else {}
        return ProviderFailure(
            message, kind="rate_limit", status=status, retry_after=parse_retry_after(headers)
        )
    if status in (408, 409) or status >= 500:
        return ProviderFailure(message, kind="unavailable", status=status)
    if status in (400, 422):
        return ProviderFailure(message, kind="bad_request", status=status)
    return ProviderFailure(message, kind="fatal", status=status)
