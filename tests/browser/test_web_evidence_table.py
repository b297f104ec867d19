"""The research report's evidence table in headless Chromium: rows with design and direction,
sorting, filtering by design, each cell's quote readable, the CSV export, and a phone width
without sideways scrolling."""

from __future__ import annotations

import base64
import csv
import io
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from tests.browser.corpus import RESEARCH_QUESTION
from tests.browser.harness import ARTIFACTS, WIDTHS, Served, screenshot, serious_violations

pytestmark = pytest.mark.slow

HEADINGS = ["Study", "Design", "Population (N)", "Intervention", "Comparator", "Outcomes",
            "Effect", "Direction"]  # fmt: skip
DESIGN, EFFECT, DIRECTION = 1, 6, 7


@pytest.fixture(scope="module")
def job(served: Served) -> dict[str, Any]:
    """A completed quick job (started through the API: the page is what is under test) and its
    report's JSON."""
    started = served.post("/v1/research", json={"question": RESEARCH_QUESTION, "depth": "quick"})
    assert started.status_code == 202, started.text
    job_id = started.json()["id"]
    deadline = time.monotonic() + 180
    while True:
        status = httpx.get(f"{served.base_url}/v1/research/{job_id}", timeout=10).json()
        if status["status"] in {"COMPLETED", "FAILED", "CANCELLED"}:
            break
        assert time.monotonic() < deadline, f"the job did not end in 180 s: {status['status']}"
        time.sleep(0.5)
    assert status["status"] == "COMPLETED", status
    report = httpx.get(
        f"{served.base_url}/v1/research/{job_id}/report",
        headers={"Accept": "application/json"},
        timeout=10,
    ).json()
    return {"id": job_id, "report": report}


def _open(open_page: Any, width: int, job_id: str) -> Any:
    page = open_page(width, f"/#/research/{job_id}")
    page.wait_for_selector("#evidence-table tbody tr", timeout=60_000)
    return page


def _column(page: Any, column: int) -> list[str]:
    """The visible rows' texts of one column, in their order on the page."""
    cells = page.locator(f"#evidence-table tbody tr:not([hidden]) td:nth-child({column + 1})")
    return [text.strip() for text in cells.all_inner_texts()]


def test_the_evidence_table_sorts_filters_and_shows_its_quotes(
    served: Served, open_page: Any, job: dict[str, Any]
) -> None:
    rows = job["report"]["evidence_table"]
    assert len(rows) >= 3, rows
    page = _open(open_page, WIDTHS["desktop"], job["id"])
    headings = page.locator("#evidence-table thead th").all_inner_texts()
    assert [h.strip() for h in headings] == HEADINGS
    # A row per study, each with its design and direction as the JSON has them.
    assert page.locator("#evidence-table tbody tr").count() == len(rows)
    shown = dict(
        zip(
            _column(page, 0),
            zip(_column(page, DESIGN), _column(page, DIRECTION), strict=True),
            strict=True,
        )
    )
    for row in rows:
        (study,) = [s for s in shown if f"PMID {row['pmid']}" in s]
        assert shown[study] == (row["design"], row["direction"])

    # Sorting: a heading is a button; a click sorts ascending, a second descending.
    designs = _column(page, DESIGN)
    page.click("#evidence-table thead th:nth-child(2) button.sort")
    th = page.locator("#evidence-table thead th").nth(DESIGN)
    assert th.get_attribute("aria-sort") == "ascending"
    ascending = _column(page, DESIGN)
    assert ascending == sorted(designs, key=str.casefold)
    page.click("#evidence-table thead th:nth-child(2) button.sort")
    assert th.get_attribute("aria-sort") == "descending"
    assert _column(page, DESIGN) == ascending[::-1]
    assert page.locator("#evidence-table thead th[aria-sort='none']").count() == len(HEADINGS) - 1

    # Filtering by design: only that design's rows stay; "all designs" brings them back.
    counts = {d: designs.count(d) for d in set(designs)}
    options = page.locator("#evidence-design option").all_inner_texts()
    assert options[0] == f"all designs ({len(rows)})"
    assert sorted(options[1:]) == sorted(f"{d} ({n})" for d, n in counts.items())
    design = min(counts, key=lambda d: (counts[d], d))
    page.select_option("#evidence-design", design)
    assert _column(page, DESIGN) == [design] * counts[design]
    assert page.locator("#evidence-table tbody tr[hidden]").count() == len(rows) - counts[design]
    page.select_option("#evidence-design", "")
    assert len(_column(page, DESIGN)) == len(rows)
    assert page.get_attribute("label[for='evidence-design']", "for") == "evidence-design"

    # Each filled cell shows its quote, readable text in the table (no hover, no script).
    for row in rows:
        effect = row.get("effect")
        if not effect:
            continue
        cell = page.locator("#evidence-table tbody tr", has_text=f"PMID {row['pmid']}").locator(
            f"td:nth-child({EFFECT + 1})"
        )
        assert cell.is_visible()
        text = " ".join(cell.inner_text().split())
        assert " ".join(effect["quote"].split()) in text
        assert cell.get_attribute("data-label") == "Effect"
    assert any(r.get("effect") for r in rows)

    # The CSV export: the table's rows, as the API gives them.
    with page.expect_download() as download:
        page.click("#export-csv")
    assert download.value.suggested_filename == f"medlit-{job['id']}.csv"
    exported = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text("utf-8"))))
    assert [r["pmid"] for r in exported] == [r["pmid"] for r in rows]
    assert [r["design"] for r in exported] == [r["design"] for r in rows]
    for line, row in zip(exported, rows, strict=True):
        assert line["effect_quote"] == ((row.get("effect") or {}).get("quote") or "")
        assert line["effect_from_full_text"] in {"", "false", "true"}

    assert serious_violations(page) == []
    screenshot(page, "evidence-table-1440")
    assert page.js_errors == []


def test_the_evidence_table_fits_a_phone(
    served: Served, open_page: Any, job: dict[str, Any]
) -> None:
    page = _open(open_page, WIDTHS["phone"], job["id"])
    table = page.locator("#evidence-table")
    table.scroll_into_view_if_needed()
    # No sideways scrolling: not the page, not the table; every cell inside the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS["phone"]
    widths = table.evaluate("t => [t.scrollWidth, t.clientWidth]")
    assert widths[0] <= widths[1], widths
    boxes = page.locator("#evidence-table td").evaluate_all(
        "cells => cells.filter(c => c.offsetParent).map(c => c.getBoundingClientRect().right)"
    )
    assert boxes and max(boxes) <= WIDTHS["phone"]
    # Each cell is shown under its column's name; sorting and filtering still work.
    assert page.locator("#evidence-table td[data-label='Design']").first.is_visible()
    label = page.locator("#evidence-table tbody tr").first.locator("td").nth(DESIGN)
    before = label.evaluate("c => getComputedStyle(c, '::before').content")
    assert before == '"Design"', before
    page.click("#evidence-table thead th:nth-child(2) button.sort")
    designs = _column(page, DESIGN)
    assert designs == sorted(designs, key=str.casefold)
    page.select_option("#evidence-design", designs[0])
    assert set(_column(page, DESIGN)) == {designs[0]}
    assert (
        page.locator("#evidence-table tbody tr[hidden]").first.is_hidden() or len(set(designs)) == 1
    )
    screenshot(page, "evidence-table-375")
    ARTIFACTS.mkdir(exist_ok=True)
    table.screenshot(path=str(ARTIFACTS / "evidence-table-only-375.png"))
    assert page.js_errors == []


#: Each heading's words, each on one line: the rects of a word's range (more than one: broken).
_BROKEN_HEADINGS = """
cells => cells.flatMap(th => {
  const text = th.innerText.trim();
  const node = document.createTreeWalker(th, NodeFilter.SHOW_TEXT).nextNode();
  if (!node) return [];
  const broken = [];
  let at = 0;
  for (const word of node.textContent.split(/\\s+/).filter(Boolean)) {
    at = node.textContent.indexOf(word, at);
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + word.length);
    if (range.getClientRects().length > 1) broken.push(`${text}: ${word}`);
    at += word.length;
  }
  return broken;
})
"""


@pytest.mark.parametrize("width", [1280, WIDTHS["phone"]])
def test_no_heading_breaks_mid_word_and_the_flow_is_a_diagram(
    open_page: Any, job: dict[str, Any], width: int
) -> None:
    page = _open(open_page, width, job["id"])
    heads = page.locator("#evidence-table thead th")
    assert heads.evaluate_all(_BROKEN_HEADINGS) == []
    # The PRISMA-style flow: the report's own SVG shown as an image (drawn, not broken), its
    # counts in the alt text and in the table folded under it.
    figure = page.locator("#flow-diagram img.flow-diagram")
    figure.scroll_into_view_if_needed()
    assert figure.is_visible()
    assert figure.evaluate("img => img.complete && img.naturalWidth > 0")
    label = figure.get_attribute("alt") or ""
    assert "Records identified" in label and "Included (evidence)" in label
    src = figure.get_attribute("src") or ""
    drawing = ElementTree.fromstring(base64.b64decode(src.split(",", 1)[1]))
    assert len(drawing.findall("{http://www.w3.org/2000/svg}rect")) >= 4
    box = figure.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width
    assert page.locator(".flow-table table").count() == 1
    assert page.locator(".report pre").count() == 0  # no monospace flow
    screenshot(page, f"flow-and-table-{width}")
    assert page.js_errors == []
