"""Streamed completions against the fake OpenAI-compatible server: deltas, usage, idle timeout."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest

from medlit.config import Settings
from medlit.errors import LLMProviderError, LLMTimeout
from medlit.llm import LLMClient
from medlit.usage import usage_scope
from tests.fakes.llm_server import FakeLLMServer, Reply

TEXT = "Aspirin reduces recurrent stroke [PMID:1]. Bleeding rises [PMID:2].\nVerdict: yes"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
async def client(settings: Settings, server: FakeLLMServer) -> AsyncIterator[LLMClient]:
    settings.llm.base_url = server.base_url
    settings.llm.model = "fake-small"
    # A loaded machine can stall an ordinary stream for a second or more: the tests of the
    # timeouts set short ones themselves, against replies far later than them.
    settings.llm.timeout_s = 5.0
    settings.llm.stream_idle_timeout_s = 5.0
    settings.llm.max_retries = 1
    settings.llm.backoff_base_s = 0.0
    async with LLMClient.from_settings(settings) as llm:
        yield llm


async def test_deltas_arrive_in_order_and_make_the_reply(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply.streamed(TEXT, chunk_delay_s=0.01))
    stream = client.stream("answer", "Does aspirin prevent stroke?")
    deltas = [delta async for delta in stream]
    assert len(deltas) == len(TEXT.split()) and "".join(deltas) == TEXT
    assert stream.reply.text == TEXT and stream.reply.finish_reason == "stop"
    assert server.completions[0].json["stream"] is True
    # The server sent usage (stream_options.include_usage): it is what is accounted.
    assert stream.reply.completion_tokens == len(TEXT.split())
    assert client.usage.llm["answer"].calls == 1


async def test_usage_is_estimated_when_the_server_sends_none(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.flavour = "llama_cpp"  # takes include_usage, sends no usage chunk
    server.enqueue(Reply.streamed(TEXT))
    with usage_scope() as usage:
        stream = client.stream("answer", "x" * 400)
        async for _ in stream:
            pass
    task = usage.llm["answer"]
    assert task.calls == 1
    assert task.completion_tokens == len(TEXT.split())  # one chunk per token
    assert task.prompt_tokens == 100  # 400 characters / 4


async def test_a_slow_writer_is_never_cut_off_by_a_total_timeout(
    client: LLMClient, server: FakeLLMServer
) -> None:
    # 40 chunks, 0.1 s apart: 4 s in all, twice timeout_s, never near 2 s silent.
    client.settings.timeout_s = client.settings.stream_idle_timeout_s = 2.0
    text = " ".join(f"w{i}" for i in range(40))
    server.enqueue(Reply.streamed(text, chunk_delay_s=0.1))
    started = time.monotonic()
    stream = client.stream("answer", "q")
    got = [d async for d in stream]
    assert "".join(got) == text and time.monotonic() - started > 3.0
    assert stream.reply.attempts == 1


async def test_silence_mid_stream_times_out_without_a_retry(
    client: LLMClient, server: FakeLLMServer
) -> None:
    # Silent for a minute after three chunks: the idle timeout must cut it, long before.
    client.settings.stream_idle_timeout_s = 2.0
    server.enqueue(Reply.streamed(TEXT, stall_after=3, stall_s=60.0))
    got: list[str] = []
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"no next chunk within 2 s"):
        async for delta in client.stream("answer", "q"):
            got.append(delta)
    assert len(got) == 3 and time.monotonic() - started < 30
    assert len(server.completions) == 1  # text was already shown: no silent retry


async def test_a_first_chunk_too_late_is_retried(client: LLMClient, server: FakeLLMServer) -> None:
    client.settings.timeout_s = 2.0  # the first attempt is a minute late, the second on time
    server.enqueue(Reply(text="late", delay_s=60.0), Reply.streamed("on time"))
    stream = client.stream("answer", "q")
    assert [d async for d in stream] == ["on ", "time"]
    assert stream.reply.attempts == 2 and len(server.completions) == 2


async def test_a_server_error_before_any_text_is_retried(
    client: LLMClient, server: FakeLLMServer
) -> None:
    server.enqueue(Reply.server_error(), Reply.streamed("fine"))
    stream = client.stream("answer", "q")
    assert [d async for d in stream] == ["fine"]
    assert [r.status for r in server.completions] == [500, 200]


async def test_a_stream_cut_off_before_the_end_is_an_error(
    client: LLMClient, server: FakeLLMServer
) -> None:
    cut = Reply.streamed(TEXT)
    cut.cut_after = 2
    server.enqueue(cut)
    got: list[str] = []
    with pytest.raises(LLMProviderError, match="cut off after 2 chunk"):
        async for delta in client.stream("answer", "q"):
            got.append(delta)
    assert len(got) == 2
