"""The report renderer of the web page: Markdown in, HTML that cannot run anything out."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlit.web.render import ALLOWED_TAGS, render_markdown_html, safe_svg_image

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[click](javascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](javascript:alert(1))",
    '<iframe src="https://evil.example"></iframe>',
    "<style>body{display:none}</style>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "`<script>` in code and ```\n<script>alert(1)</script>\n```",
]


class _Elements(HTMLParser):
    """Every element and attribute the browser would build from the HTML."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]


@pytest.mark.parametrize("markdown", HOSTILE)
def test_hostile_markup_comes_out_as_text(markdown: str) -> None:
    html = render_markdown_html(f"# Report\n\nBefore {markdown} after.\n")
    found = _Elements(html)
    assert found.tags <= ALLOWED_TAGS
    assert "script" not in found.tags and "img" not in found.tags
    for tag, name, value in found.attributes:
        assert not name.startswith("on"), (tag, name)  # no event handler
        assert name in {"href", "title", "rel", "start"}, (tag, name)
        if name == "href":
            assert value.lower().startswith(("http://", "https://", "mailto:")), value


def test_script_in_text_is_visible_as_text() -> None:
    html = render_markdown_html("The abstract said <script>alert(1)</script> verbatim.")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_report_structure_survives() -> None:
    markdown = (
        "# Aspirin after stroke\n\n**Question:** Does aspirin help?\n\n## Executive summary\n\n"
        "Aspirin lowers recurrence [1, 2].\n\n> **Evidence quality:** 2 RCTs.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n## References\n\n"
        "1. Trial. PMID: [40000001](https://pubmed.ncbi.nlm.nih.gov/40000001/).\n"
        "2. Meta. DOI: [10.5/x](https://doi.org/10.5/x).\n"
    )
    html = render_markdown_html(markdown)
    assert "<h1>Aspirin after stroke</h1>" in html
    assert "<strong>Question:</strong>" in html
    assert "<blockquote>" in html and "<table>" in html
    assert '<a href="https://pubmed.ncbi.nlm.nih.gov/40000001/" rel="noopener noreferrer">' in html
    assert html.count("<li>") == 2
    assert "style=" not in html  # the page's CSP forbids inline styles


_PIECES = st.sampled_from(
    [
        "<script>", "</script>", "<img src=x onerror=alert(1)>", "<a href='javascript:x'>",
        "[link](", "javascript:alert(1)", ")", "](", "![i](", "<", ">", '"', "'", "=", " on",
        "load=", "`", "```\n", "\n", "\n\n", "# ", "> ", "- ", "1. ", "|", "---", "**", "_",
        "&lt;", "&#106;avascript:", "<svg/onload=alert(1)>", "<!--", "-->", "\\", "text",
    ]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_no_markdown_yields_a_live_element(markdown: str) -> None:
    found = _Elements(render_markdown_html(markdown))
    assert found.tags <= ALLOWED_TAGS - {"img"}
    for tag, name, value in found.attributes:
        assert name in {"href", "title", "rel", "start"}, (tag, name)
        if name == "href":
            assert value.lower().startswith(("http://", "https://", "mailto:")), value


def _svg_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


_DRAWING = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">{}</svg>'
HOSTILE_SVG = [
    _DRAWING.format("<script>alert(1)</script>"),
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    _DRAWING.format('<image href="https://evil.example/x.png"/>'),
    _DRAWING.format('<a href="javascript:alert(1)"><text>x</text></a>'),
    _DRAWING.format('<rect fill="url(https://evil.example/#p)"/>'),
    _DRAWING.format('<rect style="fill:red"/>'),
    _DRAWING.format("<foreignObject><p>x</p></foreignObject>"),
    '<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
    _DRAWING.format("<!-- a comment -->"),
    '<svg><rect x="1"/></svg>',  # not in the SVG namespace
    "<svg xmlns='http://www.w3.org/2000/svg'><rect",  # not well-formed
]


@pytest.mark.parametrize("svg", HOSTILE_SVG)
def test_an_svg_image_that_is_not_a_plain_drawing_is_its_alt_text(svg: str) -> None:
    assert not safe_svg_image(_svg_uri(svg))
    html = render_markdown_html(f"Before ![the drawing]({_svg_uri(svg)}) after.")
    assert "<img" not in html and "the drawing" in html


def test_only_a_plain_drawing_is_shown_and_only_as_an_image() -> None:
    uri = _svg_uri(_DRAWING.format('<rect x="1" y="1" width="8" height="8" fill="#fff"/>'))
    assert safe_svg_image(uri)
    html = render_markdown_html(f"![a box]({uri}) and [a link]({uri})")
    assert f'<img src="{uri}" alt="a box">' in html
    assert "href" not in html  # the same URI as a link is not linked
    assert not safe_svg_image(uri.replace("svg+xml", "png"))
    assert not safe_svg_image(uri + "!")
