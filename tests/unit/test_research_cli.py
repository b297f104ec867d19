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


def test_failed_llm_attempts_are_not_counted_as_calls_made() -> None:
    from medlit.cli.research import _llm_calls
    from medlit.usage import Usage, record_llm, usage_scope

    with usage_scope() as usage:
        record_llm("extract_facts", prompt_tokens=100, completion_tokens=20)
        for _ in range(4):  # what a resume after an outage saw: zero-token failures
            record_llm("cross_reference", failed=True)
    saved = Usage.from_dict(usage.to_dict())  # as a job persists it
    assert (saved.llm_calls, saved.llm_failed, saved.llm_succeeded) == (5, 4, 1)
    assert saved.tokens == 120 and saved.llm["cross_reference"].failed == 4
    assert _llm_calls(saved.to_dict()) == "1 (5 attempts, 4 failed)"
    assert _llm_calls({"llm_calls": 3}) == "3"  # a job saved before failures were counted


def test_words_after_a_subcommand_are_refused_with_the_quoted_question(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from medlit.cli import main

    monkeypatch.setattr(sys, "argv", ["medlit", "research", "list", "of", "statin", "trials"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'medlit research list' takes no words, not 'of statin trials'" in err
    assert "medlit research 'list of statin trials'" in err


def test_a_bug_while_reading_the_command_line_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    import medlit.cli.research
    from medlit.cli import main

    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(medlit.cli.research, "_question_after_subcommand", broken)
    monkeypatch.setattr(sys, "argv", ["medlit", "research", "status", "3f2a9c"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        "error: unexpected RuntimeError: boom (a bug in medlit; MEDLIT_LOG_LEVEL=debug shows where)"
    ]
