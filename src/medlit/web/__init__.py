"""The web page of ``medlit serve``: static files shipped in the package, mounted at ``/``.

The page (``static/``: ``index.html``, ES modules, one style sheet) talks to the same JSON and
SSE endpoints as any other client; there is no build step and nothing is fetched from another
host, so it works on a machine without internet. :func:`mount_web` adds to a FastAPI app:

- ``GET /``: the page, with a Content-Security-Policy that allows only this origin's scripts,
  styles and connections (no inline script, no ``eval``, no third-party hosts);
- ``/web/static/...``: the page's scripts and style sheet;
- ``POST /web/render``: Markdown in, sanitised HTML out (:mod:`medlit.web.render`), used to
  show research reports without ever running HTML from a model or an abstract.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from medlit.web.render import render_markdown_html

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MAX_RENDER_BODY_BYTES",
    "STATIC_DIR",
    "RenderRequest",
    "RenderResponse",
    "mount_web",
]

STATIC_DIR = Path(__file__).resolve().parent / "static"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
MAX_MARKDOWN_CHARS = 400_000  # a deep report is a few tens of thousands
#: The largest body of ``POST /web/render``: its Markdown at the worst JSON escaping (an astral
#: character as two \\uXXXX escapes, 12 bytes); larger than the API's own body limit.
MAX_RENDER_BODY_BYTES = 12 * MAX_MARKDOWN_CHARS + 4096


class RenderRequest(BaseModel):
    """Markdown to render for the page (a research report)."""

    markdown: str = Field(max_length=MAX_MARKDOWN_CHARS, description="Untrusted Markdown text.")


class RenderResponse(BaseModel):
    """The Markdown as sanitised HTML."""

    html: str = Field(description="An HTML fragment: allow-listed tags, no script, no handlers.")


def mount_web(app: FastAPI, *, render_dependencies: Sequence[Any] | None = None) -> None:
    """Serve the web page at ``/`` (and its assets and render route) from ``app``.

    Args:
        app: the service's FastAPI app.
        render_dependencies: dependencies of ``POST /web/render``; default: the caller's API
            key (:func:`medlit.service.auth.current_tenant`), so with keys configured it is
            authenticated and rate-limited like every other route.
    """
    from fastapi import Depends
    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    if render_dependencies is None:
        from medlit.service.auth import current_tenant

        render_dependencies = [Depends(current_tenant)]

    index = STATIC_DIR / "index.html"

    async def page() -> FileResponse:
        return FileResponse(index, media_type="text/html", headers=_PAGE_HEADERS)

    async def render(body: RenderRequest) -> RenderResponse:
        return RenderResponse(html=render_markdown_html(body.markdown))

    app.add_api_route("/", page, methods=["GET"], include_in_schema=False)
    app.add_api_route(
        "/web/render",
        render,
        methods=["POST"],
        response_model=RenderResponse,
        dependencies=list(render_dependencies),
        summary="Render Markdown to sanitised HTML (the web page's report view)",
        tags=["web"],
    )
    app.mount("/web/static", _with_headers(StaticFiles(directory=STATIC_DIR)), name="web-static")


def _with_headers(static: Any) -> Any:
    """The static files app, adding the page's security headers to every file it sends (a
    file opened directly, index.html included, gets the same policy as ``/``)."""
    from starlette.datastructures import MutableHeaders
    from starlette.types import Message, Receive, Scope, Send

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _PAGE_HEADERS.items():
                    if name != "Cache-Control":  # keep StaticFiles' ETag revalidation
                        headers[name] = value
            await send(message)

        await static(scope, receive, send_with_headers)

    return app
