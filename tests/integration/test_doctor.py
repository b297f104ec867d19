"""``medlit doctor`` against the fakes: a healthy server, one without JSON schema mode, one that
does not stream, one that is unreachable, one that lists its model by file path and serves any
name (llama.cpp), one that refuses names it does not list; no LLM at all; PubMed out of reach
with and without a local corpus; and the command's exit code and JSON."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from medlit.cli import app
from medlit.config import Settings
from medlit.doctor import DoctorItem, DoctorReport, run_doctor
from medlit.doctor.self_test import load_questions
from medlit.sources.local import LocalCorpus
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer, Reply


def _model(request: dict[str, Any]) -> str | Reply:
    """What a well-behaved server answers each probe."""
    if request.get("response_format"):
        return '{"answer": "yes"}'
    if request.get("logprobs"):
        return Reply.scored({"Yes": 0.8, "No": 0.2})
    prompt = request["messages"][-1]["content"]
    if "Count from 1 to 60" in prompt:
        return " ".join(str(n) for n in range(1, 41))
    return "OK then"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.responder = _model
        yield fake


@pytest.fixture
def configured(settings: Settings, eutils: FakeEutils, server: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.europepmc.enabled = False
    settings.llm.base_url = server.base_url
    settings.llm.model = "fake-model"
    settings.llm.timeout_s = 5.0
    return settings


def _item(report: DoctorReport, name: str) -> DoctorItem:
    found = [item for item in report.items if item.name.endswith(name)]
    assert len(found) == 1, [i.name for i in report.items]
    return found[0]


async def test_a_healthy_set_up_is_usable(configured: Settings, server: FakeLLMServer) -> None:
    report = await run_doctor(configured)
    assert report.usable, report.items
    pubmed = _item(report, "pubmed")
    assert pubmed.status == "ok" and "answered in" in pubmed.detail
    assert "no API key, 3 requests/s" in pubmed.detail and "MEDLIT_PUBMED_API_KEY" in pubmed.fix
    assert _item(report, "europepmc").status == "skip"
    assert _item(report, "local").status == "warn"  # an empty corpus: not needed for pubmed
    for name in ("model", "JSON mode", "streaming", "logprobs", "seed", "speed"):
        assert _item(report, f": {name}").status == "ok", name
    assert _item(report, ": JSON mode").detail == "json_schema"
    assert "tokens/s" in _item(report, ": speed").detail
    llm = [i for i in report.items if i.area == "llm"]
    assert llm[0].name.startswith("plan_query/answer/") and llm[0].detail == "reachable"
    assert _item(report, "sqlite").status == "ok"
    assert "SHA-256 checked" in _item(report, "onnx").detail
    # every task shares one route: it was probed once
    assert sum(1 for r in server.history if r.path.endswith("/models")) == 1


async def test_a_server_without_json_schema_mode_is_usable_with_a_warning(
    configured: Settings, server: FakeLLMServer
) -> None:
    server.unsupported_response_formats = {"json_schema"}
    report = await run_doctor(configured)
    json_mode = _item(report, ": JSON mode")
    assert (json_mode.status, json_mode.detail) == ("warn", "json_object")
    assert "json_schema" in json_mode.fix
    assert report.usable
    server.unsupported_response_formats = {"json_schema", "json_object"}
    assert _item(await run_doctor(configured), ": JSON mode").detail == "none"


async def test_a_server_that_does_not_stream_is_told(
    configured: Settings, server: FakeLLMServer
) -> None:
    server.streams = False
    report = await run_doctor(configured)
    streaming = _item(report, ": streaming")
    assert (streaming.status, streaming.detail) == ("warn", "answers in one piece")
    assert report.usable


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_server_makes_the_set_up_unusable(configured: Settings) -> None:
    configured.llm.base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    report = await run_doctor(configured)
    llm = [i for i in report.items if i.area == "llm"]
    assert len(llm) == 1 and llm[0].status == "fail" and llm[0].needed
    assert "refuses connections" in llm[0].detail and "MEDLIT_LLM_BASE_URL" in llm[0].fix
    assert not report.usable


async def test_an_unknown_model_is_a_failure(configured: Settings, server: FakeLLMServer) -> None:
    server.serves_any_model = False  # as OpenAI, vLLM and Ollama: only the names listed
    configured.llm.model = "no-such-model"
    report = await run_doctor(configured)
    model = _item(report, ": model")
    assert model.status == "fail" and model.needed
    assert "`no-such-model` does not exist" in model.detail and "fake-model" in model.detail
    assert "MEDLIT_LLM_MODEL" in model.fix
    # nothing else is asked of a model the server refuses
    assert [i.name for i in report.items if i.area == "llm"][-1] == model.name
    assert not report.usable


_GGUF = "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf"


async def test_a_server_that_lists_a_file_path_and_serves_any_name_passes(
    configured: Settings, server: FakeLLMServer
) -> None:
    server.models = [_GGUF]  # llama.cpp's llama-server: its one model, by file path
    report = await run_doctor(configured)
    assert not [i for i in report.items if i.status == "fail"], report.items
    model = _item(report, ": model")
    assert model.status == "ok" and _GGUF in model.detail and "answers under" in model.detail
    # it was asked under the configured name, and answered
    assert server.completions[0].model == "fake-model" and server.completions[0].status == 200
    assert report.usable


def test_the_command_passes_a_server_serving_any_name(
    configured: Settings, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.models = [_GGUF]
    _environment(configured, monkeypatch)
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.stdout and "\nusable\n" in result.stdout


async def test_without_a_model_the_fix_names_the_variables_to_set(configured: Settings) -> None:
    configured.llm.base_url = None
    configured.llm.model = None
    report = await run_doctor(configured)
    model = _item(report, "model")
    assert model.status == "warn" and not model.needed
    for variable in ("MEDLIT_LLM_BASE_URL", "MEDLIT_LLM_MODEL", "MEDLIT_LLM_API_KEY"):
        assert variable in model.fix, variable
    assert not model.fix.rstrip().endswith(":")


def test_without_a_model_the_command_prints_the_whole_fix(
    configured: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    _environment(configured, monkeypatch)
    monkeypatch.delenv("MEDLIT_LLM_BASE_URL")
    monkeypatch.delenv("MEDLIT_LLM_MODEL")
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    fix = result.stdout.split("none configured", 1)[1].split("store", 1)[0]
    assert (
        "environment variables:" in fix and "MEDLIT_LLM_BASE_URL=http://localhost:11434/v1" in fix
    )
    assert "MEDLIT_LLM_API_KEY=sk-" in fix and "MEDLIT_LLM_MODEL=" in fix


def _environment(configured: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_HOME", str(configured.home))
    monkeypatch.setenv("MEDLIT_PUBMED_BASE_URL", configured.pubmed.base_url)
    monkeypatch.setenv("MEDLIT_EUROPEPMC_ENABLED", "false")
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", str(configured.llm.base_url))
    monkeypatch.setenv("MEDLIT_LLM_MODEL", "fake-model")


def test_pubmed_out_of_reach_with_a_loaded_local_corpus_is_usable_offline(
    configured: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    _environment(configured, monkeypatch)
    monkeypatch.setenv("MEDLIT_PUBMED_BASE_URL", f"http://127.0.0.1:{_closed_port()}/eutils/")
    runner = CliRunner()
    empty = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert empty.exit_code == 1 and "not usable" in empty.stdout  # no documents: no way in
    assert "medlit corpus add FILES (or --sample)" in empty.stdout
    with LocalCorpus.from_settings(configured) as corpus:
        corpus.add_articles(sample_articles())
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "usable offline" in result.stdout and "not usable" not in result.stdout
    pubmed = next(line for line in result.stdout.splitlines() if "pubmed:" in line)
    assert pubmed.startswith("FAIL") and "refuses connections; no API key" in pubmed
    # each piece of advice once, and no stray punctuation where the detail ends
    assert result.stdout.count("MEDLIT_PUBMED_BASE_URL") == 1 and ".;" not in result.stdout
    assert "ask the local corpus (6 articles) with --source local" in result.stdout
    body = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert (body["usable"], body["offline"]) == (True, True)


def test_the_command_exits_1_when_unusable_and_prints_json(
    configured: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLIT_HOME", str(configured.home))
    monkeypatch.setenv("MEDLIT_PUBMED_BASE_URL", configured.pubmed.base_url)
    monkeypatch.setenv("MEDLIT_EUROPEPMC_ENABLED", "false")
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", str(configured.llm.base_url))
    monkeypatch.setenv("MEDLIT_LLM_MODEL", "fake-model")
    runner = CliRunner()
    healthy = runner.invoke(app, ["doctor", "--json"])
    assert healthy.exit_code == 0, healthy.output
    body = json.loads(healthy.stdout)
    assert body["usable"] is True and {i["area"] for i in body["items"]} >= {"llm", "store"}
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    broken = runner.invoke(app, ["doctor"])
    assert broken.exit_code == 1
    assert "FAIL" in broken.stdout and "not usable" in broken.stdout


def test_the_self_test_questions_are_in_the_sample_corpus() -> None:
    import gzip

    from medlit.doctor.self_test import _sample_corpus

    with gzip.open(_sample_corpus()) as sample:
        corpus = sample.read().decode()
    questions = load_questions()
    assert len(questions) == 5
    assert {q["label"] for q in questions} <= {"yes", "no", "uncertain"}
    for case in questions:
        assert f">{case['pmid']}</PMID>" in corpus
