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
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

__all__ = ["ALLOWED_TAGS", "render_markdown_html"]

ALLOWED_TAGS = frozenset(
    {
        "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote",
        "ul", "ol", "li", "strong", "em", "code", "pre", "a", "del",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
# No style attributes: the page's CSP forbids inline styles (column alignment is lost).
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
_URL_SCHEMES = {"http", "https", "mailto"}
_ABSOLUTE = ("http://", "https://", "mailto:")


def _absolute_links_only(element: str, attribute: str, value: str) -> str | None:
    # Relative hrefs ("", "x", "//host") would point into the service itself: a report has no
    # business linking there, so only absolute web and mail links survive.
    if attribute == "href" and not value.lower().startswith(_ABSOLUTE):
        return None
    return value


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    # "commonmark" with html off; tables and strikethrough on (GFM-style reports use them).
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def render_markdown_html(markdown: str) -> str:
    """Render Markdown to sanitised HTML (no raw HTML, no scripts, no event handlers).

    Args:
        markdown: the Markdown text (a research report, or any untrusted Markdown).

    Returns:
        An HTML fragment whose tags are all in :data:`ALLOWED_TAGS`; every link opens with
        ``rel="noopener noreferrer"``.
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
