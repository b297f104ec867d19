"""``benchmarks/ablation.py --model``: the verdicts of changed texts read by a model, and kept.

Replays twelve recorded answers of the check half against the fake OpenAI-compatible server:
the texts no one had read are asked through the assistant's own verdict call, each read is
kept, and a rerun (with or without the model) asks nothing again.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from medlit.checks.verdict import verdict_messages
from tests.conftest import shared_data_path
from tests.fakes.llm_server import FakeLLMServer, Reply

pytestmark = pytest.mark.slow  # twelve answers replayed with each check off, several times

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _ablation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ablation", BENCHMARKS / "ablation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ablation", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def replay(tmp_path: Path) -> tuple[ModuleType, list[str]]:
    """The ablation module and its arguments over twelve recorded check-half answers."""
    data = shared_data_path("pubmedqa", "pqal_dev.json")
    ablation = _ablation()
    lines = (BENCHMARKS / "data" / "recorded_answers.jsonl").read_text().splitlines()
    rows = [line for line in lines if ablation.half_of(json.loads(line)["pmid"]) == "check"]
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text("".join(f"{line}\n" for line in rows[:12]))
    reads = tmp_path / "reads.jsonl"
    return ablation, ["--data", str(data), "--recorded", str(recorded), "--reads", str(reads)]


def _figures(out: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in out.strip().splitlines()[-1].split())


def _model(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MEDLIT_LLM_MODEL", "fake-reader")
    monkeypatch.setenv("MEDLIT_LLM_API_KEY", "local")
    monkeypatch.setenv("MEDLIT_LLM_MAX_RETRIES", "0")


def test_the_model_reads_what_was_never_read_and_a_rerun_needs_no_model(
    replay: tuple[ModuleType, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ablation, args = replay
    assert ablation.main(args) == 0
    before = _figures(capsys.readouterr().out)
    assert int(before["unread"]) > 0 and before["reads_kept"] == "0"

    with FakeLLMServer() as server:
        server.responder = lambda req: Reply.scored({"No": 0.9, "Yes": 0.05, "Uncertain": 0.05})
        _model(monkeypatch, server)
        assert ablation.main([*args, "--model"]) == 0
        asked = [r.messages for r in server.completions]
    out = capsys.readouterr().out
    after = _figures(out)
    assert after["unread"] == "0" and "read   1/" in out
    kept = [json.loads(line) for line in Path(args[-1]).read_text().splitlines()]
    assert len(kept) == len(asked) == int(after["reads_kept"]) > 0
    assert {k["verdict"] for k in kept} == {"no"} and {k["model"] for k in kept} == {"fake-reader"}
    # The assistant's own verdict call, on the changed text.
    assert asked == [verdict_messages(k["question"], k["text"], json_reply=False) for k in kept]

    monkeypatch.delenv("MEDLIT_LLM_MODEL")
    assert ablation.main(args) == 0  # no model: the kept reads stand
    assert _figures(capsys.readouterr().out) == after

    with FakeLLMServer() as server:  # resumed: only the read not kept is asked again
        Path(args[-1]).write_text("".join(f"{json.dumps(k)}\n" for k in kept[1:]))
        server.responder = lambda req: Reply.scored({"No": 0.9, "Yes": 0.05, "Uncertain": 0.05})
        _model(monkeypatch, server)
        assert ablation.main([*args, "--model"]) == 0
        assert [r.messages for r in server.completions] == asked[:1]
    assert _figures(capsys.readouterr().out) == after


def test_failed_reads_are_not_kept_and_stop_the_reading(
    replay: tuple[ModuleType, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ablation, args = replay
    assert ablation.main(args) == 0
    before = _figures(capsys.readouterr().out)
    with FakeLLMServer() as server:
        server.responder = lambda req: Reply.server_error()
        _model(monkeypatch, server)
        assert ablation.main([*args, "--model"]) == 0
    out = capsys.readouterr().out
    assert "3 reads failed in a row: stopped" in out
    assert _figures(out) == before
    assert not Path(args[-1]).exists()


def test_model_mode_without_a_model_says_what_to_set(
    replay: tuple[ModuleType, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    ablation, args = replay
    assert ablation.main([*args, "--model"]) == 2
    assert "set MEDLIT_LLM_MODEL" in capsys.readouterr().out
