"""The PRISMA-style flow drawn once, as an SVG, for the exported report and the web page."""

from __future__ import annotations

import base64
import re
from xml.etree import ElementTree

from medlit.research.flow_diagram import flow_alt, flow_image_markdown, flow_steps, flow_svg
from medlit.research.screening import Flow
from medlit.web.render import render_markdown_html, safe_svg_image

SVG = "{http://www.w3.org/2000/svg}"
FLOW = Flow(
    identified=47,
    not_english=3,
    duplicates_removed=9,
    screened=35,
    excluded={"off the question": 11, "budget": 4, "no verified finding": 2},
    included=18,
)


def _texts(svg: str) -> list[str]:
    root = ElementTree.fromstring(svg)
    return [el.text or "" for el in root.iter(f"{SVG}text")]


def test_the_drawing_is_svg_with_a_title_a_description_and_every_count() -> None:
    svg = flow_svg(FLOW)
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert root.findtext(f"{SVG}title") == "Flow of records"
    desc = root.findtext(f"{SVG}desc") or ""
    for step, count in flow_steps(FLOW):
        assert f"{step}: {count}" in desc
    texts = _texts(svg)
    for shown in ["Records identified", "47", "Articles screened", "35", "Included (evidence)",
                  "18", "Not English: 3", "Duplicates: 9", "off the question: 11", "budget: 4",
                  "no verified finding: 2"]:  # fmt: skip
        assert shown in texts, shown
    # Boxes and arrows: three steps, two side boxes, an arrow into each box after the first.
    assert len(root.findall(f"{SVG}rect")) == 1 + 3 + 2
    assert len(root.findall(f"{SVG}polygon")) == 4
    # Nothing fetched, nothing run: no link, script, style or external font.
    assert not re.search(r"href|<script|<style|url\(|@import|<image", svg)


def test_a_flow_with_nothing_excluded_says_so() -> None:
    flow = FLOW.model_copy(update={"excluded": {}, "included": 35})
    assert "none excluded" in _texts(flow_svg(flow))


def test_every_text_is_escaped() -> None:
    hostile = FLOW.model_copy(update={"excluded": {'<script>alert("x")</script> & ]](': 1}})
    svg = flow_svg(hostile)
    root = ElementTree.fromstring(svg)  # still well-formed
    assert root.find(f".//{SVG}script") is None
    assert '<script>alert("x")</script> & ]](: 1' in _texts(svg)
    line = flow_image_markdown(hostile)
    assert safe_svg_image(line[line.index("(data:") + 1 : -1])


def test_the_markdown_image_embeds_the_same_svg_and_the_page_shows_it() -> None:
    line = flow_image_markdown(FLOW)
    match = re.fullmatch(r"!\[(.+)\]\((data:image/svg\+xml;base64,([A-Za-z0-9+/=]+))\)", line)
    assert match, line
    assert match.group(1) == flow_alt(FLOW)
    assert base64.b64decode(match.group(3)).decode() == flow_svg(FLOW)
    html = render_markdown_html(f"### Flow of records\n\n{line}\n")
    img = re.search(r'<img src="([^"]+)" alt="([^"]+)"', html)
    assert img and img.group(1) == match.group(2)
    assert "Included (evidence): 18" in img.group(2)
