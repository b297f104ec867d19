"""``medlit ask`` as a user runs it: a subprocess against the fake E-utilities server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.eutils_server import FakeEutils
from tests.integration.test_ask_flow import Q1, corpus


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def _run(
    home: Path, eutils: FakeEutils, *args: str, columns: int = 250
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(
        MEDLIT_HOME=str(home),
        MEDLIT_PUBMED_BASE_URL=eutils.base_url,
        MEDLIT_PUBMED_REQUESTS_PER_SECOND="50",
        MEDLIT_AGENT_MIN_DOCS="2",
        HF_HUB_OFFLINE="1",
        COLUMNS=str(columns),
    )
    return subprocess.run(
        [sys.executable, "-c", "from medlit.cli import main; main()", "ask", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_ask_json_miss_then_hit(tmp_path: Path, eutils: FakeEutils) -> None:
    first = _run(tmp_path, eutils, Q1, "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)  # exactly one JSON object on stdout
    assert data["cache"]["tier1"] == "miss"
    assert data["api_calls"]["pubmed"] >= 1 and data["api_calls"]["llm"] == 0
    assert data["mode"] == "evidence_digest"
    assert data["citations"] and all(c["pmid"] for c in data["citations"])
    for key in ("answer", "verdict", "stop_reason", "timings_ms", "standalone_question"):
        assert key in data
    served = len(eutils.history)

    second = _run(tmp_path, eutils, Q1, "--json")
    assert second.returncode == 0, second.stderr
    hit = json.loads(second.stdout)
    assert hit["cache"]["tier1"] == "hit"
    assert hit["api_calls"] == {"pubmed": 0, "europepmc": 0, "local": 0, "llm": 0, "full_text": 0}
    assert len(eutils.history) == served
    assert hit["answer"] == data["answer"]


FOOTER = re.compile(
    r"^(?:answered from cache \(checked (?:just now|\d+ min ago)\) · no searches"
    r"|\d+ PubMed calls?) · \d+\.\d s$"
)
LINK = re.compile(r"https://pubmed\.ncbi\.nlm\.nih\.gov/\d+/")


def test_ask_human_output_and_bad_input(tmp_path: Path, eutils: FakeEutils) -> None:
    human = _run(tmp_path, eutils, Q1)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.rstrip("\n").splitlines()
    assert lines[0] == "Verdict: Yes"  # one spelling: as the page and the answer write it
    assert "Citations" in human.stdout and "pubmed.ncbi.nlm.nih.gov" in human.stdout
    assert FOOTER.match(lines[-1]), lines[-1]  # "3 PubMed calls · 2.1 s": plain words
    assert "tier 1" not in human.stdout and "stop:" not in human.stdout
    # In an 80-column terminal a citation is one cell, its link whole on a line of its own:
    # columns of their own left the title 16 characters a line, a word or two per line.
    narrow = _run(tmp_path, eutils, Q1, columns=80)
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.rstrip("\n").splitlines()
    assert FOOTER.match(lines[-1]) and lines[-1].startswith(
        "answered from cache (checked just now) · no"
    )
    table = narrow.stdout[narrow.stdout.index("Citations") :]
    assert all(len(line) <= 80 for line in table.splitlines())
    cells = [line.split("│")[2].strip() for line in table.splitlines() if line.count("│") == 3]
    assert "https://pubmed.ncbi.nlm.nih.gov/31000002/" in cells
    assert any(cell.startswith("Aspirin for primary prevention of stroke") for cell in cells)
    # The closest cached question (0.97) is refused by the guard: --verbose says why.
    cause = _run(tmp_path, eutils, "Does aspirin cause stroke in adults?", "--verbose")
    assert cause.returncode == 0, cause.stderr
    assert "miss (guard_rejected: differs: cause / prevent)" in cause.stdout
    for internal in ("stop rule: ", "mode: evidence_digest", "evidence reused: "):
        assert internal in cause.stdout
    empty = _run(tmp_path, eutils, "   ")
    assert empty.returncode == 2 and "empty" in empty.stderr
    long = _run(tmp_path, eutils, "why " * 400)
    assert long.returncode == 2 and "too long" in long.stderr


@pytest.mark.parametrize("columns", [80, 120])
def test_links_are_never_split(tmp_path: Path, eutils: FakeEutils, columns: int) -> None:
    shown = _run(tmp_path, eutils, Q1, "--no-cache", columns=columns)
    assert shown.returncode == 0, shown.stderr
    table = shown.stdout[shown.stdout.index("Citations") :]
    assert all(len(line) <= columns for line in table.splitlines())
    # Every citation's link whole on one line: clickable, copyable.
    assert sorted(LINK.findall(table)) == sorted(
        f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/" for pmid in re.findall(r"│ (\d{8}) ", table)
    )
    assert len(LINK.findall(table)) >= 3
