"""``medlit config`` shows the settings in force and never prints a secret."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from medlit.cli import app


def test_config_json_masks_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_PUBMED_API_KEY", "ncbi-secret-123")
    monkeypatch.setenv("MEDLIT_LLM_API_KEY", "sk-secret-456")
    monkeypatch.setenv("MEDLIT_LLM_MODEL", "llama3.1")
    result = CliRunner().invoke(app, ["config", "--json"])
    assert result.exit_code == 0, result.output
    assert "ncbi-secret-123" not in result.output
    assert "sk-secret-456" not in result.output
    data = json.loads(result.output)
    assert data["pubmed"]["api_key"] == "**********"
    assert data["llm"]["model"] == "llama3.1"


def test_config_table_says_what_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEDLIT_LLM_TASKS", '{"synthesize": {"model": "big-model"}}')
    result = CliRunner().invoke(app, ["config"])
    assert result.exit_code == 0, result.output
    assert "llm.synthesize" in result.output and "big-model" in result.output
    assert "llm.answer" in result.output and "not configured" in result.output
    assert "requests_per_second  3.0" in result.output


def test_bad_setting_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_CACHE_TAU", "1.7")
    result = CliRunner().invoke(app, ["config"])
    assert result.exit_code == 3
    assert "cache.tau" in result.output
    assert "Traceback" not in result.output
