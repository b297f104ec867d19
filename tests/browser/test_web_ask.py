"""The Ask view in headless Chromium against ``medlit serve`` and the fakes.

Also the page's benchmark: time from pressing Enter to the first progress event and to the
rendered answer, for a miss and for a cached question, read from the page's own
``performance`` marks (``ask:submit``, ``ask:first-progress``, ``ask:rendered``,
``ask:painted``: after the next frame).
"""

from __future__ import annotations

import json
import re
import statistics
import time
from typing import Any

import httpx
import pytest

from tests.browser.corpus import ASK_QUESTION, XSS_MARKUP, XSS_QUESTION
from tests.browser.harness import WIDTHS, Served, ask, screenshot, serious_violations
from tests.fakes.eutils_server import Fault

pytestmark = pytest.mark.slow

PUBMED_LINK = re.compile(r"^https://pubmed\.ncbi\.nlm\.nih\.gov/(\d+)/$")
CACHED_TARGET_MS = 300.0


def _calls(served: Served) -> tuple[int, int]:
    return len(served.eutils.history), len(served.llm.completions)


def test_ask_progress_answer_links_then_cached_then_refresh(served: Served, open_page: Any) -> None:
    # Warm the server (embedder, graph) with another question so the miss below is typical.
    assert served.post("/v1/ask", json={"question": "Do statins cause muscle pain?"}).is_success
    page = open_page(WIDTHS["desktop"])
    # Every state of the streamed draft, as the person watching saw it.
    page.evaluate(
        """() => {
        window.drafts = [];
        const draft = document.getElementById("ask-draft");
        new MutationObserver(() => window.drafts.push(draft.innerHTML))
            .observe(draft, { childList: true });
    }"""
    )

    miss = ask(page, ASK_QUESTION)
    assert page.is_visible("#ask-result"), page.inner_text("#ask-error")
    # The answer streamed in; a complete [PMID:n] showed as a numbered link, as it will stay.
    drafts = [d for d in page.evaluate("window.drafts") if d]
    assert drafts  # (the observer sees the tokens in batches, as many as timing makes)
    assert 'class="cite"' in drafts[-1] and "[PMID:" not in drafts[-1], drafts[-1]
    # Progress arrived before the answer and was shown step by step.
    steps = page.locator("#ask-progress li").all_text_contents()  # folded: not rendered
    assert any(s.startswith("Searching PubMed for “") for s in steps), steps
    assert any("cache" in s.lower() for s in steps), steps
    assert miss["first-progress"] < miss["rendered"]
    # Once answered, the steps fold into one line (the answer stays in view); a click opens them.
    assert page.inner_text("#ask-progress-heading") == f"Steps taken ({len(steps)})"
    assert not page.is_visible("#ask-progress li")
    page.click("#ask-progress-heading")
    assert page.is_visible("#ask-progress li >> nth=0")
    assert page.inner_text("#verdict") == "Yes"
    # The answer's opening "Verdict: Yes" line is the badge's: shown once, not again as text.
    assert "Verdict" not in page.inner_text("#answer"), page.inner_text("#answer")
    assert not page.is_visible("#cache-note")

    # Every [PMID:n] became a numbered link to its PubMed page, numbered as the citations list.
    cited = [li.get_attribute("data-pmid") for li in page.locator("#citations li").all()]
    assert len(cited) >= 2
    links = page.locator("#answer a.cite")
    assert links.count() >= 2
    for i in range(links.count()):
        link = links.nth(i)
        match = PUBMED_LINK.match(link.get_attribute("href") or "")
        assert match, link.get_attribute("href")
        assert match.group(1) in cited
        assert link.inner_text() == str(cited.index(match.group(1)) + 1)
    assert "[PMID:" not in page.inner_text("#answer")
    first = page.locator("#citations li").first
    assert first.locator(".badge.study").count() == 1
    assert re.search(r"score \d\.\d\d", first.inner_text())
    with page.expect_popup() as popup:
        links.first.click()
    assert PUBMED_LINK.match(popup.value.url)
    popup.value.close()

    # The same question again: served from the cache, marked as such, no PubMed or LLM call.
    before = _calls(served)
    cached = [ask(page, ASK_QUESTION) for _ in range(5)]
    assert _calls(served) == before
    note = page.inner_text("#cache-note")
    assert "Answered from cache" in note and ASK_QUESTION in note
    assert page.is_visible("#refresh")
    assert page.locator("#answer a.cite").count() >= 2
    screenshot(page, "ask-1440")
    assert serious_violations(page) == []

    # "Refresh from the literature" asks again with the cache bypassed.
    llm_before = len(served.llm.completions)
    page.evaluate("performance.clearMarks()")
    page.click("#refresh")
    page.wait_for_function("() => performance.getEntriesByName('ask:rendered').length > 0")
    assert not page.is_visible("#cache-note")
    assert len(served.llm.completions) > llm_before
    assert page.js_errors == []

    figures = {
        "miss_first_progress_ms": miss["first-progress"],
        "miss_rendered_ms": miss["painted"],
        "cached_first_progress_ms": statistics.median(c["first-progress"] for c in cached),
        "cached_rendered_ms": statistics.median(c["painted"] for c in cached),
        "cached_rendered_best_ms": min(c["painted"] for c in cached),
    }
    print("\nweb ask timings (Enter pressed -> ...), ms; cached: median of 5")
    print(f"{'':8} {'first progress':>15} {'answer rendered':>16}")
    print(
        f"{'miss':8} {figures['miss_first_progress_ms']:15.1f} {figures['miss_rendered_ms']:16.1f}"
    )
    print(f"{'cached':8} {figures['cached_first_progress_ms']:15.1f} "
          f"{figures['cached_rendered_ms']:16.1f}")  # fmt: skip
    print(
        " ".join(f"{k}={v:.1f}" for k, v in figures.items()) + f" target_ms={CACHED_TARGET_MS:.0f}"
    )
    # The target, on the best of five (one slow run on a shared 2-core machine is noise).
    assert figures["cached_rendered_best_ms"] <= CACHED_TARGET_MS, figures


def test_phone_width_and_new_conversation(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["phone"])
    session = page.evaluate("localStorage.getItem('medlit.sessionId')")
    ask(page, ASK_QUESTION)
    assert page.is_visible("#ask-result"), page.inner_text("#ask-error")
    first_session = page.evaluate("localStorage.getItem('medlit.sessionId')")
    assert first_session and first_session != session
    # Nothing wider than the phone's screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS["phone"]
    screenshot(page, "ask-375")
    assert serious_violations(page) == []
    page.click("#new-conversation")
    assert page.evaluate("localStorage.getItem('medlit.sessionId')") != first_session
    assert not page.is_visible("#ask-result")
    assert page.evaluate("document.activeElement.id") == "question"


def test_markup_in_abstracts_and_model_answers_is_shown_as_text(
    served: Served, open_page: Any
) -> None:
    # The service really hands the page that markup (else this test could not fail).
    raw = served.post("/v1/ask", json={"question": XSS_QUESTION, "no_cache": True}).json()
    assert "<script>" in raw["answer"] or XSS_MARKUP["answer"] in raw["answer"], raw["answer"]
    assert any("onerror" in c["title"] for c in raw["citations"])

    page = open_page(WIDTHS["desktop"])
    ask(page, XSS_QUESTION)
    assert page.is_visible("#ask-result"), page.inner_text("#ask-error")
    assert page.evaluate("window.__xss") is None
    assert page.locator("#ask-result script, #ask-result img, #ask-result svg").count() == 0
    assert page.locator("#ask-result [onerror], #ask-result [onload]").count() == 0
    shown = page.inner_text("#ask-result")
    assert "onerror" in shown  # the markup is there, as text a person can read
    assert page.js_errors == []


def test_source_down_is_a_readable_message(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["phone"])
    served.eutils.enqueue(Fault.status(503), times=20)
    try:
        ask(page, "Does telephone counseling improve mammography screening uptake?")
    finally:
        served.eutils.reset()
    error = page.inner_text("#ask-error")
    assert page.is_visible("#ask-error"), page.inner_text("body")
    assert "could not search the literature" in error, error
    assert "Traceback" not in error and not page.is_visible("#ask-result")


def test_errors_are_readable_messages(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["desktop"])
    # Nothing typed: the page says so without a request.
    page.press("#question", "Enter")
    assert "type a question" in page.inner_text("#ask-error")
    # Bad input the service refuses (too long): its problem detail, in words.
    ask(page, "Does aspirin prevent stroke? " * 60)
    error = page.inner_text("#ask-error")
    assert page.is_visible("#ask-error") and "too long" in error, error
    assert "Traceback" not in error
    assert not page.is_visible("#ask-result")
    # The keyboard reaches every control, in order.
    page.focus("#question")
    order = []
    for _ in range(3):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id"))
    assert order == ["source", "ask-submit", "new-conversation"], order
    # Ask by keyboard alone: type, tab to the Ask button, press Space.
    page.fill("#question", "")
    page.focus("#question")
    page.keyboard.type(ASK_QUESTION)
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press(" ")
    page.wait_for_selector("#ask-result:not([hidden])")
    assert not page.is_visible("#ask-error")


def test_follow_up_is_answered_in_its_conversation(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["desktop"])
    ask(page, ASK_QUESTION)
    assert not page.is_visible("#understood")
    ask(page, "and in children?")
    assert page.is_visible("#ask-result"), page.inner_text("#ask-error")
    understood = page.inner_text("#understood")
    assert "children" in understood and "aspirin" in understood.lower(), understood
    # The first answer is kept below, folded to its question and verdict; a click opens it.
    assert page.locator("#history > li").count() == 1
    earlier = page.locator("#history > li").first
    assert earlier.locator("summary").first.inner_text().startswith(ASK_QUESTION)
    assert not earlier.locator("a.cite").first.is_visible()
    earlier.locator("summary").first.click()
    assert earlier.locator("a.cite").first.is_visible()
    assert page.evaluate("document.querySelectorAll('#history [id]').length") == 0
    # The same question again replaces the answer; nothing more is kept.
    ask(page, "and in children?")
    assert page.locator("#history > li").count() == 1
    assert serious_violations(page) == []
    # A new conversation forgets the first question, and the earlier answers.
    page.click("#new-conversation")
    assert not page.is_visible("#history-box") and page.locator("#history > li").count() == 0
    ask(page, "and in children?")
    assert "aspirin" not in page.inner_text("#ask-result").lower()


def test_cached_answer_says_how_old_it_is(served: Served, open_page: Any) -> None:
    """The page's wording for an entry's age, on the service's real stream with the entry's
    ``created_at`` set three days back (AskResult.cache does not carry it yet)."""
    stream = httpx.post(
        served.base_url + "/v1/ask",
        json={"question": ASK_QUESTION},
        headers={"Accept": "text/event-stream"},
        timeout=30,
    ).text
    assert "event: result" in stream
    three_days_ago = time.time() - 3 * 86400 - 60

    def with_age(match: re.Match[str]) -> str:
        result = json.loads(match.group(1))
        assert result["cache"]["tier1"] == "hit"
        result["cache"]["created_at"] = three_days_ago
        return "event: result\r\ndata: " + json.dumps(result)

    aged = re.sub(r"event: result\r?\ndata: (.+)", with_age, stream)
    page = open_page(WIDTHS["desktop"])
    page.route(
        "**/v1/ask",
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=aged),
    )
    ask(page, ASK_QUESTION)
    note = page.inner_text("#cache-note")
    assert f"same question as “{ASK_QUESTION}”, asked 3 days ago" in note, note


def test_a_cached_answer_the_guard_refused_says_why(served: Served, open_page: Any) -> None:
    assert served.post("/v1/ask", json={"question": ASK_QUESTION}).is_success  # cached
    page = open_page(WIDTHS["desktop"])
    ask(page, "Does aspirin cause stroke in adults?")  # 0.97 to it, the other direction
    assert page.is_visible("#ask-result"), page.inner_text("#ask-error")
    assert not page.is_visible("#cache-note")  # no "Refresh": it came from the literature
    meta = page.inner_text("#ask-meta")
    assert "not from cache: a similar question's answer did not fit" in meta, meta
    assert "differs: cause / prevent" in meta, meta


def test_service_unreachable_is_a_readable_message(served: Served, open_page: Any) -> None:
    page = open_page(WIDTHS["phone"])
    page.route("**/v1/ask", lambda route: route.abort("connectionrefused"))
    ask(page, ASK_QUESTION)
    assert "cannot be reached" in page.inner_text("#ask-error")


def test_a_citation_written_as_a_noun_stays_on_the_line(open_page: Any) -> None:
    """ "Specifically, [PMID:1] found ..." shows "Specifically, [1] found", not a superscript
    that reads "Specifically, ¹ found"; a citation after a statement stays a superscript."""
    page = open_page(WIDTHS["desktop"])
    shown = page.evaluate(
        """async () => {
            const { answerNodes } = await import("/web/static/ask.js");
            const box = document.createElement("p");
            const render = (text) => {
                box.replaceChildren(...answerNodes(text, () => 1));
                const tags = [...box.children].map((el) => el.tagName.toLowerCase());
                return [tags.join(" "), box.textContent];
            };
            return [
                render("Specifically, [PMID:11] found no change."),
                render("In [PMID:11], aspirin helped."),
                render("[PMID:11] found it.\\n[PMID:12] did not."),
                render("Aspirin cut strokes [PMID:11] and statins lowered LDL [PMID:12]."),
                render("The trial [PMID:11] found it."),
            ];
        }"""
    )
    assert shown == [
        ["span", "Specifically, [1] found no change."],
        ["span", "In [1], aspirin helped."],
        ["span span", "[1] found it.\n[1] did not."],
        ["sup sup", "Aspirin cut strokes [1] and statins lowered LDL [1]."],
        ["sup", "The trial [1] found it."],
    ]
    assert page.js_errors == []
