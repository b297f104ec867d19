"""What a person reads in the terminal: help in words, --version, the footer under an answer."""

from __future__ import annotations

import itertools
import re
import time

import pytest
from rich.console import Console
from typer.testing import CliRunner

from medlit import __version__
from medlit.assistant import AskResult, CacheInfo, CallCounts, RecheckInfo
from medlit.cli import app
from medlit.cli.app import reflowed
from medlit.cli.footer import footer_line, recheck_line, refused_hit_line, verbose_lines
from medlit.types import VerdictCause

runner = CliRunner()

#: Every command and subcommand whose help is read.
COMMANDS = [
    [],
    ["ask"],
    ["search"],
    ["research"],
    ["research", "run"],
    ["research", "export"],
    ["research", "list"],
    ["corpus"],
    ["corpus", "add"],
    ["cache"],
    ["serve"],
    ["config"],
]
PYTHON_TYPES = re.compile(r"<(?:bool|str|int|float|list\[[a-z]+\]|path)>|list\[str\]")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "medlit")
def test_help_names_no_python_types(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert not PYTHON_TYPES.search(result.stdout), result.stdout
    assert "settings." not in result.stdout  # a default is a value, not a settings path


def _description(help_text: str) -> list[list[str]]:
    """The prose between the usage line and the first box, as paragraphs of lines."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("╭")), len(lines))
    paragraphs: list[list[str]] = [[]]
    for line in lines[start:end]:
        if line.strip():
            paragraphs[-1].append(line.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "medlit")
def test_help_wraps_only_where_the_terminal_ends(command: list[str], columns: int) -> None:
    """A command's help breaks a line where the terminal needs it, not where its docstring's
    source did: "...the requests it cost and the time" / "("3 PubMed calls · 2.1 s")" broke
    mid-phrase. Every line of a paragraph but its last fills the width but for a word."""
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    for paragraph in _description(result.stdout):
        for line, after in itertools.pairwise(paragraph):
            next_word = after.split()[0]
            assert len(line) + 1 + len(next_word) > columns - 2, (line, after)


def test_reflowed_joins_a_docstring_s_lines_and_keeps_its_paragraphs() -> None:
    text = "First line.\n\n    Under the answer, one\n    line says.\n\n    \b\n    kept\n    as is"
    assert reflowed(text) == "First line.\n\nUnder the answer, one line says.\n\n\b\nkept\nas is"


def test_help_shows_real_defaults_and_human_metavars() -> None:
    ask = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "140"}).stdout
    assert "QUESTION" in ask and "pubmed|europepmc|local|all" in ask
    assert "default: pubmed; MEDLIT_SEARCH_DEFAULT_SOURCE changes it" in ask
    assert "--verbose" in ask
    search = runner.invoke(app, ["search", "--help"], env={"COLUMNS": "140"}).stdout
    assert re.search(r"--limit\s+-n\s+INTEGER", search)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"medlit {__version__}\n"


def test_research_help_shows_the_question_options() -> None:
    result = runner.invoke(app, ["research", "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0
    for option in ("--depth", "quick|standard|deep", "[default: standard]", "--out", "--json"):
        assert option in result.stdout
    for command in ("status", "list", "resume", "cancel", "export"):
        assert command in result.stdout


def _result(*, hit: bool, pubmed: int = 0, llm: int = 0, ms: float = 400.0) -> AskResult:
    return AskResult(
        question="q",
        answer="a",
        cache=CacheInfo(
            tier1="hit" if hit else "miss",
            miss_reason=None if hit else "guard_rejected",
            guard_reason=None if hit else "different drug: ibuprofen vs acetaminophen",
            similarity=0.97,
            evidence_reused=4,
        ),
        stop_reason="cache_hit" if hit else "threshold",
        api_calls=CallCounts(pubmed=pubmed, llm=llm),
        timings_ms={"plan_query": 12.0, "total": ms},
        standalone_question="q",
        mode="llm" if llm else "evidence_digest",
    )


def test_footer_in_plain_words() -> None:
    assert footer_line(_result(hit=True)) == "answered from cache · no searches · 0.4 s"
    checked = _result(hit=True)
    checked.cache.checked_at = time.time() - 3 * 86400 - 60
    assert footer_line(checked) == (
        "answered from cache (checked 3 days ago) · no searches · 0.4 s"
    )
    assert footer_line(_result(hit=False, pubmed=3, llm=1, ms=2100)) == (
        "3 PubMed calls · 1 LLM call · 2.1 s"
    )
    one = _result(hit=False, pubmed=1, ms=950)
    one.api_calls.europepmc = 2
    assert footer_line(one) == "1 PubMed call · 2 Europe PMC calls · 0.9 s"
    local = _result(hit=False, ms=50)
    local.api_calls.local = 1
    assert footer_line(local) == "1 local corpus search · 0.1 s"
    local.api_calls.local = 3
    assert footer_line(local) == "3 local corpus searches · 0.1 s"


def test_the_footer_never_counts_a_source_that_was_not_asked() -> None:
    """An answer from the local corpus, fresh or from the cache, never reads "0 PubMed calls"."""
    local = _result(hit=False, ms=50)
    local.api_calls.local = 2
    assert "PubMed" not in footer_line(local)
    cached = _result(hit=True)
    assert "PubMed" not in footer_line(cached)
    assert not any(part.startswith("0 ") for part in footer_line(cached).split(" · "))


def test_footer_shows_tokens_and_a_cost_only_where_priced() -> None:
    result = _result(hit=False, pubmed=3, llm=2, ms=2100)
    result.usage = {"tokens": 1234, "cost_usd": 0.0}
    assert footer_line(result) == "3 PubMed calls · 2 LLM calls · 1,234 tokens · 2.1 s"
    result.usage = {"tokens": 1234, "cost_usd": 0.00061}
    assert footer_line(result) == "3 PubMed calls · 2 LLM calls · 1,234 tokens · $0.0006 · 2.1 s"


def test_the_footer_counts_full_texts_read_not_the_requests_for_them() -> None:
    looked = _result(hit=False, pubmed=2, ms=1000)
    looked.api_calls.full_text = 3  # three lookups, nothing open access
    assert footer_line(looked) == "2 PubMed calls · 1.0 s"
    looked.full_texts_read = 1
    assert footer_line(looked) == "2 PubMed calls · 1 full text read · 1.0 s"


def test_a_refused_cache_hit_says_why_in_one_line() -> None:
    assert refused_hit_line(_result(hit=False)) == (
        "not answered from cache: a similar question was refused "
        "(different drug: ibuprofen vs acetaminophen)"
    )
    assert refused_hit_line(_result(hit=True)) is None
    elsewhere = _result(hit=False)
    elsewhere.cache.miss_reason = "other_source"
    elsewhere.cache.guard_reason = "cached answer came from http://127.0.0.1:8765/ not https://x/"
    assert refused_hit_line(elsewhere) == (
        "not answered from cache: cached answer came from http://127.0.0.1:8765/ not https://x/"
    )


def test_verbose_lines_hold_the_internals() -> None:
    lines = verbose_lines(_result(hit=False, pubmed=3))
    assert lines[0] == (
        "cache: tier 1 miss (guard_rejected: different drug: ibuprofen vs acetaminophen); "
        "stored in tier 1: no"
    )
    assert "evidence reused: 4 chunks" in lines and "stop rule: threshold" in lines
    assert "mode: evidence_digest" in lines and lines[-1] == "steps: plan_query 12 ms"
    assert not any(line.startswith("verdict withheld") for line in lines)
    withheld = _result(hit=False, pubmed=3)
    withheld.verdict = "uncertain"
    withheld.verdict_cause = VerdictCause(
        kind="policy", rule="too-few-sources", detail="too little evidence to say"
    )
    assert "verdict withheld: policy too-few-sources: too little evidence to say" in verbose_lines(
        withheld
    )


@pytest.mark.parametrize("width", [80, 120])
def test_footer_never_wraps(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import medlit.cli.ask_run as ask_module

    result = _result(hit=False, pubmed=123, llm=45, ms=123_456)
    result.api_calls.europepmc = 678
    result.api_calls.local = 9
    screen = Console(width=width, record=True, color_system=None)
    monkeypatch.setattr(ask_module, "console", screen)
    monkeypatch.setattr(ask_module, "err_console", screen)
    ask_module._render(result)
    last = screen.export_text().rstrip("\n").splitlines()[-1]
    assert last.startswith("123 PubMed calls · 678 Europe PMC calls")
    assert len(last) <= width


def test_one_verdict_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    import medlit.cli.ask_run as ask_module

    result = _result(hit=True)
    result.verdict = "uncertain"
    result.answer = "Verdict: Uncertain\n\nThe evidence conflicts [PMID:1]."
    screen = Console(width=80, record=True, color_system=None)
    monkeypatch.setattr(ask_module, "console", screen)
    ask_module._render(result)
    text = screen.export_text()
    assert text.startswith("Verdict: Uncertain\n") and text.count("ncertain") == 1


def test_a_process_that_is_medlit_ask_registers_the_ask_command_alone() -> None:
    from medlit.cli import COMMAND_MODULES, _commands_to_load

    assert _commands_to_load(["/venv/bin/medlit", "ask", "q"]) == ("ask",)
    assert _commands_to_load(["/x/site-packages/medlit/__main__.py", "ask", "q"]) == ("ask",)
    for argv in (
        ["/venv/bin/medlit", "--help"],
        ["/venv/bin/medlit", "cache", "stats"],
        ["/venv/bin/medlit", "--version", "ask"],
        ["-c", "ask"],  # python -c "from medlit.cli import main; main()": not known as the CLI
        ["/venv/bin/pytest", "ask"],
        ["/x/other/__main__.py", "ask"],
        [],
    ):
        assert _commands_to_load(argv) == COMMAND_MODULES, argv


def test_a_recheck_says_what_changed_in_one_line() -> None:
    result = _result(hit=False, pubmed=2, llm=1)
    assert recheck_line(result) is None
    result.cache.recheck = RecheckInfo(status="unchanged", since=0.0)
    assert recheck_line(result) is None  # the footer says "(checked just now)"
    result.cache.recheck = RecheckInfo(
        status="changed",
        since=0.0,
        new_articles=1,
        new_pmids=["39100001"],
        verdict_before="yes",
        verdict_after="no",
        verdict_turned=True,
        new_citations=["39100001"],
    )
    assert recheck_line(result) == (
        "rechecked: 1 new article (PMID 39100001), answered again; verdict turned: Yes → No; "
        "new citations: PMID 39100001"
    )
    result.cache.recheck = RecheckInfo(status="failed", since=0.0, error="pubmed: HTTP 503")
    assert recheck_line(result) == "not checked for new articles: pubmed: HTTP 503"
