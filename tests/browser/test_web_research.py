"""The Research view in headless Chromium: a quick job, live, to its report and exports."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.corpus import RESEARCH_QUESTION, XSS_MARKUP
from tests.browser.harness import WIDTHS, Served, screenshot, serious_violations
from tests.fakes.research_responder import CLAIMS

pytestmark = pytest.mark.slow

# The question carries markup too: the job view and the report must show it as text.
QUESTION = f"{RESEARCH_QUESTION} {XSS_MARKUP['title']}"


def _download(page: Any, button: str) -> str:
    with page.expect_download() as download:
        page.click(button)
    path = download.value.path()
    return Path(path).read_text(encoding="utf-8")


def test_quick_research_live_then_report_and_exports(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["desktop"], "/#/research")
    page.wait_for_selector("#jobs li")
    assert serious_violations(page) == []
    page.fill("#research-question", QUESTION)
    page.select_option("#depth", "quick")
    page.click("#research-submit")
    page.wait_for_url(re.compile(r"#/research/[\w-]+$"))
    job_id = page.url.rsplit("/", 1)[1]

    # Live view: the stages and the sub-questions appear while the job runs.
    page.wait_for_selector("#sub-questions li", timeout=60_000)
    assert page.locator("#stages li").count() == 4
    page.wait_for_selector("#report-box:not([hidden])", timeout=120_000)
    assert "Completed" in page.inner_text("#job-status")
    assert int(page.inner_text("#stat-articles")) > 0
    assert int(page.inner_text("#stat-llm")) > 0
    assert int(page.inner_text("#stat-tokens").replace(",", "")) > 0
    assert page.locator("#sub-questions .sq-completed").count() >= 1
    assert page.locator("#job-log li").count() >= 1
    # Each sub-question shows the id the events name ("q1: 2 of 3 read").
    ids = [
        (text or "").strip() for text in page.locator("#sub-questions .sq-id").all_text_contents()
    ]
    assert len(ids) == page.locator("#sub-questions li").count()
    assert all(re.fullmatch(r"q\d+(?:\.\d+)*", i) for i in ids), ids
    # With the report shown, the job's trail folds into one line above it; a click opens it.
    assert not page.is_visible("#sub-questions li >> nth=0")
    page.click("#trail-heading")
    assert page.is_visible("#sub-questions li >> nth=0")

    # The report: rendered from Markdown, references numbered and linked.
    report = httpx.get(
        f"{served.base_url}/v1/research/{job_id}/report",
        headers={"Accept": "application/json"},
        timeout=10,
    ).json()
    refs = report["references"]
    assert refs
    items = page.locator("#references li")
    assert items.count() == len(refs)
    for ref, n in zip(refs, range(items.count()), strict=True):
        text = items.nth(n).inner_text()
        assert ref["pmid"] in text
        href = items.nth(n).locator("a").first.get_attribute("href")
        assert href == f"https://pubmed.ncbi.nlm.nih.gov/{ref['pmid']}/"
    assert page.locator("#report a.ref-link").count() > 0
    # A numbered reference scrolls to its entry; the job stays on screen (no route change).
    before = page.url
    page.locator("#report a.ref-link").first.click()
    assert page.url == before and page.is_visible("#report-box")
    assert page.evaluate("document.activeElement.id").startswith("ref-")
    # The report opens for a reader: found, how sure, missing; the pipeline's notes fold away.
    summary = page.inner_text("#reader-summary")
    for part in ("What was found", "How sure", "What is missing"):
        assert part in summary, summary
    assert f"{len(refs)} article" in summary
    if page.locator("#report-details").count():
        assert page.locator("#report h2", has_text="Limitations").count() == 0
        assert not page.is_visible("#report-details li >> nth=0")
    assert page.locator("#report h2", has_text="Discrepancies").count() == 1
    # Markup in the question (and anything from the model) stayed text.
    assert page.evaluate("window.__xss") is None
    # The one image is the report's own flow drawing (an SVG data: URI the renderer let through).
    assert page.locator("#report script, #job-view img:not(.flow-diagram)").count() == 0
    images = page.locator("#report img")
    assert images.count() == 1 and page.locator("#flow-diagram img.flow-diagram").count() == 1
    assert (images.get_attribute("src") or "").startswith("data:image/svg+xml;base64,")
    assert "onerror" in page.inner_text("#report") and "onerror" in page.inner_text("#job-question")

    # RIS holds every reference; BibTeX too; Markdown is the report.
    ris = _download(page, "#export-ris")
    assert ris.count("TY  -") == len(refs)
    for ref in refs:
        assert ref["pmid"] in ris
    bib = _download(page, "#export-bibtex")
    assert len(re.findall(r"^@\w+\{", bib, re.M)) == len(refs)
    markdown = _download(page, "#download-md")
    assert "## References" in markdown

    # Print: only the report (no buttons, no forms, no navigation).
    page.emulate_media(media="print")
    assert page.is_visible("#report") and not page.is_visible("#export-ris")
    assert not page.is_visible("header.top")
    page.emulate_media(media="screen")

    screenshot(page, "report-1440")
    assert serious_violations(page) == []
    assert page.js_errors == []

    # The job is in the tenant's list; at phone width the report still fits the screen.
    phone = open_page(WIDTHS["phone"], "/#/research")
    phone.wait_for_selector(f"#jobs a[href='#/research/{job_id}']")
    phone.click(f"#jobs a[href='#/research/{job_id}']")
    phone.wait_for_selector("#report-box:not([hidden])")
    # the finished job's stored events, replayed (into the folded trail)
    phone.wait_for_selector("#job-log li", state="attached")
    assert phone.evaluate("document.documentElement.scrollWidth") <= WIDTHS["phone"]
    screenshot(phone, "report-375")
    assert phone.js_errors == []


def test_cancel_a_running_job(served: Served, open_page: Any) -> None:
    # Held extractions keep the job in EXECUTING until it is cancelled from the page.
    served.responder.research.hold(*CLAIMS)
    try:
        page = open_page(WIDTHS["desktop"], "/#/research")
        # The first event stream breaks after event 1: the page must resume after it.
        resumed: list[str | None] = []

        def events(route: Any) -> None:
            if not resumed:
                resumed.append(None)
                route.fulfill(
                    status=200,
                    content_type="text/event-stream",
                    body='id: 1\nevent: progress\ndata: {"message": "queued"}\n\n',
                )
                return
            resumed.append(route.request.headers.get("last-event-id"))
            route.continue_()

        page.route("**/v1/research/*/events", events)
        page.fill("#research-question", "Is aspirin resistance common after stroke?")
        page.select_option("#depth", "quick")
        page.press("#research-question", "Enter")
        page.wait_for_selector(".step-current", timeout=30_000)
        page.wait_for_selector("#sub-questions li", timeout=30_000)
        screenshot(page, "research-live-1440")
        deadline = time.monotonic() + 60
        while len(resumed) < 2:  # the page has resumed the broken stream (on its own timer)
            assert time.monotonic() < deadline, "the page never resumed the event stream"
            page.wait_for_timeout(50)  # lets Playwright run the route handler meanwhile
        page.click("#job-cancel")
        page.wait_for_selector("#job-log li:has-text('Cancellation requested')", timeout=60_000)
        served.responder.research.release()  # the sub-question in flight ends: cancelled
        page.wait_for_selector("#job-status.status-cancelled", timeout=60_000)
    finally:
        served.responder.research.release()
    assert "cancelled" in page.inner_text("#research-error")
    assert not page.is_visible("#job-cancel") and not page.is_visible("#report-box")
    assert page.locator(".step-stopped").count() == 1
    assert resumed[1] == "1", resumed
    assert page.js_errors == []
