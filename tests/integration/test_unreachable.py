"""Fail fast on what will not recover: a host that does not resolve or refuses connections.

A source or a language model out of reach is told at the first try (no retries), in one line
that names the host; with the LLM out of reach, ``ask`` answers with the evidence digest.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.errors import LLMUnreachable, SourceUnavailable, SourceUnreachable
from medlit.llm import LLMClient
from medlit.reachability import DOES_NOT_RESOLVE, REFUSES_CONNECTIONS, unreachable_reason
from medlit.sources.http import OFFLINE_WAYS, RetryPolicy, send
from medlit.types import AbstractSection, Article
from medlit.usage import usage_scope
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.integration.test_ask_flow import Q1, corpus

#: RFC 6761: ``.invalid`` never resolves, on any resolver.
NOWHERE = "eutils.example.invalid"
#: The retry policy users get: 4 retries, backoff from 0.5 s (7.5 s of waiting in all).
DEFAULT_POLICY = RetryPolicy()


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def test_reasons_read_from_the_exception_and_its_causes() -> None:
    gai = socket.gaierror(-2, "Name or service not known")
    wrapped = httpx.ConnectError("[Errno -2] Name or service not known")
    chained = RuntimeError("connect failed")
    chained.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert unreachable_reason(gai) == DOES_NOT_RESOLVE
    assert unreachable_reason(wrapped) == DOES_NOT_RESOLVE
    assert unreachable_reason(httpx.ConnectError("Temporary failure in name resolution")) == (
        DOES_NOT_RESOLVE
    )
    assert unreachable_reason(chained) == REFUSES_CONNECTIONS
    # A reset or a timeout may pass: those are retried.
    assert unreachable_reason(httpx.ReadTimeout("timed out")) is None
    assert unreachable_reason(httpx.RemoteProtocolError("peer closed connection")) is None


@pytest.mark.parametrize("where", ["dns", "refused"])
async def test_source_not_retried_when_out_of_reach(where: str) -> None:
    host = NOWHERE if where == "dns" else f"127.0.0.1:{unused_port()}"
    url = f"http://{host}/entrez/eutils/esearch.fcgi"
    async with httpx.AsyncClient() as client:
        started = time.monotonic()
        with usage_scope() as usage, pytest.raises(SourceUnreachable) as caught:
            await send(client, "GET", url, service="pubmed", limiter=None, policy=DEFAULT_POLICY)
        elapsed = time.monotonic() - started
    assert usage.source_calls("pubmed") == 1  # one try, no retries
    assert elapsed < 2.0  # the default policy's retries alone would wait 7.5 s
    reason = DOES_NOT_RESOLVE if where == "dns" else REFUSES_CONNECTIONS
    assert str(caught.value) == (
        f"PubMed is unreachable: {host} {reason}. Check your network or MEDLIT_PUBMED_BASE_URL. "
        + OFFLINE_WAYS
    )
    assert "medlit corpus add --sample" in OFFLINE_WAYS and "--source local" in OFFLINE_WAYS


async def test_a_server_error_is_still_retried(eutils: FakeEutils) -> None:
    eutils.enqueue(Fault.status(503), endpoint="esearch")
    policy = RetryPolicy(max_retries=2, backoff_base_s=0.01)
    async with httpx.AsyncClient() as client:
        with usage_scope() as usage:
            response = await send(
                client,
                "GET",
                f"{eutils.base_url}/esearch.fcgi",
                service="pubmed",
                limiter=None,
                policy=policy,
                params={"db": "pubmed", "term": "aspirin"},
            )
    assert response.status_code == 200 and usage.source_calls("pubmed") == 2


async def test_ask_with_pubmed_out_of_reach_and_nothing_stored_fails_before_loading_anything(
    settings: Settings,
) -> None:
    settings.pubmed.base_url = f"http://{NOWHERE}/entrez/eutils"
    async with Assistant(settings) as assistant:
        started = time.monotonic()
        with usage_scope() as usage, pytest.raises(SourceUnreachable) as caught:
            await assistant.ask(Q1)
        elapsed = time.monotonic() - started
        # Nothing stored could answer instead: told before the embedder loads.
        assert assistant.deps.runtime.loaded_embedder is None
    assert str(caught.value) == (
        f"PubMed is unreachable: {NOWHERE} does not resolve. Check your network or "
        f"MEDLIT_PUBMED_BASE_URL. {OFFLINE_WAYS}"
    )
    assert usage.source_calls("pubmed") == 0 and elapsed < 5.0  # 1 s on an idle machine


async def test_ask_with_pubmed_out_of_reach_fails_at_once(settings: Settings) -> None:
    settings.pubmed.base_url = f"http://{NOWHERE}/entrez/eutils"
    settings.pubmed.backoff_base_s = 0.5  # the users' policy, not the fast test one
    settings.pubmed.backoff_max_s = 30.0
    async with Assistant(settings) as assistant:
        # An article about something else is stored: the cache might have answered, so the
        # ask runs and its search fails.
        elsewhere = Article(
            pmid="39999999",
            title="Greenhouse tomato yields under LED lighting",
            abstract=[AbstractSection(text="Tomato yields rose under red LED light in winter.")],
        )
        await asyncio.to_thread(assistant.deps.store_articles, [elsewhere], True)
        with usage_scope() as usage, pytest.raises(SourceUnavailable) as caught:
            await assistant.ask(Q1)
        # Once the embedder and the graph are loaded (the first ask's startup), the failure
        # itself costs well under a second: the default policy's retries would wait 7.5 s.
        started = time.monotonic()
        with pytest.raises(SourceUnreachable):
            await assistant.ask("Does aspirin prevent stroke in older women?")
        elapsed = time.monotonic() - started
    assert isinstance(caught.value, SourceUnreachable)
    assert str(caught.value) == (
        f"PubMed is unreachable: {NOWHERE} does not resolve. Check your network or "
        "MEDLIT_PUBMED_BASE_URL. " + OFFLINE_WAYS
    )
    assert usage.source_calls("pubmed") == 1  # no retry, and no second search round
    assert elapsed < 1.0


async def test_llm_out_of_reach_not_retried(settings: Settings) -> None:
    port = unused_port()
    settings.llm.base_url = f"http://127.0.0.1:{port}/v1"
    settings.llm.model = "fake-model"
    settings.llm.max_retries = 4
    settings.llm.backoff_base_s = 1.0
    async with LLMClient.from_settings(settings) as llm:
        started = time.monotonic()
        with usage_scope() as usage:
            with pytest.raises(LLMUnreachable) as caught:
                await llm.complete("answer", "hello")
            with pytest.raises(LLMUnreachable):
                async for _ in llm.stream("answer", "hello"):
                    pass
        elapsed = time.monotonic() - started
    assert usage.llm_calls == 2  # one try each, no retries
    assert elapsed < 2.0
    assert f"127.0.0.1:{port} refuses connections" in str(caught.value)


async def test_ask_with_llm_out_of_reach_answers_with_the_digest(
    settings: Settings, eutils: FakeEutils
) -> None:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.agent.min_docs = 2
    settings.llm.base_url = f"http://{NOWHERE}/v1"
    settings.llm.model = "fake-model"
    settings.llm.backoff_base_s = 1.0  # a retry would show in the time
    async with Assistant(settings) as assistant:
        started = time.monotonic()
        result = await assistant.ask(Q1)
        llm_s = result.timings_ms["call_llm"] / 1000
    assert time.monotonic() - started < 30  # startup of the embedder on a loaded machine
    assert llm_s < 5.0  # no retry loop: one refused call and the digest
    assert result.mode == "evidence_digest"
    assert result.answer.startswith("Evidence digest (the language model is unreachable)")
    assert result.citations and result.verdict == "yes"
    assert result.warnings == [
        f"the language model is unreachable: {NOWHERE} does not resolve "
        f"(openai:fake-model@http://{NOWHERE}/v1); answered with the evidence digest"
    ]
    assert result.api_calls.llm == 1
    # Served, not kept: once the model is back, the same question gets the model's answer.
    assert result.cache.admitted is False


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    environ.update(MEDLIT_HOME=str(home), HF_HUB_OFFLINE="1", COLUMNS="80", **env)
    return subprocess.run(
        [sys.executable, "-c", "from medlit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def test_cli_pubmed_out_of_reach_is_one_line_exit_5(tmp_path: Path) -> None:
    done = _cli(tmp_path, "ask", Q1, MEDLIT_PUBMED_BASE_URL=f"http://{NOWHERE}/entrez/eutils")
    assert done.returncode == 5, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: PubMed is unreachable: {NOWHERE} does not resolve. Check your network or "
        "MEDLIT_PUBMED_BASE_URL. " + OFFLINE_WAYS
    ]


def test_cli_llm_out_of_reach_answers_exit_0(tmp_path: Path, eutils: FakeEutils) -> None:
    done = _cli(
        tmp_path,
        "ask",
        Q1,
        MEDLIT_PUBMED_BASE_URL=eutils.base_url,
        MEDLIT_PUBMED_REQUESTS_PER_SECOND="50",
        MEDLIT_AGENT_MIN_DOCS="2",
        MEDLIT_LLM_BASE_URL=f"http://127.0.0.1:{unused_port()}/v1",
        MEDLIT_LLM_MODEL="fake-model",
    )
    assert done.returncode == 0, done.stderr
    assert "Evidence digest (the language model is unreachable)" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "refuses connections" in warnings[0]


async def test_llm_out_of_reach_while_streaming_is_one_call_and_one_warning(
    settings: Settings, eutils: FakeEutils
) -> None:
    """At a terminal the answer is streamed: a server out of reach is not asked again without
    streaming ("cut off; asking again"), and the digest answers with one warning."""
    from medlit.progress import ProgressEvent, progress_scope

    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.agent.min_docs = 2
    settings.llm.base_url = f"http://127.0.0.1:{unused_port()}/v1"
    settings.llm.model = "fake-model"
    seen: list[ProgressEvent] = []
    async with Assistant(settings) as assistant:
        with progress_scope(seen.append, tokens=True):
            result = await assistant.ask(Q1)
    assert result.mode == "evidence_digest" and result.api_calls.llm == 1
    assert [e for e in seen if e.kind == "warning"] == []
    assert len(result.warnings) == 1 and "refuses connections" in result.warnings[0]
