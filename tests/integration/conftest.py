"""Fixtures of the source integration tests: the fake E-utilities and Europe PMC servers."""

from __future__ import annotations

from tests.fakes.fixtures import (
    fake_europepmc,
    fake_eutils,
    make_fake_eutils,
    source_settings,
)

__all__ = ["fake_europepmc", "fake_eutils", "make_fake_eutils", "source_settings"]
