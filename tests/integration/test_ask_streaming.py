"""``medlit ask`` at a terminal: stage progress on stderr, the answer on stdout as it is written."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console

from medlit.assistant import Assistant
from medlit.cli.live import AskLiveView
from medlit.config import Settings
from medlit.progress import ProgressEvent, progress_scope
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.research_responder import ARTICLES

QUESTION = "Does aspirin prevent recurrent ischaemic stroke?"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=ARTICLES, rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    written = EvidenceResponder(lambda pmids: "Yes")

    def slowly(request: dict[str, Any]) -> Reply:
        return Reply.streamed(written(request), chunk_delay_s=0.02)

    with FakeLLMServer(responder=slowly) as server:
        yield server


@pytest.fixture
def ask_settings(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.local.enabled = False
    settings.search.default_source = "pubmed"
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    return settings


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100, color_system=None), buffer


async def test_the_answer_is_shown_as_it_is_written(
    ask_settings: Settings, llm: FakeLLMServer
) -> None:
    out, out_text = _terminal()
    err, err_text = _terminal()
    async with Assistant(ask_settings) as assistant:
        with AskLiveView(out, err) as view, progress_scope(view):
            result = await assistant.ask(QUESTION)
        finished = time.monotonic()
    assert llm.completions[0].json.get("stream") is True
    words = len(view.text.plain.split())
    # The draft is the model's text; the answer has its verdict line moved to the top.
    assert words > 10 and view.text.plain.rstrip().endswith("Verdict: Yes")
    assert result.answer.startswith("Verdict: Yes\n\n" + view.text.plain.split()[0])
    # The first words were on screen well before the model had finished (0.02 s a word).
    assert view.first_token_at is not None and finished - view.first_token_at > 0.01 * words
    shown = out_text.getvalue()
    for word in ("Aspirin", "[PMID:4000000"):
        assert word in shown  # the draft was drawn on stdout as it grew
    assert "searching PubMed for “" in err_text.getvalue()
    assert {"plan_query", "fetch_pubmed", "call_llm"} <= set(view.stages)
    assert result.mode == "llm" and result.citations


async def test_token_events_are_the_answer_in_order(ask_settings: Settings) -> None:
    events: list[ProgressEvent] = []
    async with Assistant(ask_settings) as assistant:
        with progress_scope(events.append):
            result = await assistant.ask(QUESTION)
        tokens = [e for e in events if e.kind == "token"]
        assert tokens and all(e.stage == "call_llm" for e in tokens)
        streamed = "".join(e.message for e in tokens)
        for citation in result.citations:
            assert f"[PMID:{citation.pmid}]" in streamed
        # Without token streaming asked for, the same question is answered in one piece.
        quiet: list[ProgressEvent] = []
        with progress_scope(quiet.append, tokens=False):
            await assistant.ask(QUESTION, use_cache=False)
        assert quiet and not [e for e in quiet if e.kind == "token"]


async def test_an_interrupted_stream_is_asked_again_in_one_piece(
    ask_settings: Settings, llm: FakeLLMServer
) -> None:
    written = EvidenceResponder(lambda pmids: "Yes")

    def interrupted_once(request: dict[str, Any]) -> Reply:
        reply = Reply.streamed(written(request))
        if request.get("stream"):
            reply.cut_after = 3  # another user's request interrupted this stream
        return reply

    llm.responder = interrupted_once
    events: list[ProgressEvent] = []
    async with Assistant(ask_settings) as assistant:
        with progress_scope(events.append):
            result = await assistant.ask(QUESTION)
    assert [r.json.get("stream", False) for r in llm.completions] == [True, False]
    assert result.verdict == "yes" and result.answer.startswith("Verdict: Yes") and result.citations
    assert [e.message for e in events if e.kind == "warning"] == [
        "the streamed answer was cut off; asking again"
    ]


async def test_a_server_that_does_not_stream_costs_no_extra_call(
    ask_settings: Settings, llm: FakeLLMServer
) -> None:
    """A server that answers ``stream: true`` with one whole completion: its body is the
    answer (no second call), and the next ask, in a new process, asks it without streaming."""
    llm.streams = False
    seen: list[ProgressEvent] = []
    async with Assistant(ask_settings) as assistant:
        with progress_scope(seen.append, tokens=True):
            first = await assistant.ask(QUESTION)
    assert first.mode == "llm" and first.api_calls.llm == 1 and first.citations
    assert [r.json.get("stream") for r in llm.completions] == [True]
    assert not [e for e in seen if e.kind == "warning"]  # no "cut off; asking again"
    assert any(e.kind == "token" for e in seen)  # the whole text, shown at once
    notes = (ask_settings.home / "llm-servers.json").read_text(encoding="utf-8")
    assert llm.base_url in notes

    async with Assistant(ask_settings) as assistant:  # as a new process would
        with progress_scope(seen.append, tokens=True):
            again = await assistant.ask(QUESTION, use_cache=False)
    assert again.api_calls.llm == 1 and again.answer == first.answer
    assert [r.json.get("stream") for r in llm.completions] == [True, None]
