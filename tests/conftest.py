"""Fixtures every test may use: isolated settings, the shared data folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.config import Settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest_plugins = ["tests.fakes.fixtures", "tests.postgres"]

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data_path(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with the reason."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs ../shared/data ({path} is absent)")
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder beside the repository (skips when absent)."""
    return shared_data_path()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads the developer's MEDLIT_* environment or writes to their data dir."""
    for key in list(os.environ):
        if key.startswith("MEDLIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEDLIT_HOME", str(tmp_path / "medlit-home"))
    yield


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings with a private home and fast retries (backoff in milliseconds)."""
    s = Settings(home=tmp_path / "home")
    s.pubmed.backoff_base_s = 0.01
    s.pubmed.backoff_max_s = 0.2
    s.europepmc.backoff_base_s = 0.01
    s.europepmc.backoff_max_s = 0.2
    s.llm.backoff_base_s = 0.01
    s.llm.backoff_max_s = 0.2
    return s
