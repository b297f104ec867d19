"""``medlit ask`` as a user runs it: a subprocess against the fake E-utilities server."""

from __future__ import annotations

import json
import os
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
    assert hit["api_calls"] == {"pubmed": 0, "europepmc": 0, "local": 0, "llm": 0}
    assert len(eutils.history) == served
    assert hit["answer"] == data["answer"]


def test_ask_human_output_and_bad_input(tmp_path: Path, eutils: FakeEutils) -> None:
    human = _run(tmp_path, eutils, Q1)
    assert human.returncode == 0, human.stderr
    assert "Citations" in human.stdout and "cache: tier 1 miss" in human.stdout
    assert "pubmed.ncbi.nlm.nih.gov" in human.stdout
    # In an 80-column terminal a citation is one cell, its link whole on a line of its own:
    # columns of their own left the title 16 characters a line, a word or two per line.
    narrow = _run(tmp_path, eutils, Q1, columns=80)
    assert narrow.returncode == 0, narrow.stderr
    table = narrow.stdout[narrow.stdout.index("Citations") : narrow.stdout.index("cache:")]
    assert all(len(line) <= 80 for line in table.splitlines())
    cells = [line.split("│")[2].strip() for line in table.splitlines() if line.count("│") == 3]
    assert "https://pubmed.ncbi.nlm.nih.gov/31000002/" in cells
    assert any(cell.startswith("Aspirin for primary prevention of stroke") for cell in cells)
    # The closest cached question (0.97) is refused by the guard: the line says why.
    cause = _run(tmp_path, eutils, "Does aspirin cause stroke in adults?")
    assert cause.returncode == 0, cause.stderr
    assert "miss (guard_rejected: differs: cause / prevent)" in cause.stdout
    empty = _run(tmp_path, eutils, "   ")
    assert empty.returncode == 2 and "empty" in empty.stderr
    long = _run(tmp_path, eutils, "why " * 400)
    assert long.returncode == 2 and "too long" in long.stderr
