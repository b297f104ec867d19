"""A real browser against a real ``medlit serve``: the fixtures of the web-page tests.

One server for the whole session (starting it loads the embedder): ``medlit serve`` runs in a
subprocess on loopback with its own data directory, pointed at the fake E-utilities, Europe PMC
and OpenAI-compatible servers started here. Headless Chromium is Debian's ``/usr/bin/chromium``
driven by Playwright (no browser is ever downloaded); the tests skip when it is absent.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.corpus import BrowserResponder, browser_corpus
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts"
WIDTHS = {"phone": 375, "desktop": 1440}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """A running ``medlit serve`` and the fakes behind it."""

    base_url: str
    eutils: FakeEutils
    europepmc: FakeEuropePMC
    llm: FakeLLMServer
    responder: BrowserResponder
    log: Path

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        """A direct HTTP request to the service (set-up, not under test)."""
        return httpx.post(self.base_url + path, timeout=60.0, **kwargs)


def serve_env(
    home: Path, eutils: FakeEutils, europepmc: FakeEuropePMC, llm: FakeLLMServer | None
) -> dict[str, str]:
    """The environment of a ``medlit`` process pointed at the fakes (no LLM when ``llm`` is
    None: answers are evidence digests and research cannot run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(
        {
            "PYTHONPATH": str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", ""),
            "HF_HUB_OFFLINE": "1",
            "MEDLIT_HOME": str(home),
            "MEDLIT_PUBMED_BASE_URL": eutils.base_url,
            "MEDLIT_PUBMED_API_KEY": "test-key",
            "MEDLIT_PUBMED_REQUESTS_PER_SECOND": "50",
            "MEDLIT_PUBMED_TIMEOUT_S": "5",
            "MEDLIT_PUBMED_MAX_RETRIES": "0",
            "MEDLIT_EUROPEPMC_BASE_URL": europepmc.base_url,
            "MEDLIT_LOCAL_ENABLED": "false",
            "MEDLIT_AGENT_MIN_DOCS": "2",
            "MEDLIT_AGENT_SCORE_THRESHOLD": "0.5",
            "MEDLIT_AGENT_FETCH_PER_ROUND": "5",
        }
    )
    if llm is not None:
        env.update(
            {
                "MEDLIT_LLM_BASE_URL": llm.base_url,
                "MEDLIT_LLM_MODEL": "fake-model",
                "MEDLIT_LLM_MAX_RETRIES": "0",
            }
        )
    return env


@contextmanager
def run_serve(tmp: Path, env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """``medlit serve`` in a subprocess on a free loopback port; yields (base URL, log file)."""
    port = _free_port()
    log = tmp / "serve.log"
    command = [sys.executable, "-m", "medlit", "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=tmp)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(base, proc, log)
            yield base, log
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def needs_chromium() -> None:
    """Skip (with the reason) when Debian's chromium is not installed."""
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium ({CHROMIUM} is absent: apt-get install -y chromium)")


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``medlit serve`` on loopback against the fakes (one for the browser tests)."""
    needs_chromium()
    tmp = tmp_path_factory.mktemp("web")
    responder = BrowserResponder()
    articles = browser_corpus()
    with (
        FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeEuropePMC(articles=articles) as europepmc,
        FakeLLMServer(responder=responder) as llm,
        run_serve(tmp, serve_env(tmp / "home", eutils, europepmc, llm)) as (base, log),
    ):
        yield Served(base, eutils, europepmc, llm, responder, log)


def _wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"medlit serve exited ({proc.returncode}):\n{log.read_text()}")
        try:
            if httpx.get(base + "/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"medlit serve did not start in 60 s:\n{log.read_text()}")


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright.

    Package-scoped, not session-scoped: Playwright's sync API keeps an event loop running in
    the main thread while it is open, and every pytest-asyncio test after it would then fail
    with "Runner.run() cannot be called from a running event loop".
    """
    from playwright.sync_api import sync_playwright

    needs_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def open_page(browser: Any, served: Served) -> Iterator[Any]:
    """``open_page(width, path="/")``: a fresh browser context (own storage) at that width."""
    with page_factory(browser, served.base_url) as make:
        yield make


@contextmanager
def page_factory(browser: Any, base_url: str) -> Iterator[Any]:
    """Yields ``make(width, path)``: a page in a fresh context; closes them all at the end."""
    contexts: list[Any] = []

    def make(width: int = WIDTHS["desktop"], path: str = "/") -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": 900}, accept_downloads=True
        )
        contexts.append(context)
        # Nothing leaves the machine: a followed PubMed link gets a stub page instead.
        context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), _offline)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.js_errors = errors  # checked by the tests: the page must not throw
        page.goto(base_url + path)
        page.wait_for_selector("html[data-ready='true']")
        return page

    try:
        yield make
    finally:
        for context in contexts:
            context.close()


def _offline(route: Any) -> None:
    route.fulfill(status=200, content_type="text/html", body="<title>offline stub</title>")


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot under .artifacts/ (git-ignored) for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def serious_violations(page: Any) -> list[str]:
    """axe-core violations of serious or critical impact."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} – {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v.get("impact") in {"serious", "critical"}
    ]
