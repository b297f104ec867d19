"""A source outage is an outage, not an answer, through the fake servers: PubMed fails on every
request, the store holds articles about something else, the model cites none of them."""

from __future__ import annotations

from medlit.assistant import OUTAGE_ANSWER, Assistant
from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.test_ask_flow import (
    Q1,
    _answering,
    _check_cited,
    assistant,
    eutils,
    llm_server,
)

__all__ = ["assistant", "eutils", "llm_server"]

OTHER = "Does aspirin cause tinnitus in children?"


async def _ask_with_pubmed_down(
    assistant: Assistant, eutils: FakeEutils, settings: Settings
) -> None:
    _check_cited(await assistant.ask(Q1))  # the store now holds aspirin-and-stroke articles
    settings.agent.score_threshold = 0.99  # what the store holds is not enough: search
    eutils.enqueue(Fault.status(500), times=1000)


async def test_every_source_down_and_nothing_cited_is_an_outage(
    assistant: Assistant, eutils: FakeEutils, settings: Settings, llm_server: FakeLLMServer
) -> None:
    await _ask_with_pubmed_down(assistant, eutils, settings)
    llm_server.responder = _answering(lambda prompt: "Uncertain. No article studies this.")
    down = await assistant.ask(OTHER)
    assert down.outage is True and down.verdict is None and down.citations == []
    assert down.answer == OUTAGE_ANSWER
    assert down.cache.evidence_reused > 0 and not down.cache.admitted
    assert down.warnings[0].startswith("source failed: pubmed: server error 500")
    assert '"outage":true' in down.model_dump_json()


async def test_a_cited_answer_while_the_source_is_down_is_no_outage(
    assistant: Assistant, eutils: FakeEutils, settings: Settings
) -> None:
    await _ask_with_pubmed_down(assistant, eutils, settings)
    held = await assistant.ask(OTHER)  # the default responder cites what the store held
    assert held.citations and held.outage is False and held.verdict is not None
    assert held.warnings[0].startswith("source failed: pubmed")
