"""A retracted article in the fake E-utilities corpus is never evidence: ``ask`` lists it
under ``excluded`` and cites it never; a research job excludes it with its reason and reads
it never."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.research.models import JobStatus
from medlit.research.report import job_to_dict
from medlit.research.runtime import open_orchestrator
from medlit.types import AbstractSection, Article
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.research_responder import ARTICLES
from tests.integration.research_fixtures import (
    QUESTION,
    answered,
    europepmc,
    llm_server,
    responder,
    rsettings,
)
from tests.integration.test_ask_flow import Q1, _configure, corpus

__all__ = ["europepmc", "llm_server", "responder", "rsettings"]

RETRACTED = Article(
    pmid="40000009",
    title="Aspirin for recurrent ischaemic stroke prevention: a randomised trial",
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text="Aspirin reduced recurrent ischaemic stroke by 60% in adults.",
        ),
        AbstractSection(
            label="CONCLUSIONS", category="CONCLUSIONS", text="Aspirin prevents stroke in adults."
        ),
    ],
    journal="Journal of Stroke Evidence",
    year=2015,
    publication_types=["Journal Article", "Randomized Controlled Trial", "Retracted Publication"],
    language="eng",
)


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=[*ARTICLES, RETRACTED]) as fake:
        yield fake


async def test_a_research_job_excludes_a_retracted_article_with_its_reason(
    rsettings: Settings, llm_server: object
) -> None:
    async with open_orchestrator(rsettings) as orchestrator:
        job = await orchestrator.run(orchestrator.create_job(QUESTION, "quick"))
    assert job.status is JobStatus.COMPLETED, job.error
    assert RETRACTED.key in job.articles  # found by the searches...
    assert ("extract", "40000009") not in answered(llm_server)  # type: ignore[arg-type]
    data = job_to_dict(job)
    assert {"pmid": "40000009", "reason": "retracted"}.items() <= next(
        e for e in data["excluded"] if e["pmid"] == "40000009"
    ).items()
    cited = {r["pmid"] for r in data["report"]["references"]}
    assert "40000009" not in cited
    assert "40000009" not in {f.pmid for f in job.findings}
    assert "| Excluded: retracted | 1 |" in data["report_markdown"]


async def test_ask_lists_a_retracted_article_as_excluded_and_never_cites_it(
    settings: Settings,
) -> None:
    retracted = RETRACTED.model_copy(
        update={"title": "Aspirin prevents stroke in adults: a randomised trial"}
    )
    with FakeEutils(articles=[*corpus(), retracted], rate_limit=None,
                    rate_limit_with_key=None) as fake:  # fmt: skip
        async with Assistant(_configure(settings, fake, None)) as assistant:
            result = await assistant.ask(Q1)
    assert result.citations and "40000009" not in {c.pmid for c in result.citations}
    assert [(e.pmid, e.reason) for e in result.excluded] == [("40000009", "retracted")]
    assert result.model_dump(mode="json")["excluded"][0]["reason"] == "retracted"


def test_ask_cli_says_what_it_excluded(tmp_path: Path) -> None:
    from tests.integration.test_ask_cli import _run

    retracted = RETRACTED.model_copy(
        update={"title": "Aspirin prevents stroke in adults: a randomised trial"}
    )
    with FakeEutils(articles=[*corpus(), retracted], rate_limit=None,
                    rate_limit_with_key=None) as fake:  # fmt: skip
        shown = _run(tmp_path, fake, Q1)
        data = json.loads(_run(tmp_path / "json", fake, Q1, "--json").stdout)
    assert shown.returncode == 0, shown.stderr
    assert "excluded: PMID 40000009 (retracted)" in shown.stderr
    assert data["excluded"] == [
        {"pmid": "40000009", "title": retracted.title, "reason": "retracted"}
    ]
