"""mount_web on a bare FastAPI app: the page, its assets (shipped in the package), the CSP."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from medlit.web import CONTENT_SECURITY_POLICY, STATIC_DIR, mount_web


def _client() -> TestClient:
    app = FastAPI()
    mount_web(app, render_dependencies=[])
    return TestClient(app)


def test_page_and_every_asset_it_references_are_served() -> None:
    client = _client()
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assets = re.findall(r'(?:src|href)="(/web/static/[^"]+)"', page.text)
    assert {"/web/static/app.js", "/web/static/app.css"} <= set(assets)
    # ES modules import each other: follow the imports too.
    seen: set[str] = set()
    while assets:
        path = assets.pop()
        if path in seen:
            continue
        seen.add(path)
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        if path.endswith(".js"):
            assert "javascript" in response.headers["content-type"]
            assets += [
                f"/web/static/{m}" for m in re.findall(r'from "\./([\w.-]+)"', response.text)
            ]
    assert {p.name for p in STATIC_DIR.iterdir()} == {p.rsplit("/", 1)[1] for p in seen} | {
        "index.html"
    }


def test_no_asset_comes_from_another_host() -> None:
    for path in STATIC_DIR.iterdir():
        text = path.read_text(encoding="utf-8")
        # Links *to* PubMed are fine; nothing is loaded from elsewhere.
        assert not re.search(r"""(src|href)=["']https?://""", text), path.name
        assert not re.search(r"""(import|fetch)\(?\s*["']https?://""", text), path.name
        assert "@import" not in text and "url(http" not in text, path.name


def test_render_route_sanitises() -> None:
    response = _client().post("/web/render", json={"markdown": "x <script>alert(1)</script>"})
    assert response.status_code == 200
    assert response.json()["html"] == "<p>x &lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    assert _client().post("/web/render", json={"markdown": "x" * 1_000_001}).status_code == 422
