"""Streamed completions: the answer's text as the model writes it, under an idle-read timeout.

A slow local model may take minutes to write an answer while sending a token every tenth of a
second; one total timeout would cut it off. A streamed request is instead given
``settings.timeout_s`` for its first chunk (the server reads the whole prompt first) and then
``settings.stream_idle_timeout_s`` between two chunks, with no total limit. Retries follow the
client's policy, but only before any text was handed out: text already shown cannot be taken
back, so a stream that breaks half-way raises.

Usage::

    stream = llm.stream("answer", messages)
    async for delta in stream:
        print(delta, end="")
    reply = stream.reply            # an LLMReply: the whole text, usage, attempts

Usage is accounted like any request; when the server sends no usage (llama-cpp-python does
not, even when asked) the completion tokens are counted as the chunks received and the prompt
tokens estimated at four characters a token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from medlit.errors import LLMOutputError, LLMProviderError
from medlit.llm.base import ChatMessage, ProviderFailure, ProviderReply
from medlit.llm.jsonout import strip_reasoning
from medlit.log import get_logger

if TYPE_CHECKING:
    from medlit.llm.client import LLMClient, LLMReply
    from medlit.llm.tasks import Route

__all__ = ["LLMStream"]

log = get_logger("llm")


class LLMStream:
    """One streamed completion: iterate it once for the text deltas, then read :attr:`reply`."""

    def __init__(
        self,
        client: LLMClient,
        route: Route,
        messages: list[ChatMessage],
        *,
        temperature: float | None,
        max_tokens: int | None,
    ) -> None:
        self._client = client
        self._route = route
        self._messages = messages
        self._temperature = route.temperature if temperature is None else temperature
        self._max_tokens = route.max_tokens if max_tokens is None else max_tokens
        self._reply: LLMReply | None = None
        self._started = False

    @property
    def reply(self) -> LLMReply:
        """The whole reply, once the iteration has finished.

        Raises:
            RuntimeError: the stream has not been read to its end.
        """
        if self._reply is None:
            raise RuntimeError("read the stream to its end before asking for its reply")
        return self._reply

    def __aiter__(self) -> AsyncIterator[str]:
        if self._started:
            raise RuntimeError("an LLMStream can be iterated only once")
        self._started = True
        return self._run()

    async def _run(self) -> AsyncIterator[str]:
        client, route, settings = self._client, self._route, self._client.settings
        if not client.streams(route):
            # Known not to stream: one plain request, its text handed out whole.
            whole = await client.complete(
                route.task, self._messages, temperature=self._temperature,
                max_tokens=self._max_tokens,
            )  # fmt: skip
            self._reply = whole
            yield whole.text
            return
        provider = client._provider(route)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            sent_at = time.monotonic()
            handed_out = 0
            chunks = 0
            final: ProviderReply | None = None
            events = provider._chat_stream(
                route,
                self._messages,
                temperature=self._temperature,
                max_tokens=self._max_tokens,
                # The SDK's own read timeout must not fire before the idle timer does.
                timeout_s=max(settings.timeout_s, settings.stream_idle_timeout_s) + 5.0,
            )
            try:
                while final is None:
                    wait = settings.timeout_s if chunks == 0 else settings.stream_idle_timeout_s
                    try:
                        async with asyncio.timeout(wait):
                            event = await anext(events)
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        what = "first chunk" if chunks == 0 else "next chunk"
                        raise ProviderFailure(
                            f"no {what} within {wait:g} s", kind="timeout"
                        ) from None
                    if isinstance(event, ProviderReply):
                        final = event
                        break
                    chunks += 1
                    if event:
                        handed_out += 1
                        yield event
            except ProviderFailure as failure:
                client._account(route, None, time.monotonic() - sent_at)
                await asyncio.sleep(self._retry_delay(failure, attempt, handed_out))
                continue
            except asyncio.CancelledError:
                client._account(route, None, time.monotonic() - sent_at)  # sent: it counts
                raise
            finally:
                await events.aclose()

            self._finish(final, attempt, handed_out, sent_at, started)
            return

    def _retry_delay(self, failure: ProviderFailure, attempt: int, handed_out: int) -> float:
        """How long to wait before trying again after ``failure``, or raise when no retry may."""
        from medlit.llm.client import _exhausted

        if handed_out:
            # Part of the answer is already on someone's screen: no silent retry.
            raise _exhausted(self._route, failure, attempt) from failure
        return self._client._retry_wait(self._route, failure, attempt, streamed=True)

    def _finish(
        self,
        final: ProviderReply | None,
        attempt: int,
        handed_out: int,
        sent_at: float,
        started: float,
    ) -> None:
        """Account for the finished stream and keep its reply (or raise: cut off, empty)."""
        from medlit.llm.client import LLMReply

        client, route = self._client, self._route
        if final is None or final.finish_reason is None:
            # The stream ended without saying why: cut off (llama-cpp-python interrupts a
            # streamed request when another arrives, unless --interrupt_requests false).
            client._account(route, None, time.monotonic() - sent_at)
            raise LLMProviderError(
                f"{route.label} (task {route.task}): the streamed reply was cut off after "
                f"{handed_out} chunk(s), before the model finished"
            )
        if not final.streamed:
            client.remember_no_stream(route)
        final = _with_usage(final, self._messages, handed_out)
        client._account(route, final, time.monotonic() - sent_at)
        text = strip_reasoning(final.text)
        if not text:
            raise LLMOutputError(
                f"{route.label} returned no text for task {route.task!r}"
                f" (finish_reason={final.finish_reason})",
                raw=final.text,
            )
        self._reply = LLMReply(
            text=text,
            raw=final.text,
            task=str(route.task),
            model=final.model or route.model,
            prompt_tokens=final.prompt_tokens,
            completion_tokens=final.completion_tokens,
            latency_s=time.monotonic() - started,
            attempts=attempt,
            finish_reason=final.finish_reason,
        )


def _with_usage(
    reply: ProviderReply | None, messages: list[ChatMessage], deltas: int
) -> ProviderReply:
    """The reply with usage filled in where the server sent none (see the module docstring)."""
    reply = reply or ProviderReply(text="")
    if reply.prompt_tokens or reply.completion_tokens:
        return reply
    prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
    return ProviderReply(
        text=reply.text,
        prompt_tokens=prompt_chars // 4,
        completion_tokens=deltas,
        model=reply.model,
        finish_reason=reply.finish_reason,
    )
