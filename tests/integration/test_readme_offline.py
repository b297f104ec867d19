"""The README's offline path, run as the README writes it: the sample corpus added, the
question it then asks answered from it (citing a sample article), and research tried against
the fakes. The commands are read out of README.md, so the test breaks when the README drifts.

Nothing here reaches the network: the PubMed base URL points at a loopback port nobody serves
(what offline looks like), and the research demo starts its own fakes on loopback.
"""

from __future__ import annotations

import gzip
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from medlit.cli.corpus import sample_corpus_path, sample_questions
from medlit.doctor.self_test import load_questions
from tests.fakes.demo import demo_articles

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\s*$")


def _blocks(text: str) -> list[list[str]]:
    """The README's bash code blocks, each as its command lines."""
    blocks: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        fence = FENCE.match(line.strip())
        if fence:
            inside = not inside and fence.group(1) in ("bash", "sh")
            if inside:
                blocks.append([])
            continue
        if inside and line.strip() and not line.lstrip().startswith("#"):
            blocks[-1].append(line.strip())
    return blocks


def _block_with(needle: str) -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = [block for block in _blocks(readme) if any(needle in line for line in block)]
    assert len(found) == 1, f"the README has no single block with {needle!r}"
    return found[0]


def _argv(line: str) -> list[str]:
    """A README line as this environment runs it: the clone's ``.venv`` is this Python (in
    the command the demo runs too)."""
    args = shlex.split(line)
    assert {".venv/bin/medlit", ".venv/bin/python"} >= {args[0]}, line
    venv = {
        ".venv/bin/medlit": [sys.executable, "-m", "medlit"],
        ".venv/bin/python": [sys.executable],
    }
    return [part for arg in args for part in venv.get(arg, [arg])]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    offline = f"http://127.0.0.1:{_closed_port()}/"
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        MEDLIT_HOME=str(home),
        MEDLIT_PUBMED_BASE_URL=f"{offline}entrez/eutils/",
        MEDLIT_EUROPEPMC_BASE_URL=f"{offline}europepmc/webservices/rest/",
        HF_HUB_OFFLINE="1",
        COLUMNS="200",
    )
    return env


def _run(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _argv(line), env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def _sample_pmids() -> set[str]:
    xml = gzip.decompress(sample_corpus_path().read_bytes()).decode("utf-8")
    return set(re.findall(r'<PMID Version="\d+">(\d+)</PMID>', xml))


def test_the_readme_offline_example_is_answered_from_the_sample(tmp_path: Path) -> None:
    add, ask = _block_with("corpus add --sample")
    env = _env(tmp_path / "home")
    added = _run(add, env, ROOT)
    assert added.returncode == 0, added.stderr
    assert "added 60" in added.stdout
    question = shlex.split(ask)[2]
    # What corpus add --sample prints to try is what the README asks.
    for example in sample_questions():
        assert f"medlit ask {shlex.quote(example)} --source local" in added.stdout
    assert question in sample_questions()
    answered = _run(ask, env, ROOT)
    assert answered.returncode == 0, answered.stderr
    lines = answered.stdout.splitlines()
    case = next(c for c in load_questions() if c["question"] == question)
    assert lines[0] == f"Verdict: {case['label'].capitalize()}"  # the expert's label
    cited = set(re.findall(r"\[PMID:(\d+)\]", answered.stdout))
    assert case["pmid"] in cited and cited <= _sample_pmids()
    assert "local corpus search" in lines[-1]


def test_the_readme_research_demo_writes_a_referenced_report(tmp_path: Path) -> None:
    (line,) = _block_with("tests.fakes.demo")
    env = _env(tmp_path / "home")
    # From the clone's root in the README; here tests/ is on PYTHONPATH and the report
    # lands in the test's own directory.
    done = _run(line, env, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Does aspirin prevent recurrent stroke, and at what bleeding cost?" in report
    pmids = set(re.findall(r"PMID:? ?(\d{8})", report))
    assert pmids and pmids <= {a.pmid for a in demo_articles()}
    assert "99999999" not in report  # the fake model's invented citation was stripped


@pytest.mark.parametrize("needle", ["corpus add --sample", "tests.fakes.demo"])
def test_the_readme_offline_commands_run_from_a_clone(needle: str) -> None:
    for line in _block_with(needle):
        assert shlex.split(line)[0] in (".venv/bin/medlit", ".venv/bin/python"), line
