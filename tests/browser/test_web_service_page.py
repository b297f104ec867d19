"""The page people rely on: an outage reads as an outage, warnings once and in words, the
API docs work offline, and in-report links stay in the report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.harness import WIDTHS, Served

pytestmark = pytest.mark.slow

OUTAGE = {
    "question": "Does aspirin prevent stroke?",
    "answer": "The literature could not be searched: every source failed, so this is not an "
    "answer to the question. Try again in a few minutes, or choose another source.",
    "verdict": None,
    "outage": True,
    "citations": [],
    "cache": {"tier1": "miss", "admitted": False},
    "stop_reason": "no_results",
    "api_calls": {"pubmed": 5, "europepmc": 0, "local": 0, "llm": 1},
    "standalone_question": "Does aspirin prevent stroke?",
    "warnings": [
        "source failed: pubmed: connection failed (ConnectError: All connection attempts "
        "failed) after 5 tries",
        "source failed: pubmed: connection failed (ConnectError: All connection attempts "
        "failed) after 5 tries",
        "pubmed: connection failed (ConnectError: All connection attempts failed) after 5 tries",
    ],
}


def _sse(*events: tuple[str, object]) -> str:
    return "".join(
        f"event: {name}\nid: {i}\ndata: {json.dumps(data)}\n\n"
        for i, (name, data) in enumerate(events, 1)
    )


def test_a_source_outage_reads_as_an_outage(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["phone"])
    warning = {"kind": "warning", "message": OUTAGE["warnings"][0]}
    stream = _sse(
        ("stage", {"kind": "stage", "stage": "search", "message": "searching PubMed"}),
        ("warning", warning),
        ("warning", warning),
        ("result", OUTAGE),
    )
    # What the service sends when every source is down (the result format of POST /v1/ask).
    page.route(
        "**/v1/ask",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=stream),
    )
    page.fill("#question", "Does aspirin prevent stroke?")
    page.press("#question", "Enter")
    page.wait_for_selector("#ask-result:not([hidden])")
    shown = page.inner_text("#ask-result")
    assert "could not be searched" in page.inner_text("#answer-heading")
    assert "This is not an answer to your question" in shown
    assert not page.is_visible("#verdict") and "Uncertain" not in shown
    assert "ConnectError" not in page.inner_text("body") and "after 5 tries" not in shown
    assert shown.count("PubMed could not be searched (connection failed).") == 1, shown
    page.click("#ask-progress-heading")
    steps = page.inner_text("#ask-progress")
    assert steps.count("PubMed could not be searched") == 1 and "ConnectError" not in steps
    assert page.js_errors == []


def test_the_api_docs_work_offline(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["desktop"])
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(served.base_url + "/docs")
    page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
    assert "medlit" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock-summary-path", has_text="/v1/ask").count() >= 1
    assert asked and all(url.startswith(served.base_url) for url in asked), asked


def test_the_key_prompt_says_where_a_key_comes_from(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["desktop"])
    # Reachable before any question, from the header.
    page.click("#enter-key")
    page.wait_for_selector("#key-dialog[open]")
    assert "medlit keys create" in page.inner_text("#key-help")
    page.click("#key-dialog button[value='cancel']")
    assert page.evaluate("sessionStorage.getItem('medlit.apiKey')") is None


DROPPED = (
    "a sentence was left out: it cited PMID 31000003 for something else than was asked: "
    "neither names clopidogrel"
)
CHECKED = {
    "question": "Does clopidogrel prevent stroke in adults?",
    "answer": "Verdict: Uncertain\n\nAspirin reduced stroke in adults [PMID:31000001].",
    "verdict": "uncertain",
    "citations": [{"pmid": "31000001", "title": "Aspirin and stroke", "url": "u"}],
    "cache": {"tier1": "miss", "admitted": False},
    "stop_reason": "threshold",
    "api_calls": {"pubmed": 2, "europepmc": 0, "local": 0, "llm": 1},
    "standalone_question": "Does clopidogrel prevent stroke in adults?",
    "warnings": [DROPPED],
    "findings": [
        {"check": "off-question", "action": "drop", "message": DROPPED,
         "pmids": ["31000003"], "sentence": "Clopidogrel is used after stroke [PMID:31000003]."},
        {"check": "unmentioned-terms", "action": "note", "pmids": [], "sentence": None,
         "message": "None of the retrieved articles mentions clopidogrel."},
        {"check": "off-question", "action": "uncite", "message": "PMID 31000004 was not cited",
         "pmids": ["31000004"], "sentence": None},
    ],
}  # fmt: skip


def test_the_checks_findings_are_grouped_in_a_folded_box(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["phone"])
    stream = _sse(("result", CHECKED))
    page.route(
        "**/v1/ask",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=stream),
    )
    page.fill("#question", CHECKED["question"])
    page.press("#question", "Enter")
    page.wait_for_selector("#ask-result:not([hidden])")
    assert page.is_visible("#findings-heading") and not page.is_visible("#findings")  # folded
    assert page.inner_text("#findings-heading") == "What the checks changed (3)"
    # Said once: in the box, not also as a warning under the answer.
    assert "was left out" not in page.inner_text("#answer")
    page.click("#findings-heading")
    groups = page.locator("#findings .finding-group")
    assert [groups.nth(i).get_attribute("data-check") for i in range(groups.count())] == [
        "off-question",
        "unmentioned-terms",
    ]
    first = groups.nth(0).inner_text()
    assert first.count("left out") >= 1 and "citation removed" in first
    assert "(PMID 31000003)" in first and "“Clopidogrel is used after stroke" in first
    assert "mentions clopidogrel" in groups.nth(1).inner_text()
    # The next answer without findings hides the box.
    quiet = dict(CHECKED, findings=[], warnings=[])
    page.unroute("**/v1/ask")
    page.route(
        "**/v1/ask",
        lambda route: route.fulfill(
            status=200, content_type="text/event-stream", body=_sse(("result", quiet))
        ),
    )
    page.fill("#question", "Does aspirin prevent stroke?")
    page.press("#question", "Enter")
    page.wait_for_selector("#findings-box", state="hidden")
    assert page.js_errors == []
