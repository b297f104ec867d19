"""A cached answer from a fresh process loads only what the hit path needs: no graph, no LLM
client or SDK, no answer checks, and for the same question no lemmatiser, vector index,
embedding model, word-frequency library or question frame (each costs start-up time a tier-1
hit must not pay). From the CLI too, which reads a plain ``medlit ask`` without Typer; there
``--json`` reads the frame, once."""

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
    "pydantic_settings",  # plain MEDLIT_ variables are read without it (medlit.config)
    "medlit.language",  # the language check runs on a miss only
    "py3langid",  # its identifier (half a second to load)
    "wordfreq",  # word frequencies come from the package's table, and a hit needs none
    "langcodes",  # wordfreq's
    "medlit.words.frame",  # the question frame: read on a miss, or when asked for (--json)
    "medlit.words.qualified_names",  # "vitamin D": the searches', not the key's
    "medlit.words.search_plan",
    "medlit.agent.query",  # a follow-up's plan and the searches: a question alone needs agent.plan
    "medlit.words.search_terms",
    "medlit.agent.nodes",  # the retrieval loop's nodes: a hit runs medlit.agent.hit_nodes
    "medlit.agent.prompt",
    "medlit.checks.citations",
)
#: Modules a tier-1 hit through the CLI never needs (besides those above).
NOT_ON_THE_CLI_HIT_PATH = (
    "medlit.cli.live",  # the live view: not a terminal here
    "typer",  # a plain `medlit ask` is read by medlit.cli.ask_run
    "medlit.cli.app",  # the Typer application
    "medlit.cli.ask",  # the Typer command
    "click",  # Typer vendors its own
    "medlit.cli.research",  # `medlit ask` registers the ask command alone
    "medlit.cli.cache",
    "rich.progress",
    "rich.live",
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


CLI = """
import json, runpy, sys
watched = sys.argv[1].split(",")
sys.argv = ["medlit", *sys.argv[2:]]
try:
    runpy.run_module("medlit", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": [m for m in watched if m in sys.modules]}))
"""


def _env(home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "MEDLIT_HOME": str(home),
        "MEDLIT_PUBMED_BASE_URL": eutils.base_url,
        "MEDLIT_LLM_BASE_URL": llm.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
    }


def _ask(question: str, home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", ASK, question],
        env=_env(home, eutils, llm),
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


def _cli(*args: str, home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> tuple[dict, str]:
    watched = ",".join(NOT_ON_THE_HIT_PATH + NOT_ON_THE_CLI_HIT_PATH)
    done = subprocess.run(
        [sys.executable, "-c", CLI, watched, *args],
        env={**_env(home, eutils, llm), "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    *output, last = done.stdout.strip().splitlines()
    found: dict[str, object] = json.loads(last)
    return found, "\n".join(output)


def test_a_cached_answer_through_the_cli_loads_no_frame_nor_word_frequencies(
    tmp_path: Path, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    question = "Does aspirin prevent stroke in adults?"
    first, _ = _cli("ask", question, home=tmp_path, eutils=eutils, llm=llm)
    assert first["code"] == 0 and "medlit.words.frame" in first["loaded"]  # type: ignore[operator]
    again, shown = _cli("ask", question, home=tmp_path, eutils=eutils, llm=llm)
    assert again == {"code": 0, "loaded": []}
    assert "answered from cache" in shown
    # --json reads the frame (and only then)
    as_json, shown = _cli("ask", question, "--json", home=tmp_path, eutils=eutils, llm=llm)
    assert as_json == {"code": 0, "loaded": ["medlit.words.frame"]}
    result = json.loads(shown)
    assert result["cache"]["tier1"] == "hit"
    assert result["question_frame"]["question"] == question
    assert result["question_frame"]["kind"] and result["question_frame"]["yes_no"] is True
