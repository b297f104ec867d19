"""A cached answer from a fresh process loads only what the hit path needs: no graph, no LLM
client or SDK, no answer checks, and for the same question no lemmatiser, vector index or
embedding model (each costs start-up time a tier-1 hit must not pay)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
#: Modules a tier-1 hit never needs.
NOT_ON_THE_HIT_PATH = (
    "langgraph",
    "openai",
    "medlit.llm.client",
    "medlit.digest",
    "medlit.checks.answer",
    "medlit.checks.verdict",
    "medlit.agent.graph",
    "medlit.cache.guard",  # the same question again compares no word
    "lemminflect",  # the guard's lemmas
    "usearch",  # the vector index: the same question again is read by its key
    "onnxruntime",  # the embedding model (its vector is stored)
    "numpy",  # no vector at all: the same question again is read by its key
    "medlit.embeddings.onnx",
    "structlog",  # nothing is logged at the default level
    "medlit.language",  # the language check runs on a miss only
    "py3langid",  # its identifier (half a second to load)
)
ASK = f"""
import asyncio, json, sys
from medlit.assistant import Assistant

async def main():
    async with Assistant() as assistant:
        result = await assistant.ask(sys.argv[1])
    watched = {NOT_ON_THE_HIT_PATH!r}
    print(json.dumps({{"tier1": result.cache.tier1,
                      "loaded": [m for m in watched if m in sys.modules]}}))

asyncio.run(main())
"""


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.responder = EvidenceResponder(lambda pmids: "Yes")
        yield fake


def _ask(question: str, home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "MEDLIT_HOME": str(home),
        "MEDLIT_PUBMED_BASE_URL": eutils.base_url,
        "MEDLIT_LLM_BASE_URL": llm.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
    }
    done = subprocess.run(
        [sys.executable, "-c", ASK, question],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_a_cached_answer_loads_no_graph_llm_client_or_checks(
    tmp_path: Path, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    question = "Does aspirin prevent stroke in adults?"
    first = _ask(question, tmp_path, eutils, llm)
    assert first["tier1"] == "miss" and "medlit.checks.answer" in first["loaded"]  # type: ignore[operator]
    asked = len(llm.history)
    again = _ask(question, tmp_path, eutils, llm)
    assert again == {"tier1": "hit", "loaded": []}
    assert len(llm.history) == asked
