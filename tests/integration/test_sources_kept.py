"""An answer rests only on articles of the sources asked, whatever was asked of others before.

Each source (PubMed, Europe PMC, the local corpus) holds its own aspirin/stroke studies; the
question is asked of the two other sources first (filling the evidence cache), then of the one:
every citation must be that source's. Through ``medlit ask`` (a subprocess, as a user runs
it) and through the assistant the service and MCP call (``Assistant.ask``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.sources.local import LocalCorpus
from medlit.types import AbstractSection, Article, SourceName
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils

QUESTION = "Does aspirin prevent stroke in adults?"
_FIRST = {"pubmed": 51000000, "europepmc": 52000000, "local": 53000000}


def _studies(source: SourceName) -> list[Article]:
    base = _FIRST[source]
    said = (
        "Aspirin reduced the incidence of ischaemic stroke in adults.",
        "Aspirin lowered stroke risk in adults compared with placebo.",
        "Regular aspirin use was associated with fewer strokes in adults.",
    )
    return [
        Article(
            pmid=str(base + n),
            title=f"Aspirin to prevent stroke in adults: study {n} ({source})",
            abstract=[
                AbstractSection(
                    label="METHODS", category="METHODS", text="We studied aspirin in adults."
                ),
                AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
            ],
            year=2015 + n,
            publication_types=["Journal Article"],
            source=source,
            language="eng",
        )
        for n, conclusion in enumerate(said, 1)
    ]


def _pmids(source: str) -> set[str]:
    return {a.pmid for a in _studies(source) if a.pmid}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The three sources, each with its own studies; the environment pointing at them."""
    home = tmp_path / "home"
    with (
        FakeEutils(articles=_studies("pubmed"), rate_limit=None, rate_limit_with_key=None) as pm,
    ):
        epmc = FakeEuropePMC(articles=_studies("europepmc")).start()
        try:
            settings = Settings(home=home)
            with LocalCorpus.from_settings(settings) as local:
                local.add_articles(_studies("local"))
            yield {
                "MEDLIT_HOME": str(home),
                "MEDLIT_PUBMED_BASE_URL": pm.base_url,
                "MEDLIT_PUBMED_REQUESTS_PER_SECOND": "50",
                "MEDLIT_EUROPEPMC_BASE_URL": epmc.base_url,
                "MEDLIT_AGENT_MIN_DOCS": "2",
                "HF_HUB_OFFLINE": "1",
            }
        finally:
            epmc.stop()


def _cli(env: dict[str, str], source: str) -> dict[str, object]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")} | env
    command = [sys.executable, "-c", "from medlit.cli import main; main()", "ask", QUESTION]
    run = subprocess.run(
        [*command, "--json", "--source", source],
        capture_output=True,
        text=True,
        env=full,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("asked", ["local", "pubmed", "europepmc"])
def test_the_cli_cites_only_the_source_asked(world: dict[str, str], asked: str) -> None:
    for other in sorted(set(_FIRST) - {asked}):
        before = _cli(world, other)
        assert {c["pmid"] for c in before["citations"]} <= _pmids(other)  # type: ignore[union-attr]
    after = _cli(world, asked)
    cited = {c["pmid"] for c in after["citations"]}  # type: ignore[union-attr]
    assert cited and cited <= _pmids(asked), (asked, cited, after["cache"])
    assert after["question_frame"]["sources"] == [asked]  # type: ignore[index]


@pytest.mark.parametrize("asked", ["local", "pubmed", "europepmc"])
async def test_the_service_cites_only_the_source_asked(
    world: dict[str, str], asked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in world.items():
        monkeypatch.setenv(name, value)
    async with Assistant(Settings()) as assistant:
        for other in sorted(set(_FIRST) - {asked}):
            await assistant.ask(QUESTION, sources=other)
        result = await assistant.ask(QUESTION, sources=asked)
    cited = {c.pmid for c in result.citations}
    assert cited and cited <= _pmids(asked), (
        asked,
        cited,
        result.cache,
        result.api_calls,
        result.answer,
        result.warnings,
    )
