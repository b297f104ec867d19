"""Running ``medlit serve`` against the fakes and driving Debian's Chromium at it.

Used by the browser tests (``tests/browser``) and by ``benchmarks/web_page.py``. Chromium is
``/usr/bin/chromium`` (Debian's package) driven by Playwright: no browser is ever downloaded.
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

from tests.browser.corpus import BrowserResponder, browser_corpus
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "WIDTHS",
    "Served",
    "ask",
    "launch_chromium",
    "needs_chromium",
    "page_factory",
    "run_serve",
    "screenshot",
    "serious_violations",
    "serve_env",
    "served_with_fakes",
]

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


def needs_chromium() -> None:
    """Skip the test (with the reason) when Debian's chromium is not installed."""
    if not CHROMIUM.exists():
        import pytest

        pytest.skip(f"needs Debian's chromium ({CHROMIUM} is absent: apt-get install -y chromium)")


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


def _wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180  # a loaded machine: tens of seconds to start
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"medlit serve exited ({proc.returncode}):\n{log.read_text()}")
        try:
            if httpx.get(base + "/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"medlit serve did not start in 180 s:\n{log.read_text()}")


@contextmanager
def served_with_fakes(tmp: Path) -> Iterator[Served]:
    """The fakes (the browser corpus, the careful model) and ``medlit serve`` over them."""
    responder = BrowserResponder()
    articles = browser_corpus()
    with (
        FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeEuropePMC(articles=articles) as europepmc,
        FakeLLMServer(responder=responder) as llm,
        run_serve(tmp, serve_env(tmp / "home", eutils, europepmc, llm)) as (base, log),
    ):
        yield Served(base, eutils, europepmc, llm, responder, log)


@contextmanager
def launch_chromium() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def page_factory(browser: Any, base_url: str) -> Iterator[Any]:
    """Yields ``make(width, path)``: a page in a fresh context; closes them all at the end.

    Every page records its uncaught errors and console errors in ``page.js_errors``, and
    nothing it asks for leaves the machine (a followed PubMed link gets a stub page).
    """
    contexts: list[Any] = []

    def make(width: int = WIDTHS["desktop"], path: str = "/") -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": 900}, accept_downloads=True
        )
        contexts.append(context)
        context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), _offline)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.js_errors = errors
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


def ask(page: Any, question: str) -> dict[str, float]:
    """Type a question, press Enter, wait for the outcome; the page's own timings in ms.

    The page marks ``ask:submit`` (Enter), ``ask:first-progress`` (first SSE event),
    ``ask:rendered`` (answer in the DOM) and ``ask:painted`` (after the next frame).
    """
    page.fill("#question", question)
    page.evaluate("performance.clearMarks()")
    page.press("#question", "Enter")
    page.wait_for_function(
        "() => performance.getEntriesByName('ask:rendered').length > 0"
        " && performance.getEntriesByName('ask:painted').length > 0"
        " || !document.getElementById('ask-error').hidden",
        timeout=60_000,
    )
    marks: dict[str, float] = page.evaluate(
        "Object.fromEntries(performance.getEntriesByType('mark')"
        ".map(m => [m.name.replace('ask:', ''), m.startTime]))"
    )
    start = marks["submit"]
    return {k: v - start for k, v in marks.items() if k != "submit"}


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
