"""What one LLM server can do, found by asking it: ``medlit doctor``'s LLM checks.

Users of local models find out only by trial that their server lacks JSON schema mode or
streaming. :func:`probe_route` sends a handful of small requests to a route's server, straight
through its provider (no retries, no format fallback: the point is to see what the server does
itself), and reports:

- reachable: the server answers at all (``unreachable`` when nothing listens or the name does
  not resolve, with the reason);
- model found: the server answers a tiny completion asked under the route's model name; a
  name ``GET /models`` does not list passes when it is answered (llama.cpp's server lists its
  one model by file path and serves it under any name), and fails when it is refused;
- JSON mode: ``json_schema`` taken, else ``json_object``, else neither (then medlit asks for
  JSON in the prompt only, and a small model's JSON breaks more often);
- streaming: a streamed request is answered with events, not one whole body;
- logprobs: token log-probabilities come back when asked for (the verdict read and the cache's
  verified band use them);
- seed: two replies sampled at temperature 1 with the same seed are the same;
- speed: prompt and generation tokens per second, from the server's token counts and the wall
  time (a prompt led by a random word, so no server cache serves it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from medlit.llm.base import LLMProvider, ProviderFailure, ProviderReply
from medlit.llm.jsonout import response_format_for, validate_reply
from medlit.llm.tasks import Route

__all__ = ["JsonMode", "RouteProbe", "probe_route"]

JsonMode = Literal["json_schema", "json_object", "none"]

#: Sentences repeated to make the prompt whose reading is timed (about 300 tokens).
_FILLER = (
    "Aspirin lowered the risk of a first stroke in adults in a randomised trial of ten years. "
) * 18
_SEED = 4242


class _Probe(BaseModel):
    """The tiny object the JSON modes are tried with."""

    answer: Literal["yes", "no"]


@dataclass
class RouteProbe:
    """What a route's server did when asked (``None``: not found out)."""

    label: str
    tasks: list[str] = field(default_factory=list)
    reachable: bool = False
    error: str | None = None
    model_found: bool | None = None
    #: Whether ``GET /models`` lists the route's model (None: the provider lists none).
    model_listed: bool | None = None
    models: list[str] = field(default_factory=list)
    json_mode: JsonMode | None = None
    streams: bool | None = None
    logprobs: bool | None = None
    seed: bool | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None


async def probe_route(
    provider: LLMProvider, route: Route, *, timeout_s: float = 60.0, tasks: list[str] | None = None
) -> RouteProbe:
    """Probe ``route``'s server through ``provider`` (a few short requests; see the module)."""
    found = RouteProbe(label=route.label, tasks=list(tasks or [route.task]))
    try:
        models = await asyncio.wait_for(provider.list_models(), timeout_s)
    except (ProviderFailure, TimeoutError) as exc:
        found.error = _why(exc)
        return found
    if models is not None:
        found.models = models
        found.model_listed = route.model in models
    try:
        # Asked under the configured name: what the server serves is what it answers, not
        # what it lists.
        await _chat(provider, route, "Reply with the word OK.", timeout_s, max_tokens=4)
    except (ProviderFailure, TimeoutError) as exc:
        found.error = _why(exc)
        refused = isinstance(exc, ProviderFailure) and exc.kind in ("fatal", "bad_request")
        if found.model_listed is False and refused:
            # It listed its models, so it is there; it refused this one.
            found.reachable, found.model_found = True, False
        return found
    found.reachable = True
    found.model_found = True
    found.json_mode = await _json_mode(provider, route, timeout_s)
    found.streams = await _streams(provider, route, timeout_s)
    found.logprobs = await _logprobs(provider, route, timeout_s)
    found.seed = await _seed(provider, route, timeout_s)
    await _speed(provider, route, timeout_s, found)
    return found


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no reply in time"
    return str(exc)


async def _chat(
    provider: LLMProvider,
    route: Route,
    prompt: str,
    timeout_s: float,
    *,
    max_tokens: int,
    response_format: dict[str, object] | None = None,
    top_logprobs: int | None = None,
    temperature: float = 0.0,
) -> ProviderReply:
    extra = {"top_logprobs": top_logprobs} if top_logprobs else {}
    return await asyncio.wait_for(
        provider._chat(
            route,
            [{"role": "user", "content": prompt}],
            response_format=response_format,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout_s=timeout_s,
            **extra,
        ),
        timeout_s,
    )


async def _json_mode(provider: LLMProvider, route: Route, timeout_s: float) -> JsonMode:
    """The strictest JSON mode the server takes and answers validly in."""
    prompt = 'Is aspirin a drug? Reply as JSON: {"answer": "yes"} or {"answer": "no"}.'
    mode: Literal["json_schema", "json_object"]
    for mode in ("json_schema", "json_object"):
        try:
            reply = await _chat(
                provider,
                route,
                prompt,
                timeout_s,
                max_tokens=24,
                response_format=response_format_for(_Probe, mode),
            )
            validate_reply(reply.text, _Probe)
        except (ProviderFailure, TimeoutError, ValueError):
            continue
        return mode
    return "none"


async def _streams(provider: LLMProvider, route: Route, timeout_s: float) -> bool | None:
    deltas = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for event in provider._chat_stream(
                route,
                [{"role": "user", "content": "Count from 1 to 5."}],
                temperature=0.0,
                max_tokens=16,
                timeout_s=timeout_s,
            ):
                if isinstance(event, ProviderReply):
                    return event.streamed and deltas > 1
                deltas += 1
    except (ProviderFailure, TimeoutError):
        return False
    return None


async def _logprobs(provider: LLMProvider, route: Route, timeout_s: float) -> bool | None:
    try:
        reply = await _chat(
            provider,
            route,
            "Is aspirin a drug? Yes or No?",
            timeout_s,
            max_tokens=1,
            top_logprobs=3,
        )
    except (ProviderFailure, TimeoutError):
        return None
    return reply.logprobs is not None


async def _seed(provider: LLMProvider, route: Route, timeout_s: float) -> bool | None:
    """Whether two replies sampled at temperature 1 under one seed are the same."""
    seeded = dataclasses.replace(route, seed=_SEED)
    prompt = "Write five unusual words, nothing else."
    try:
        first, second = [
            await _chat(provider, seeded, prompt, timeout_s, max_tokens=16, temperature=1.0)
            for _ in range(2)
        ]
    except (ProviderFailure, TimeoutError):
        return None
    return first.text == second.text


async def _speed(provider: LLMProvider, route: Route, timeout_s: float, found: RouteProbe) -> None:
    """Prompt tokens/s from a long prompt read with one token out; generation tokens/s from a
    short prompt with many out, less the time its prompt took."""
    nonce = secrets.token_hex(4)  # a new first word: no prompt cache serves it
    try:
        started = time.monotonic()
        read = await _chat(provider, route, f"{nonce}. {_FILLER}Reply OK.", timeout_s, max_tokens=1)
        read_s = time.monotonic() - started
        started = time.monotonic()
        written = await _chat(
            provider, route, f"{nonce}. Count from 1 to 60.", timeout_s, max_tokens=48
        )
        written_s = time.monotonic() - started
    except (ProviderFailure, TimeoutError):
        return
    if read.prompt_tokens and read_s > 0:
        found.prompt_tokens_per_s = read.prompt_tokens / read_s
    if written.completion_tokens > 1 and found.prompt_tokens_per_s:
        reading = written.prompt_tokens / found.prompt_tokens_per_s
        writing = max(written_s - reading, 1e-3)
        found.generation_tokens_per_s = written.completion_tokens / writing
