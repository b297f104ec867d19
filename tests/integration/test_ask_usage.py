"""What an answer cost comes with it: ``usage`` per LLM task, from the server's own counts,
in a research job's shape (what ``ask --json``, the API and MCP dump)."""

from __future__ import annotations

from typing import Any

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.integration.test_ask_flow import CRPS, _configure, eutils, llm_server

__all__ = ["eutils", "llm_server"]  # the fixtures this module's tests take


async def test_usage_is_counted_per_task_with_tokens_and_cost(
    settings: Settings,
    eutils: FakeEutils,
    llm_server: FakeLLMServer,
) -> None:
    responder = EvidenceResponder(lambda pmids: "Yes")

    def counted(request: dict[str, Any]) -> Reply:
        text = responder(request)
        return Reply(text, prompt_tokens=500, completion_tokens=40)

    llm_server.responder = counted
    settings.llm.prices = {"fake-model": (1.0, 2.0)}
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        result = await assistant.ask(CRPS)
        again = await assistant.ask(CRPS)
    usage = result.usage
    calls = len(responder.tasks)
    assert usage["llm_calls"] == calls == result.api_calls.llm >= 1
    answer = usage["llm"]["answer"]
    assert answer["calls"] == calls  # the verdict read, if any, is part of the answer task
    assert (answer["prompt_tokens"], answer["completion_tokens"]) == (500 * calls, 40 * calls)
    assert answer["latency_s"] > 0
    assert usage["tokens"] == 540 * calls
    assert usage["cost_usd"] == pytest.approx(calls * (500 * 1.0 + 40 * 2.0) / 1e6)
    assert usage["calls"]["pubmed"] == result.api_calls.pubmed
    # a cached answer cost nothing
    assert again.cache.tier1 == "hit"
    assert again.usage["llm_calls"] == 0 and again.usage["tokens"] == 0
    dumped = result.model_dump(mode="json")
    assert dumped["usage"]["llm"]["answer"]["prompt_tokens"] == 500 * calls
