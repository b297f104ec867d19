"""A source outage is an outage, not an answer, through the fake servers: PubMed fails on every
request, the store holds articles about something else, the model cites none of them. The
result says ``outage`` with no verdict (API, ``medlit ask --json``); the CLI exits 5."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _cli(home: Path, eutils: FakeEutils, llm: FakeLLMServer, *args: str, **env: str) -> Any:
    """``medlit ask`` in a subprocess on the fakes, with these ``MEDLIT_`` settings."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    environ.update(
        MEDLIT_HOME=str(home),
        MEDLIT_PUBMED_BASE_URL=eutils.base_url,
        MEDLIT_PUBMED_REQUESTS_PER_SECOND="50",
        MEDLIT_AGENT_MIN_DOCS="2",
        MEDLIT_LLM_BASE_URL=llm.base_url,
        MEDLIT_LLM_MODEL="fake-model",
        HF_HUB_OFFLINE="1",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-c", "from medlit.cli import main; main()", "ask", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


def test_cli_ask_json_outage_is_exit_5(
    tmp_path: Path, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    assert _cli(tmp_path, eutils, llm_server, Q1, "--json").returncode == 0
    eutils.enqueue(Fault.status(500), times=1000)
    llm_server.responder = _answering(lambda prompt: "Uncertain. No article studies this.")
    down = _cli(tmp_path, eutils, llm_server, OTHER, "--json", MEDLIT_AGENT_SCORE_THRESHOLD="0.99")
    assert down.returncode == 5, down.stderr
    data = json.loads(down.stdout)  # the result still, for a script to read
    assert data["outage"] is True and data["verdict"] is None and data["citations"] == []
    assert data["answer"] == OUTAGE_ANSWER
