"""A real browser against a real ``medlit serve``: the fixtures of the web-page tests.

One server for the package's tests (starting it loads the embedder): ``medlit serve`` runs in a
subprocess on loopback with its own data directory, pointed at the fake E-utilities, Europe PMC
and OpenAI-compatible servers (:mod:`tests.browser.harness`). Headless Chromium is Debian's
``/usr/bin/chromium`` driven by Playwright; the tests skip when it is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.harness import (
    Served,
    launch_chromium,
    needs_chromium,
    page_factory,
    served_with_fakes,
)


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``medlit serve`` on loopback against the fakes (one for the browser tests)."""
    needs_chromium()
    with served_with_fakes(tmp_path_factory.mktemp("web")) as served:
        yield served


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright.

    Package-scoped, not session-scoped: Playwright's sync API keeps an event loop running in
    this thread while it is open, which the asyncio tests of other packages cannot share.
    """
    needs_chromium()
    with launch_chromium() as browser:
        yield browser


@pytest.fixture
def open_page(browser: Any, served: Served) -> Iterator[Any]:
    """``open_page(width, path="/")``: a fresh browser context (own storage) at that width."""
    with page_factory(browser, served.base_url) as make:
        yield make
