"""``medlit research`` command lines: a question first, or a subcommand."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from medlit.cli import app

runner = CliRunner()


def test_list_with_no_jobs() -> None:
    result = runner.invoke(app, ["research", "list"])
    assert result.exit_code == 0, result.output
    assert "No research jobs yet" in result.output


def test_status_of_an_unknown_job_exits_4() -> None:
    result = runner.invoke(app, ["research", "status", "nope"])
    assert result.exit_code == 4
    assert "no research job 'nope'" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["research", "does X reduce Y?"],
        ["research", "--depth", "quick", "does X reduce Y?"],
        ["research", "does X reduce Y?", "--depth", "deep", "--json"],
        ["research", "run", "list"],  # a question that is a subcommand's name
    ],
)
def test_a_question_without_a_model_fails_fast_with_the_how_to(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 6, result.output
    assert "No language model is configured for task 'plan_research'" in result.output
    assert "MEDLIT_LLM_BASE_URL" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["research", "   "], "empty"),
        (["research", "--depth", "quick", ""], "empty"),
    ],
)
def test_invalid_input_exits_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_bad_depth_is_rejected_by_the_option() -> None:
    result = runner.invoke(app, ["research", "q?", "--depth", "thorough"])
    assert result.exit_code == 2
    assert "thorough" in result.output


def test_help_lists_the_subcommands() -> None:
    result = runner.invoke(app, ["research", "--help"])
    assert result.exit_code == 0
    for name in ("run", "status", "list", "resume"):
        assert name in result.output
