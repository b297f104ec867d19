"""A research job rests only on articles of the sources asked, whatever was asked of others
before.

The world of :mod:`tests.integration.test_sources_kept` (each source its own aspirin/stroke
studies): the question is asked of the two other sources first (filling the evidence cache
and the answer cache with their articles), then researched with the one as the default
source (``MEDLIT_SEARCH_DEFAULT_SOURCE``, what a research job searches): every reference, every
evidence-table row and every article the job read must be that source's. Through
``medlit research`` (a subprocess, as a user runs it) and through the service
(``POST /v1/research`` on a real uvicorn), with the fake LLM answering as a careful model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from medlit.config import Settings
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import CorpusResponder
from tests.integration.service.server import ServiceServer
from tests.integration.test_sources_kept import _FIRST, QUESTION, _cli, _pmids, world

__all__ = ["world"]


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(CorpusResponder()) as server:
        yield server


def _llm_env(llm: FakeLLMServer) -> dict[str, str]:
    return {
        "MEDLIT_LLM_BASE_URL": llm.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
        "MEDLIT_LLM_MAX_RETRIES": "0",
    }


def _research_cli(env: dict[str, str], source: str) -> dict[str, Any]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")} | env
    command = [sys.executable, "-c", "from medlit.cli import main; main()", "research"]
    run = subprocess.run(
        [*command, QUESTION, "--depth", "quick", "--json"],
        capture_output=True,
        text=True,
        env=full | {"MEDLIT_SEARCH_DEFAULT_SOURCE": source},
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout))


def _research_service(settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    """The job and its report (JSON), researched through the service."""
    with (
        ServiceServer(settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        started = client.post("/v1/research", json={"question": QUESTION, "depth": "quick"})
        assert started.status_code == 202, started.text
        job_id = started.json()["id"]
        deadline = time.monotonic() + 240
        job = client.get(f"/v1/research/{job_id}").json()
        while job["status"] not in ("COMPLETED", "FAILED", "CANCELLED"):
            assert time.monotonic() < deadline, job
            time.sleep(0.2)
            job = client.get(f"/v1/research/{job_id}").json()
        assert job["status"] == "COMPLETED", job
        report = client.get(
            f"/v1/research/{job_id}/report", headers={"Accept": "application/json"}
        ).json()
    return job, report


def _cited(report: dict[str, Any]) -> set[str]:
    return {str(ref["pmid"]) for ref in report["references"]}


def _tabled(report: dict[str, Any]) -> set[str]:
    return {str(row["pmid"]) for row in report["evidence_table"]}


@pytest.mark.parametrize("asked", ["local", "pubmed", "europepmc"])
def test_research_cites_only_the_source_asked(
    world: dict[str, str], llm: FakeLLMServer, asked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other in sorted(set(_FIRST) - {asked}):
        before = _cli(world, other)  # answered from the other source, cached
        assert {c["pmid"] for c in before["citations"]} <= _pmids(other)  # type: ignore[union-attr]
    env = world | _llm_env(llm)

    job = _research_cli(env, asked)
    assert job["status"] == "COMPLETED", job.get("error")
    cited, tabled = _cited(job["report"]), _tabled(job)
    assert cited and cited <= _pmids(asked), (asked, cited)
    assert tabled and tabled <= _pmids(asked), (asked, tabled)

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    settings.search.default_source = asked  # type: ignore[assignment]
    served, report = _research_service(settings)
    cited = _cited(report)
    assert cited and cited <= _pmids(asked), (asked, cited, served.get("search_log"))
    assert _tabled(report) <= _pmids(asked)
