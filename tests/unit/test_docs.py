"""The README and the docs site match the code: generated pages in sync, every CLI example runs.

Every ``medlit ...`` command in a ``bash`` code block of README.md or docs/*.md is parsed by the
real command-line application (its subcommands, options and option values must exist); the
README's first ``medlit ask`` runs for real against the fake E-utilities server.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from medlit.cli import app
from medlit.docs_ref import PAGES, config_reference, http_api_reference, main
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.sample_corpus import sample_corpus

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\s*$")
INLINE = re.compile(r"(?<!`)`((?:\S*/)?medlit [^`]+)`(?!`)")
SEPARATORS = {"&&", "||", ";", "|", "&"}


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def _shell_lines(text: str) -> list[str]:
    """The lines of the ``bash``/``sh``/``console`` code blocks, continuations joined."""
    lines: list[str] = []
    language: str | None = None
    pending = ""
    for raw in text.splitlines():
        fence = FENCE.match(raw.strip())
        if fence:
            language = None if language is not None else fence.group(1)
            continue
        if language not in ("bash", "sh", "shell", "console"):
            continue
        line = raw.strip().removeprefix("$ ")
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    return lines


def medlit_commands(text: str) -> list[list[str]]:
    """Each ``medlit`` command line of ``text``'s shell blocks, as its arguments."""
    commands = []
    for line in _shell_lines(text):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as exc:  # an unbalanced quote is a broken example
            raise AssertionError(f"cannot parse the shell line {line!r}: {exc}") from exc
        segment: list[str] = []
        for token in [*tokens, ";"]:
            if token not in SEPARATORS:
                segment.append(token)
                continue
            while segment and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", segment[0]):
                segment.pop(0)  # VAR=value before the command
            if segment and Path(segment[0]).name == "medlit":
                commands.append(segment[1:])
            segment = []
    return commands


def inline_commands(text: str) -> list[list[str]]:
    """Each ``medlit ...`` command written as inline code in the prose (outside code blocks)."""
    prose, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            inside = not inside
        elif not inside:
            prose.append(line)
    return medlit_commands("```bash\n" + "\n".join(INLINE.findall("\n".join(prose))) + "\n```")


def _examples(inline: bool) -> list[tuple[str, list[str]]]:
    found = []
    for path in _documents():
        text = path.read_text(encoding="utf-8")
        for args in inline_commands(text) if inline else medlit_commands(text):
            found.append((f"{path.relative_to(ROOT)}: medlit {shlex.join(args)}", args))
    return found


EXAMPLES = _examples(inline=False)
#: Commands named in the prose (`medlit serve --workers-research N`): placeholders for values.
MENTIONS = _examples(inline=True)


def _resolve(name: str, args: list[str]) -> tuple[Any, list[str], list[str]]:
    """The click command ``args`` name, its path, and the arguments left for it."""
    command: Any = typer.main.get_command(app)
    rest = list(args)
    path = ["medlit"]
    while hasattr(command, "commands") and rest:
        if rest[0] in command.commands:
            path.append(rest[0])
            command = command.commands[rest.pop(0)]
        elif "run" in command.commands:  # medlit research "question": the question-first group
            path.append("run")
            command = command.commands["run"]
        else:
            break
    assert not hasattr(command, "commands") or not rest, f"{name}: no subcommand {rest[:1]}"
    return command, path, rest


def test_the_docs_have_cli_examples() -> None:
    assert len(EXAMPLES) >= 30, [name for name, _ in EXAMPLES]
    assert any(name.startswith("README.md") for name, _ in EXAMPLES)


@pytest.mark.parametrize(("name", "args"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_cli_example_parses(name: str, args: list[str]) -> None:
    """The command path, every option and every option value of the example exist."""
    command, path, rest = _resolve(name, args)
    assert not hasattr(command, "commands"), f"{name}: {path} needs a subcommand"
    ctx = command.make_context(" ".join(path), rest)  # raises on an unknown option or value
    assert not ctx.args, f"{name}: arguments left over: {ctx.args}"


@pytest.mark.parametrize(("name", "args"), MENTIONS, ids=[name for name, _ in MENTIONS])
def test_cli_mention_names_real_commands_and_options(name: str, args: list[str]) -> None:
    """A command named in the prose exists, with every option it shows."""
    command, _, rest = _resolve(name, args)
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    known |= {"--help"}
    shown = {arg.split("=", 1)[0] for arg in rest if arg.startswith("-")}
    assert shown <= known, f"{name}: unknown options {sorted(shown - known)}"


def test_the_readme_ask_example_answers_from_the_fake_pubmed(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ask = next(args for args in medlit_commands(readme) if args[:1] == ["ask"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    with FakeEutils(articles=sample_corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        env.update(
            MEDLIT_HOME=str(tmp_path),
            MEDLIT_PUBMED_BASE_URL=fake.base_url,
            HF_HUB_OFFLINE="1",
            COLUMNS="250",
        )
        done = subprocess.run(
            [sys.executable, "-c", "from medlit.cli import main; main()", *ask],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert fake.served("esearch") >= 1 and fake.served("efetch") >= 1
    assert "https://pubmed.ncbi.nlm.nih.gov/3900000" in done.stdout
    assert "[PMID:3900000" in done.stdout


def test_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    too_long = [n for n, line in enumerate(lines, start=1) if len(line) > 200]
    assert not too_long, f"README lines over 200 characters: {too_long}"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test_command = next(line for line in _shell_lines(readme) if "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()
    assert "torch" not in test_command and "-c requirements/lock.txt" in test_command


@pytest.mark.parametrize("name", sorted(PAGES))
def test_generated_page_is_in_sync(name: str) -> None:
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == PAGES[name](), f"docs/{name} is stale: run python -m medlit.docs_ref"


def test_configuration_page_names_every_setting() -> None:
    from medlit.config import Settings

    page = config_reference()
    for name, field in Settings.model_fields.items():
        sub = getattr(field.annotation, "model_fields", None)
        if sub is None:
            assert f"`MEDLIT_{name.upper()}`" in page
        else:
            for key in sub:
                assert f"`MEDLIT_{name.upper()}_{key.upper()}`" in page


def test_configuration_headings_and_section_titles_read_as_sentences() -> None:
    """A heading is a section's name alone, and the sentence under it is its docstring's first
    paragraph whole: a heading cut mid-sentence ("...read for the articles an") or one that
    names a function ("`search`: search_all_providers.") fails."""
    lines = config_reference().splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("#")]
    for i in headings:
        heading = lines[i]
        assert re.fullmatch(r"# Configuration reference|## General|## `[a-z_]+`", heading), heading
        if not heading.startswith("## `"):
            continue
        sentence = lines[i + 2]
        assert lines[i + 1] == "" and lines[i + 3] == "", heading
        assert sentence[0].isupper() and sentence.endswith("."), (heading, sentence)
        assert sentence.count("(") == sentence.count(")"), sentence
        assert "``" not in sentence and ":mod:" not in sentence, sentence
        # A bare identifier (search_all_providers) is code, not a sentence.
        bare = re.sub(r"`[^`]*`", "", sentence)
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", bare), sentence
    assert len([i for i in headings if lines[i].startswith("## `")]) >= 10


def test_http_api_page_lists_every_route() -> None:
    spec = {
        "info": {"summary": "S."},
        "paths": {
            "/v1/x": {
                "get": {
                    "summary": "An x",
                    "parameters": [
                        {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "OK", "content": {}}},
                }
            }
        },
        "components": {"schemas": {"X": {"properties": {"a": {"type": "integer"}}}}},
    }
    page = http_api_reference(spec)
    assert "### `GET /v1/x`" in page and "| `q` | query | string | yes |" in page
    assert "### X" in page and "| `a` | integer | no |" in page


def test_docs_ref_check_reports_a_stale_page(tmp_path: Path) -> None:
    assert main(["--docs", str(tmp_path)]) == 0  # writes both pages
    assert main(["--docs", str(tmp_path), "--check"]) == 0
    (tmp_path / "configuration.md").write_text("stale\n", encoding="utf-8")
    assert main(["--docs", str(tmp_path), "--check"]) == 1


def test_the_readme_links_to_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to its docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing
