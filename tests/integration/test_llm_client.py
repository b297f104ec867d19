"""LLMClient against the fake OpenAI-compatible server on loopback (real HTTP, real SDK)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field

from medlit.config import LLMTaskRoute, Settings
from medlit.errors import (
    LLMConfigError,
    LLMOutputError,
    LLMProviderError,
    LLMRateLimited,
    LLMTimeout,
)
from medlit.llm import LLMClient, LLMTask
from medlit.usage import usage_scope
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    json_schema_of,
    last_user_message,
    schema_name_of,
)


class QueryPlan(BaseModel):
    queries: list[str]
    rationale: str | None = None


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def llm_settings(settings: Settings, server: FakeLLMServer) -> Settings:
    settings.llm.base_url = server.base_url
    settings.llm.model = "fake-small"
    # An ordinary reply on a loaded machine must not time out; the timeout tests set their own.
    settings.llm.timeout_s = 5.0
    settings.llm.max_retries = 2
    return settings


@pytest.fixture
async def client(llm_settings: Settings) -> AsyncIterator[LLMClient]:
    async with LLMClient.from_settings(llm_settings) as llm:
        yield llm


async def test_complete_sends_the_route_and_returns_text(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply("Aspirin lowers the risk.", prompt_tokens=12, completion_tokens=5))
    reply = await client.complete(
        LLMTask.ANSWER, [{"role": "user", "content": "Does aspirin help?"}], temperature=0.0
    )
    assert reply.text == "Aspirin lowers the risk."
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts) == (12, 5, 1)
    request = server.completions[0]
    assert request.model == "fake-small"
    assert request.messages == [{"role": "user", "content": "Does aspirin help?"}]
    assert request.json["temperature"] == 0.0
    assert request.json["max_tokens"] == 1200
    assert request.response_format is None
    assert request.headers["authorization"] == "Bearer not-needed"


async def test_think_blocks_are_stripped_but_raw_is_kept(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue("<think>The user wants a summary.</think>\n\nShort summary.")
    reply = await client.complete("summarize_memory", "summarise")
    assert reply.text == "Short summary."
    assert reply.raw.startswith("<think>")


async def test_429_honours_retry_after(client: LLMClient, server: FakeLLMServer) -> None:
    server.enqueue(Reply.rate_limited(retry_after="0.2"), "ok after waiting")
    started = time.monotonic()
    reply = await client.complete("answer", "q")
    assert reply.text == "ok after waiting"
    assert reply.attempts == 2
    assert [r.status for r in server.completions] == [429, 200]
    gap = server.completions[1].received_at - server.completions[0].received_at
    assert gap >= 0.2, f"retried after {gap:.3f} s, Retry-After said 0.2 s"
    assert time.monotonic() - started >= 0.2


async def test_429_without_retry_after_backs_off_then_gives_up(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(*[Reply.rate_limited(retry_after=None) for _ in range(3)])
    with pytest.raises(LLMRateLimited):
        await client.complete("answer", "q")
    assert len(server.completions) == 3  # 1 + max_retries
    assert server.pending == 0


async def test_retry_after_longer_than_the_cap_fails_fast(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply.rate_limited(retry_after="3600"))
    started = time.monotonic()
    with pytest.raises(LLMRateLimited, match="3600"):
        await client.complete("answer", "q")
    # Honouring it would sleep an hour: a minute tells the two apart whatever the load.
    assert time.monotonic() - started < 60
    assert len(server.completions) == 1


async def test_slow_replies_time_out_after_bounded_retries(
    client: LLMClient, server: FakeLLMServer
) -> None:
    client.settings.timeout_s = 0.4
    # Replies a minute late: a client that waited for them would take three minutes.
    server.enqueue(*[Reply.slow(60.0) for _ in range(3)])
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        await client.complete("answer", "q")
    elapsed = time.monotonic() - started
    assert len(server.completions) == 3
    assert 3 * 0.4 <= elapsed < 30


async def test_timeout_then_success(client: LLMClient, server: FakeLLMServer) -> None:
    # Long enough for a loaded machine's ordinary reply, far shorter than the late one.
    client.settings.timeout_s = 3.0
    server.enqueue(Reply.slow(60.0), "in time")
    reply = await client.complete("answer", "q")
    assert (reply.text, reply.attempts) == ("in time", 2)


async def test_a_timed_out_request_is_retried_with_a_longer_limit(
    client: LLMClient, server: FakeLLMServer
) -> None:
    # A seeded request to a slow server writes the same reply at the same pace: an equal limit
    # would cut the retry off too. The second try may take twice as long.
    client.settings.timeout_s = 2.0
    server.enqueue(Reply.slow(3.0, "too late"), Reply.slow(3.0, "written slowly"))
    reply = await client.complete("answer", "q")
    assert (reply.text, reply.attempts) == ("written slowly", 2)


async def test_server_errors_are_retried_then_mapped(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply.server_error(), "recovered")
    assert (await client.complete("answer", "q")).text == "recovered"
    server.enqueue(Reply.error(401, "Incorrect API key provided"))
    with pytest.raises(LLMProviderError, match="Incorrect API key"):
        await client.complete("answer", "q")
    assert [r.status for r in server.completions] == [500, 200, 401]  # 401 is not retried


async def test_unscripted_request_fails_clearly(client: LLMClient, server: FakeLLMServer) -> None:
    with pytest.raises(LLMProviderError, match="no scripted reply"):
        await client.complete("answer", "q")


async def test_complete_json_sends_the_schema(client: LLMClient, server: FakeLLMServer) -> None:
    server.enqueue('{"queries": ["aspirin AND stroke"], "rationale": "MeSH"}')
    plan = await client.complete_json(LLMTask.PLAN_QUERY, "Plan: aspirin and stroke", QueryPlan)
    assert plan.queries == ["aspirin AND stroke"]
    fmt = server.completions[0].response_format
    assert fmt is not None and fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["required"] == ["queries"]
    assert server.completions[0].messages[0]["role"] == "system"


async def test_complete_json_handles_fences_prose_and_think(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(
        '```json\n{"queries": ["a"]}\n```',
        '<think>{"queries": ["draft"]}</think>Here you go: {"queries": ["b"]} Done.',
    )
    assert (await client.complete_json("plan_query", "p", QueryPlan)).queries == ["a"]
    assert (await client.complete_json("plan_query", "p", QueryPlan)).queries == ["b"]
    assert len(server.completions) == 2  # no repair was needed


async def test_invalid_then_fixed_json_repairs_once(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue('{"queries": "aspirin"}', '{"queries": ["aspirin"]}')
    plan = await client.complete_json("plan_query", "p", QueryPlan)
    assert plan.queries == ["aspirin"]
    repair = server.completions[1].messages
    assert repair[-2] == {"role": "assistant", "content": '{"queries": "aspirin"}'}
    assert "queries" in repair[-1]["content"] and "valid list" in repair[-1]["content"]


async def test_invalid_twice_raises_with_raw(client: LLMClient, server: FakeLLMServer) -> None:
    server.enqueue("I am not sure.", "Still no JSON, sorry.")
    with pytest.raises(LLMOutputError) as info:
        await client.complete_json("plan_query", "p", QueryPlan)
    assert info.value.raw == "Still no JSON, sorry."
    assert len(server.completions) == 2


async def test_rejected_response_format_falls_back_and_is_remembered(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.unsupported_response_formats = {"json_schema", "json_object"}
    server.enqueue('{"queries": ["x"]}', '{"queries": ["y"]}')
    assert (await client.complete_json("plan_query", "p", QueryPlan)).queries == ["x"]
    formats = [(r.status, (r.response_format or {}).get("type")) for r in server.completions]
    assert formats == [
        (400, "json_schema"), (400, "json_object"), (400, "json_object"), (200, None)
    ]  # fmt: skip
    assert "schema" in (server.completions[1].response_format or {})  # llama.cpp's grammar mode
    assert "schema" not in (server.completions[2].response_format or {})
    # Without response_format the schema travels in the prompt.
    assert '"queries"' in server.completions[3].messages[0]["content"]
    prompt_schema = json_schema_of(server.completions[3].json)
    assert prompt_schema is not None and prompt_schema["title"] == "QueryPlan"
    assert (await client.complete_json("plan_query", "p", QueryPlan)).queries == ["y"]
    assert server.completions[4].response_format is None  # remembered for this route


class Strict(BaseModel):
    """A schema with a nested model ($defs) and keywords xgrammar refuses (maxLength)."""

    plan: QueryPlan
    note: str = Field("", max_length=200)


@pytest.mark.parametrize(
    ("flavour", "status", "taken"),
    [
        ("llama_cpp", 500, {"type": "json_object", "schema": True}),
        ("ollama", 500, {"type": "json_object", "schema": True}),
        ("vllm", 400, {"type": "json_object", "schema": True}),
        ("fastapi", 422, {"type": "json_object", "schema": True}),
    ],
)
async def test_format_refusals_of_real_servers_fall_back_at_once(
    client: LLMClient, server: FakeLLMServer, flavour: str, status: int, taken: dict[str, Any]
) -> None:
    server.flavour = flavour
    # A retry would sleep at least 5 minutes: a minute tells it apart whatever the load.
    client.settings.backoff_base_s = client.settings.backoff_max_s = 600.0
    server.enqueue('{"plan": {"queries": ["x"]}}', '{"plan": {"queries": ["y"]}}')
    started = time.monotonic()
    with usage_scope():
        out = await client.complete_json("plan_query", "p", Strict)
    assert out.plan.queries == ["x"]
    sent = [(r.status, (r.response_format or {}).get("type")) for r in server.completions]
    # One refusal, no retries (the retry budget is 2 and a 500 is otherwise retried).
    assert sent == [(status, "json_schema"), (200, taken["type"])]
    assert ("schema" in (server.completions[1].response_format or {})) == taken["schema"]
    assert time.monotonic() - started < 60  # no backoff was slept
    await client.complete_json("plan_query", "p", Strict)
    assert (server.completions[2].response_format or {}).get("type") == "json_object"


async def test_a_plain_500_is_still_retried(client: LLMClient, server: FakeLLMServer) -> None:
    client.settings.backoff_base_s = 0.0
    server.enqueue(Reply.server_error(message="CUDA out of memory"), '{"queries": ["x"]}')
    assert (await client.complete_json("plan_query", "p", QueryPlan)).queries == ["x"]
    sent = [(r.status, (r.response_format or {}).get("type")) for r in server.completions]
    assert sent == [(500, "json_schema"), (200, "json_schema")]


async def test_other_400_is_a_provider_error(client: LLMClient, server: FakeLLMServer) -> None:
    server.enqueue(Reply.error(400, "maximum context length is 4096 tokens"))
    with pytest.raises(LLMProviderError, match="context length"):
        await client.complete_json("plan_query", "p", QueryPlan)
    assert len(server.completions) == 1


async def test_responder_answers_by_schema(client: LLMClient, server: FakeLLMServer) -> None:
    def responder(request: dict[str, Any]) -> str:
        assert schema_name_of(request) == "QueryPlan"
        schema = json_schema_of(request)
        assert schema is not None and "queries" in schema["properties"]
        return json.dumps({"queries": [last_user_message(request).upper()]})

    server.responder = responder
    plan = await client.complete_json("plan_query", "aspirin stroke", QueryPlan)
    assert plan.queries == ["ASPIRIN STROKE"]


async def test_tasks_route_to_their_models(llm_settings: Settings, server: FakeLLMServer) -> None:
    llm_settings.llm.tasks = {
        "synthesize": LLMTaskRoute(model="fake-large", max_tokens=3000),
        "plan_query": LLMTaskRoute(temperature=0.0),
    }
    server.responder = lambda request: f"model was {request['model']}"
    async with LLMClient(llm_settings.llm) as llm:
        assert (await llm.complete("synthesize", "s")).text == "model was fake-large"
        assert (await llm.complete("plan_query", "p")).text == "model was fake-small"
    sent = [(r.model, r.json["max_tokens"], r.json["temperature"]) for r in server.completions]
    assert sent == [("fake-large", 3000, 0.1), ("fake-small", 1200, 0.0)]


async def test_no_model_configured_raises_with_how_to(settings: Settings) -> None:
    async with LLMClient.from_settings(settings) as llm:
        assert not llm.is_configured(LLMTask.ANSWER)
        with pytest.raises(LLMConfigError) as info:
            await llm.complete(LLMTask.ANSWER, "q")
    message = str(info.value)
    assert "MEDLIT_LLM_BASE_URL" in message and "MEDLIT_LLM_MODEL" in message
    assert "http://localhost:11434/v1" in message


async def test_accounting_per_task_scoped_and_cumulative(
    llm_settings: Settings, server: FakeLLMServer
) -> None:
    llm_settings.llm.prices = {"fake-small": (1.0, 2.0)}
    server.enqueue(
        Reply("a", prompt_tokens=100, completion_tokens=10),
        Reply.rate_limited(retry_after="0.01"),
        Reply('{"queries": []}', prompt_tokens=50, completion_tokens=5),
    )
    async with LLMClient(llm_settings.llm) as llm:
        with usage_scope() as outer:
            await llm.complete("answer", "q")
            with usage_scope() as inner:
                await llm.complete_json("plan_query", "p", QueryPlan)
        assert inner.llm_calls == 2  # the 429 counts: it was a request sent
        assert (inner.llm_failed, inner.llm_succeeded) == (1, 1)  # ... but not as a call made
        assert inner.to_dict()["llm"]["plan_query"]["failed"] == 1  # type: ignore[index]
        assert inner.llm["plan_query"].prompt_tokens == 50
        assert outer.llm_calls == 3
        assert outer.llm["answer"].calls == 1
        assert outer.tokens == 165
        assert outer.cost_usd == pytest.approx((150 * 1.0 + 15 * 2.0) / 1e6)
        assert outer.llm["answer"].latency_s > 0
        server.enqueue("b")
        await llm.complete("answer", "outside any scope")
        assert llm.usage.llm_calls == 4
        assert llm.usage.llm["answer"].calls == 2
        assert llm.usage.llm_failed == 1
        assert outer.llm_calls == 3  # the scope closed


async def test_hf_provider_speaks_to_an_openai_compatible_endpoint(
    llm_settings: Settings, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    # conftest sets HF_HUB_OFFLINE=1, which makes huggingface_hub refuse every request, even to
    # loopback; this test talks only to the fake on 127.0.0.1.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    llm_settings.llm.provider = "hf"
    llm_settings.llm.api_key = "hf_test_token"  # type: ignore[assignment]
    # huggingface_hub's first request is slow on a loaded machine: 0.4 s made it a timeout
    # (one attempt more than the 429 accounts for).
    llm_settings.llm.timeout_s = 5.0
    server.enqueue(Reply.rate_limited(retry_after="0.05"), "from hf", '{"queries": ["q"]}')
    async with LLMClient(llm_settings.llm) as llm:
        reply = await llm.complete("answer", "q")
        plan = await llm.complete_json("plan_query", "p", QueryPlan)
    assert (reply.text, reply.attempts) == ("from hf", 2)
    assert plan.queries == ["q"]
    first: Any = server.completions[0]
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer hf_test_token"
    # huggingface_hub rewrites a json_schema response_format into TGI's grammar form.
    assert server.completions[2].response_format is not None


async def test_top_logprobs_are_asked_for_and_parsed(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply.scored({"SAME": 0.7, " SAME": 0.2, "DIFF": 0.1}))
    reply = await client.complete("verify_cache_hit", "same?", max_tokens=1, top_logprobs=2)
    assert reply.text == "SAME" and reply.logprobs is not None
    (first,) = reply.logprobs
    assert first.token == "SAME" and first.logprob == pytest.approx(-0.3567, abs=1e-3)
    assert [t for t, _ in first.top] == ["SAME", " SAME"]  # only the 2 asked for
    sent = server.completions[0].json
    assert sent["logprobs"] is True and sent["top_logprobs"] == 2
    # Not asked: not sent, and none parsed.
    server.enqueue(Reply.scored({"SAME": 0.7, "DIFF": 0.3}))
    plain = await client.complete("verify_cache_hit", "same?")
    assert plain.logprobs is None and "logprobs" not in server.completions[1].json
    # A server that ignores the request: no logprobs, the text still comes back.
    server.supports_logprobs = False
    server.enqueue(Reply.scored({"SAME": 0.7, "DIFF": 0.3}))
    ignored = await client.complete("verify_cache_hit", "same?", top_logprobs=5)
    assert ignored.text == "SAME" and ignored.logprobs is None


async def test_hf_provider_passes_top_logprobs_through(
    llm_settings: Settings, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    llm_settings.llm.provider = "hf"
    llm_settings.llm.api_key = "hf_test_token"  # type: ignore[assignment]
    server.enqueue(Reply.scored({"SAME": 0.8, "DIFF": 0.2}), "plain")
    async with LLMClient(llm_settings.llm) as llm:
        scored = await llm.complete("verify_cache_hit", "same?", top_logprobs=3)
        plain = await llm.complete("answer", "q")
    assert scored.logprobs is not None and scored.logprobs[0].token == "SAME"
    assert [t for t, _ in scored.logprobs[0].top] == ["SAME", "DIFF"]
    assert server.completions[0].json["top_logprobs"] == 3
    assert plain.logprobs is None and "logprobs" not in server.completions[1].json


async def test_the_seed_is_sent_per_task_plain_and_streamed(
    llm_settings: Settings, server: FakeLLMServer
) -> None:
    server.enqueue("no seed")
    async with LLMClient(llm_settings.llm) as llm:
        await llm.complete("answer", "q")
    assert "seed" not in server.completions[0].json  # none configured: none sent

    llm_settings.llm.seed = 7
    llm_settings.llm.tasks = {"plan_query": LLMTaskRoute(seed=11)}
    server.enqueue("a", '{"queries": ["q"]}', Reply.streamed("streamed answer"))
    async with LLMClient(llm_settings.llm) as llm:
        await llm.complete("answer", "q")
        await llm.complete_json("plan_query", "p", QueryPlan)
        stream = llm.stream("answer", "q")
        assert "".join([d async for d in stream]) == "streamed answer"
    sent = [(r.json.get("seed"), r.json.get("stream", False)) for r in server.completions[1:]]
    assert sent == [(7, False), (11, False), (7, True)]
