"""A research job over the 500 PubMedQA abstracts of ../shared/data (skipped where absent),
with the fake E-utilities and the fake LLM answering as a careful model, plus one retracted
copy of the question's own article: the evidence table, the exclusions and the flow."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from medlit.checks.claims import quote_in_article
from medlit.config import Settings
from medlit.research.evidence_table import rows_from_csv, rows_to_csv
from medlit.research.exports import export_job
from medlit.research.models import JobStatus
from medlit.research.report import job_to_dict
from medlit.research.runtime import open_orchestrator
from medlit.research.screening import included_keys
from medlit.sources.pubmed_xml import parse_pubmed_xml
from tests.conftest import shared_data_path
from tests.fakes.eutils_server import FakeEutils, article_to_xml
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import CorpusResponder

PMID = "15369037"  # "Do people who were passive smokers during childhood have increased risk..."


@pytest.fixture
def corpus() -> Iterator[tuple[FakeEutils, str]]:
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    question = json.loads(shared_data_path("pubmedqa", "pqal_dev.json").read_text())[PMID][
        "QUESTION"
    ]
    own = next(a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid == PMID)
    retracted = own.model_copy(
        update={"pmid": "99000001", "publication_types": ["Journal Article",
                                                          "Retracted Publication"]}
    )  # fmt: skip
    with FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as fake:
        fake.add_xml(b"<PubmedArticleSet>" + article_to_xml(retracted) + b"</PubmedArticleSet>")
        yield fake, question


async def test_a_job_over_pubmedqa_gives_a_quoted_table_and_a_flow_that_adds_up(
    settings: Settings, corpus: tuple[FakeEutils, str]
) -> None:
    eutils, question = corpus
    with FakeLLMServer(CorpusResponder()) as llm:
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0
        settings.local.enabled = False
        settings.llm.base_url, settings.llm.model = llm.base_url, "fake-model"
        async with open_orchestrator(settings) as orchestrator:
            job = await orchestrator.run(orchestrator.create_job(question, "quick"))
    assert job.status is JobStatus.COMPLETED, job.error
    rows = job.evidence_table
    assert rows and [r.article_key for r in rows] == included_keys(job)
    assert f"pmid:{PMID}" in {r.article_key for r in rows}  # the question's own article
    for row in rows:
        article = job.articles[row.article_key]
        for cell in row.cells().values():
            if cell is not None:
                assert quote_in_article(cell.quote, article, min_words=1), cell.quote
        if row.design_from == "publication types":
            assert row.design != "other"
    data = job_to_dict(job)
    assert {"pmid": "99000001", "reason": "retracted"}.items() <= next(
        e for e in data["excluded"] if e["pmid"] == "99000001"
    ).items()
    assert "99000001" not in {r.pmid for r in rows}
    flow = data["flow"]
    assert flow["identified"] == flow["not_english"] + flow["duplicates_removed"] + flow["screened"]
    assert flow["screened"] == flow["included"] + sum(flow["excluded"].values())
    assert flow["included"] == len(rows)
    assert sum(e["hits"] for e in data["search_log"]) + flow["not_english"] == flow["identified"]
    text = export_job(job, "csv")
    assert rows_to_csv(rows_from_csv(text)) == text
