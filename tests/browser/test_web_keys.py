"""A service with API keys and no LLM: the page asks for the key once, keeps it for the tab,
and says in words what cannot be done without an LLM."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.browser.corpus import ASK_QUESTION, browser_corpus
from tests.browser.harness import WIDTHS, needs_chromium, page_factory, run_serve, serve_env
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils

pytestmark = pytest.mark.slow


@dataclass
class Locked:
    base_url: str
    key: str


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Locked]:
    """``medlit serve`` with one API key (tenant ``lab``) and no LLM configured."""
    needs_chromium()
    tmp = tmp_path_factory.mktemp("web-keys")
    articles = browser_corpus()
    with (
        FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeEuropePMC(articles=articles) as europepmc,
    ):
        env = serve_env(tmp / "home", eutils, europepmc, None)
        created = subprocess.run(
            [sys.executable, "-m", "medlit", "keys", "create", "--tenant", "lab"],
            env=env, capture_output=True, text=True, check=True, cwd=tmp, timeout=60,
        )  # fmt: skip
        key = created.stdout.strip().splitlines()[-1]
        with run_serve(tmp, env) as (base, _log):
            yield Locked(base, key)


@pytest.fixture
def open_locked(browser: Any, locked: Locked) -> Iterator[Any]:
    with page_factory(browser, locked.base_url) as make:
        yield make


def _ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.press("#question", "Enter")


def test_the_page_asks_for_the_key_once_and_answers_without_an_llm(
    locked: Locked, open_locked: Any
) -> None:
    page = open_locked(WIDTHS["desktop"])
    # Before any question, the page says a key is needed and where one comes from.
    page.wait_for_selector("#key-needed:not([hidden])")
    assert "medlit keys create" in page.inner_text("#key-needed")
    _ask(page, ASK_QUESTION)
    page.wait_for_selector("#key-dialog[open]")
    assert page.is_visible("#api-key-input")
    assert "medlit keys create" in page.inner_text("#key-help")
    # A wrong key: the service refuses it, and the page says so in words.
    page.fill("#api-key-input", "not-a-key")
    page.press("#api-key-input", "Enter")
    page.wait_for_selector("#ask-error:not([hidden])")
    assert "API key" in page.inner_text("#ask-error")
    # Asked again: the dialog says why, and the right key gets the answer.
    _ask(page, ASK_QUESTION)
    page.wait_for_selector("#key-dialog[open]")
    assert "not accepted" in page.inner_text("#key-reason")
    page.fill("#api-key-input", locked.key)
    page.click("#key-dialog button[value='save']")
    page.wait_for_selector("#ask-result:not([hidden])", timeout=60_000)
    assert page.evaluate("sessionStorage.getItem('medlit.apiKey')") == locked.key
    # No LLM: an evidence digest, labelled as such, still with numbered PubMed links.
    assert "Evidence digest" in page.inner_text("#answer")
    assert page.locator("#answer a.cite").count() >= 1
    # The key is kept for the tab: a reload asks without prompting.
    page.reload()
    page.wait_for_selector("html[data-ready='true']")
    assert page.is_visible("#forget-key")
    _ask(page, ASK_QUESTION)
    page.wait_for_selector("#ask-result:not([hidden])", timeout=60_000)
    assert not page.is_visible("#key-dialog")
    assert "Answered from cache" in page.inner_text("#cache-note")
    page.click("#forget-key")
    assert page.evaluate("sessionStorage.getItem('medlit.apiKey')") is None
    # Nothing of the tenant's stays on screen: no answer, no earlier answers.
    assert not page.is_visible("#ask-result") and not page.is_visible("#history-box")
    assert page.inner_text("#answer") == "" and page.locator("#citations li").count() == 0
    page.wait_for_selector("#key-needed:not([hidden])")
    assert page.js_errors == [] or all("401" in e for e in page.js_errors), page.js_errors


def test_research_without_an_llm_says_how_to_configure_one(
    locked: Locked, open_locked: Any
) -> None:
    page = open_locked(WIDTHS["phone"])
    page.evaluate("key => sessionStorage.setItem('medlit.apiKey', key)", locked.key)
    page.goto(locked.base_url + "/#/research")
    page.wait_for_selector("#jobs li")
    page.fill("#research-question", "Does aspirin prevent recurrent stroke?")
    page.press("#research-question", "Enter")
    page.wait_for_selector("#research-error:not([hidden])")
    error = page.inner_text("#research-error")
    assert "LLM" in error and "MEDLIT_LLM" in error, error
    assert "Traceback" not in error
    assert "#/research/" not in page.url  # no job was started
    # Forgetting the key empties the tenant's job list too.
    page.reload()
    page.wait_for_selector("#jobs li")
    page.click("#forget-key")
    assert page.locator("#jobs li").count() == 0
    assert page.evaluate("sessionStorage.getItem('medlit.apiKey')") is None
