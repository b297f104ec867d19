"""``medlit mcp`` driven by the official MCP SDK's stdio client, against the fake E-utilities,
Europe PMC and LLM servers: the four tools, errors as tool errors, a research job to the end."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from medlit.config import Settings
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.research_responder import ARTICLES, ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    env_for,
    europepmc,
    eutils,
    rsettings,
)

__all__ = ["europepmc", "eutils", "rsettings"]


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """Answers research prompts like a model would, and ask prompts from their evidence."""
    research = ResearchResponder()
    evidence = EvidenceResponder(lambda pmids: "Yes")

    def respond(request: dict[str, Any]) -> str | Reply:
        system = str(request.get("messages", [{}])[0].get("content", ""))
        return research(request) if system.startswith("medlit research:") else evidence(request)

    with FakeLLMServer(responder=respond) as server:
        yield server


def _payload(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


@pytest.fixture
def errlog() -> Iterator[TextIO]:
    """Where the server's stderr (its log) goes."""
    with open(os.devnull, "w") as sink:
        yield sink


@pytest.mark.slow
async def test_mcp_tools_over_stdio(
    rsettings: Settings, llm_server: FakeLLMServer, errlog: TextIO
) -> None:
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1",
           **env_for(rsettings)}  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from medlit.cli import main; main()", "mcp", "--tenant", "lab-a"],
        env=env,
    )
    known = {a.pmid for a in ARTICLES}
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == {"search_literature", "ask", "start_research", "research_status"}

        found = _payload(await session.call_tool(
            "search_literature", {"query": "aspirin stroke", "source": "pubmed", "limit": 5}
        ))  # fmt: skip
        assert found["providers"]["pubmed"]["status"] == "ok"
        assert found["articles"] and {a["pmid"] for a in found["articles"]} <= known

        answer = _payload(await session.call_tool(
            "ask", {"question": "Does aspirin prevent recurrent ischaemic stroke?"}
        ))  # fmt: skip
        assert answer["answer"]
        assert {c["pmid"] for c in answer["citations"]} <= known

        empty = await session.call_tool("ask", {"question": "   "})
        assert empty.is_error and "the question is empty" in empty.content[0].text

        started = _payload(await session.call_tool(
            "start_research", {"question": QUESTION, "depth": "quick"}
        ))  # fmt: skip
        assert started["status"] == "PENDING"
        deadline = time.monotonic() + 180
        while True:
            status = _payload(await session.call_tool(
                "research_status", {"job_id": started["id"]}
            ))  # fmt: skip
            if status["status"] in ("COMPLETED", "FAILED", "CANCELLED"):
                break
            assert time.monotonic() < deadline, status["status"]
            await asyncio.sleep(0.2)
        assert status["status"] == "COMPLETED", status["error"]
        assert status["report_markdown"].startswith("# Aspirin after ischaemic stroke")

        missing = await session.call_tool("research_status", {"job_id": "000000000000"})
        assert missing.is_error and "no research job" in missing.content[0].text
        bad_depth = await session.call_tool(
            "start_research", {"question": QUESTION, "depth": "bottomless"}
        )
        assert bad_depth.is_error
    from medlit.research.runtime import open_job_store

    jobs, db = open_job_store(rsettings)
    try:
        assert jobs.get(started["id"]).tenant == "lab-a"  # the server's --tenant
    finally:
        db.close()
