"""``/v1/research`` through a real uvicorn on loopback, against the fake E-utilities, Europe
PMC and LLM servers: jobs, SSE progress with resume, reports, exports, cancel, tenants."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import bibtexparser
import httpx
import pytest
import rispy

from medlit.config import Settings
from medlit.runtime import Runtime
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
    steps,
)
from tests.integration.service.server import ServiceServer
from tests.integration.service.sse import read_events

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


@pytest.fixture
def server(rsettings: Settings) -> Iterator[ServiceServer]:
    with ServiceServer(rsettings) as running:
        yield running


def _start(client: httpx.Client, question: str = QUESTION, **headers: str) -> str:
    response = client.post("/v1/research", json={"question": question, "depth": "quick"},
                           headers=headers)  # fmt: skip
    assert response.status_code == 202, response.text
    job_id = str(response.json()["id"])
    assert response.headers["location"] == f"/v1/research/{job_id}"
    assert response.json()["status"] == "PENDING"
    return job_id


def _follow(client: httpx.Client, job_id: str, headers: dict[str, str] | None = None,
            limit: int | None = None) -> list[dict[str, object]]:  # fmt: skip
    with client.stream("GET", f"/v1/research/{job_id}/events", headers=headers or {},
                       timeout=60) as response:  # fmt: skip
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response, limit))


def test_a_job_over_http_from_start_to_report_and_exports(
    server: ServiceServer, llm_server: FakeLLMServer
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        job_id = _start(client)
        events = _follow(client, job_id)
        ids = [int(str(e["id"])) for e in events]
        assert ids == list(range(1, len(ids) + 1))
        assert {e["event"] for e in events} == {"progress"}
        stages = [e["data"]["stage"] for e in events]  # type: ignore[index]
        assert stages[0] == "PENDING" and stages[-1] == "COMPLETED"
        assert {"PLANNING", "EXECUTING", "VERIFYING", "SYNTHESIZING"} <= set(stages)

        job = client.get(f"/v1/research/{job_id}").json()
        assert job["status"] == "COMPLETED" and job["stage"] == "COMPLETED"
        assert {q["id"] for q in job["sub_questions"]} >= {"q1", "q2", "q3", "q4"}
        assert job["usage"]["llm_calls"] == len(llm_server.completions)
        assert job["links"]["events"] == f"/v1/research/{job_id}/events"

        markdown = client.get(f"/v1/research/{job_id}/report")
        assert markdown.headers["content-type"].startswith("text/markdown")
        assert markdown.text.startswith("# Aspirin after ischaemic stroke")
        report = client.get(f"/v1/research/{job_id}/report",
                            headers={"Accept": "application/json"}).json()  # fmt: skip
        refs = report["references"]
        assert refs and "## References" in markdown.text
        # Version 1 is the report itself until a refresh keeps it; there is no version 2.
        first = client.get(f"/v1/research/{job_id}/report", params={"version": 1})
        assert first.text == markdown.text
        none = client.get(f"/v1/research/{job_id}/report", params={"version": 2})
        assert none.status_code == 404 and "has no report version 2" in none.text
        # The review outputs: the evidence table, draft certainty, search log and exclusions.
        assert report["evidence_table"] and {"pmid", "design", "direction"} <= set(
            report["evidence_table"][0]
        )
        assert report["certainty"]["draft"] is True
        assert {"source", "query", "date", "hits"} <= set(report["search_log"][0])
        assert isinstance(report["excluded"], list) and "## Evidence table" in markdown.text
        table = client.get(f"/v1/research/{job_id}/export", params={"format": "csv"})
        assert table.headers["content-type"].startswith("text/csv")
        assert len(table.text.strip().splitlines()) == 1 + len(report["evidence_table"])

        ris = client.get(f"/v1/research/{job_id}/export", params={"format": "ris"})
        assert ris.headers["content-type"].startswith("application/x-research-info-systems")
        assert "attachment" in ris.headers["content-disposition"]
        records = rispy.loads(ris.text)
        assert [r["type_of_reference"] for r in records] == ["JOUR"] * len(refs)
        assert [r["title"] for r in records] == [ref["title"] for ref in refs]
        assert all(r["authors"] == ["Smith, J"] for r in records)
        assert "10.5555/stroke.1" in {r.get("doi") for r in records}

        bib = client.get(f"/v1/research/{job_id}/export", params={"format": "bibtex"})
        library = bibtexparser.parse_string(bib.text)
        assert not library.failed_blocks
        assert [e.key for e in library.entries] == [f"pmid{ref['pmid']}" for ref in refs]
        assert library.entries[0].fields_dict["author"].value == "Smith, J."

        csl = json.loads(client.get(f"/v1/research/{job_id}/export",
                                    params={"format": "csl-json"}).text)  # fmt: skip
        assert [item["PMID"] for item in csl] == [ref["pmid"] for ref in refs]
        assert csl[0]["author"] == [{"family": "Smith", "given": "J"}]
        assert all(item["issued"]["date-parts"][0][0] == ref["year"]
                   for item, ref in zip(csl, refs, strict=True))  # fmt: skip

        bad = client.get(f"/v1/research/{job_id}/export", params={"format": "xml"})
        assert bad.status_code == 400
        assert bad.headers["content-type"] == "application/problem+json"

        listed = client.get("/v1/research", params={"limit": 1}).json()
        assert listed["total"] == 1 and listed["items"][0]["id"] == job_id
        assert listed["next"] is None
        # A completed job cannot be cancelled.
        assert client.post(f"/v1/research/{job_id}/cancel").status_code == 409


def test_events_resume_after_a_disconnect_with_last_event_id(
    server: ServiceServer, responder: ResearchResponder
) -> None:
    server.settings.research.concurrency = 1
    responder.delay_pmids = {"40000002": 0.5, "40000005": 0.5}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        job_id = _start(client)
        first = _follow(client, job_id, limit=3)  # then the client goes away mid-job
        assert [e["id"] for e in first] == ["1", "2", "3"]
        rest = _follow(client, job_id, headers={"Last-Event-ID": "3"})
        ids = [int(str(e["id"])) for e in first + rest]
        assert ids == list(range(1, len(ids) + 1))  # no gap, no repeat
        assert rest[-1]["data"]["stage"] == "COMPLETED"  # type: ignore[index]
        # ?after= does the same for clients that cannot set headers.
        tail = _follow(client, job_id, headers=None)[-2:]
        with client.stream("GET", f"/v1/research/{job_id}/events",
                           params={"after": ids[-3]}) as response:  # fmt: skip
            assert [e["id"] for e in read_events(response)] == [e["id"] for e in tail]
        bad = client.get(f"/v1/research/{job_id}/events", headers={"Last-Event-ID": "x"})
        assert bad.status_code == 400


def test_cancel_over_http(
    server: ServiceServer, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    server.settings.research.concurrency = 1
    responder.hold("40000004")  # q2's first extraction waits until the cancel is in
    with httpx.Client(base_url=server.url, timeout=30) as client:
        job_id = _start(client)
        deadline = time.monotonic() + 120
        while not any("PMID: 40000004" in str(r.json) for r in llm_server.completions):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        cancelled = client.post(f"/v1/research/{job_id}/cancel")
        responder.release()
        assert cancelled.status_code == 202
        events = _follow(client, job_id)
        assert events[-1]["data"]["stage"] == "CANCELLED"  # type: ignore[index]
        job = client.get(f"/v1/research/{job_id}").json()
        assert job["status"] == "CANCELLED" and job["stage"] == "EXECUTING"
        report = client.get(f"/v1/research/{job_id}/report")
        assert report.status_code == 409 and "CANCELLED" in report.json()["detail"]
        assert client.post(f"/v1/research/{job_id}/cancel").status_code == 202  # idempotent
    assert steps(llm_server)["section"] == 0  # it never reached the report


def test_bad_requests_are_problems(server: ServiceServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for body in ({"question": ""}, {"question": "x" * 30000}, {"question": "q", "depth": "x"},
                     {"question": "Aspirin?", "extra": 1}, []):  # fmt: skip
            response = client.post("/v1/research", json=body)
            assert response.status_code == 400, (body, response.text)
            assert response.headers["content-type"] == "application/problem+json"
        for path in ("/v1/research/nope", "/v1/research/nope/events", "/v1/research/nope/report",
                     "/v1/research/nope/export", "/v1/research/a%20b%3F"):  # fmt: skip
            assert client.get(path).status_code == 404, path
        assert client.post("/v1/research/nope/cancel").status_code == 404
        assert client.get("/v1/research", params={"limit": 0}).status_code == 400
        assert client.get("/v1/research", params={"limit": 1}).json()["total"] == 0


def test_tenants_cannot_see_each_others_jobs(rsettings: Settings) -> None:
    from medlit.service.keys import KeyStore

    runtime = Runtime(rsettings)
    keys = KeyStore(runtime.store)
    _, token_a = keys.create("lab-a")
    _, token_b = keys.create("lab-b")
    runtime.store.close()
    a = {"Authorization": f"Bearer {token_a}"}
    b = {"Authorization": f"Bearer {token_b}"}
    with ServiceServer(rsettings, require_keys=True) as server, \
            httpx.Client(base_url=server.url, timeout=30) as client:  # fmt: skip
        job_id = _start(client, **a)
        assert client.get(f"/v1/research/{job_id}").status_code == 401  # no key
        for method, tail in (("GET", ""), ("GET", "/events"), ("GET", "/report"),
                             ("GET", "/export"), ("POST", "/cancel")):  # fmt: skip
            theirs = client.request(method, f"/v1/research/{job_id}{tail}", headers=b)
            nobody = client.request(method, f"/v1/research/000000000000{tail}", headers=b)
            assert theirs.status_code == nobody.status_code == 404
            assert theirs.json()["detail"].replace(job_id, "?") == nobody.json()["detail"].replace(
                "000000000000", "?"
            )
        assert client.get("/v1/research", headers=b).json() == {
            "items": [], "total": 0, "limit": 20, "offset": 0, "next": None,
        }  # fmt: skip
        events = _follow(client, job_id, headers=a)
        assert events[-1]["data"]["stage"] == "COMPLETED"  # type: ignore[index]
        assert client.get(f"/v1/research/{job_id}", headers=a).json()["status"] == "COMPLETED"
        assert client.get("/v1/research", headers=a).json()["total"] == 1
