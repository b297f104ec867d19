"""Markdown to HTML that is safe to put in the page, for research reports.

A report is written by a model from abstracts, so its Markdown may hold anything an abstract or
a model can produce, ``<script>`` and ``<img onerror=...>`` included. Two independent layers keep
that inert:

1. markdown-it-py renders CommonMark with raw HTML **disabled**: an HTML tag in the Markdown
   comes out as escaped text, and links with ``javascript:``/``data:`` URLs are not linked.
2. nh3 (the ammonia sanitiser) then keeps only an allow-list of tags and attributes and
   http/https/mailto URLs, so even a renderer bug cannot let a handler or a script through.

The page also sends a Content-Security-Policy without ``'unsafe-inline'`` (see
:mod:`medlit.web`), a third layer in the browser.

One image is let through: a report's flow diagram, an SVG embedded as a
``data:image/svg+xml;base64,`` URI (:mod:`medlit.research.flow_diagram`). An ``<img>`` keeps it
only when the decoded drawing passes :func:`safe_svg_image`: no DOCTYPE, entity, comment or
CDATA, only the drawing elements and attributes medlit's diagrams use, and no value that could
name a URL. (An SVG shown as an image runs no script and fetches nothing in any case.)
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from functools import lru_cache
from xml.etree import ElementTree

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.normalize_url import validateLink
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = ["ALLOWED_TAGS", "render_markdown_html", "safe_svg_image"]

ALLOWED_TAGS = frozenset(
    {
        "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote",
        "ul", "ol", "li", "strong", "em", "code", "pre", "a", "del",
        "table", "thead", "tbody", "tr", "th", "td", "img",
    }
)  # fmt: skip
# No style attributes: the page's CSP forbids inline styles (column alignment is lost).
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "img": {"src", "alt"}}
_URL_SCHEMES = {"http", "https", "mailto", "data"}
_ABSOLUTE = ("http://", "https://", "mailto:")

_SVG_URI = "data:image/svg+xml;base64,"
_SVG_URI_RE = re.compile(r"data:image/svg\+xml;base64,[A-Za-z0-9+/]+={0,2}")
_MAX_SVG_BYTES = 64_000
_SVG_NS = "{http://www.w3.org/2000/svg}"
_SVG_ELEMENTS = frozenset({"svg", "title", "desc", "g", "rect", "line", "polygon", "text"})
_SVG_ATTRIBUTES = frozenset(
    {
        "viewBox", "width", "height", "role", "aria-labelledby", "id", "x", "y", "x1", "y1",
        "x2", "y2", "rx", "points", "fill", "stroke", "stroke-width", "stroke-dasharray",
        "font-family", "font-size", "font-weight", "text-anchor",
    }
)  # fmt: skip
# Numbers, colours, ids and keywords: nothing with ":", "(", "/" or a quote, so no URL.
_SVG_VALUE = re.compile(r"[\w\s.,#%-]*")


def safe_svg_image(uri: str) -> bool:
    """Whether ``uri`` is a base64 ``data:`` SVG made only of the drawing elements and
    attributes of medlit's diagrams (see the module's notes); anything else is refused."""
    if not _SVG_URI_RE.fullmatch(uri):
        return False
    try:
        data = base64.b64decode(uri.removeprefix(_SVG_URI), validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(data) > _MAX_SVG_BYTES or b"<!" in data or b"<?" in data:
        return False  # no DOCTYPE, entity, comment, CDATA or processing instruction
    try:
        root = ElementTree.fromstring(data.decode("utf-8"))
    except (ElementTree.ParseError, UnicodeDecodeError):
        return False
    return root.tag == f"{_SVG_NS}svg" and all(
        element.tag.startswith(_SVG_NS)
        and element.tag.removeprefix(_SVG_NS) in _SVG_ELEMENTS
        and all(
            name in _SVG_ATTRIBUTES and _SVG_VALUE.fullmatch(value)
            for name, value in element.attrib.items()
        )
        for element in root.iter()
    )


def _valid_link(url: str) -> bool:
    # markdown-it's own check refuses every data: URI but four raster types; the SVG is
    # judged whole by the attribute filter below.
    return validateLink(url) or bool(_SVG_URI_RE.fullmatch(url))


def _absolute_links_only(element: str, attribute: str, value: str) -> str | None:
    # Relative hrefs ("", "x", "//host") would point into the service itself: a report has no
    # business linking there, so only absolute web and mail links survive.
    if attribute == "href" and not value.lower().startswith(_ABSOLUTE):
        return None
    # An image only as a drawing shown safe (see safe_svg_image); no other source at all.
    if attribute == "src" and not (element == "img" and safe_svg_image(value)):
        return None
    return value


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    # "commonmark" with html off; tables and strikethrough on (GFM-style reports use them).
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    md.validateLink = _valid_link  # type: ignore[method-assign]
    md.add_render_rule("image", _image)
    return md


def _image(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # Any other image is its alt text: no request, no broken-image box.
    if safe_svg_image(str(tokens[idx].attrGet("src") or "")):
        return renderer.image(tokens, idx, options, env)
    return escapeHtml(renderer.renderInlineAsText(tokens[idx].children or [], options, env))


def render_markdown_html(markdown: str) -> str:
    """Render Markdown to sanitised HTML (no raw HTML, no scripts, no event handlers).

    Args:
        markdown: the Markdown text (a research report, or any untrusted Markdown).

    Returns:
        An HTML fragment whose tags are all in :data:`ALLOWED_TAGS`; every link opens with
        ``rel="noopener noreferrer"``; an image's source is a drawing :func:`safe_svg_image`
        accepts, or the image has none.
    """
    html = _renderer().render(markdown)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes=_ATTRIBUTES,
        url_schemes=_URL_SCHEMES,
        link_rel="noopener noreferrer",
        attribute_filter=_absolute_links_only,
    )
