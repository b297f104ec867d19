"""Pytest fixtures for the fake E-utilities and Europe PMC servers.

Import them into a ``conftest.py`` (``from tests.fakes.fixtures import *``) or register the
module as a plugin in the root conftest (``pytest_plugins = ["tests.fakes.fixtures"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from medlit.config import Settings
from medlit.types import AbstractSection, Article
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils

__all__ = [
    "PQAL_XML",
    "fake_europepmc",
    "fake_eutils",
    "make_fake_eutils",
    "sample_articles",
    "source_settings",
]

PQAL_XML = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "pubmedqa"
    / ("pqal_dev_pubmed.xml")
)


def sample_articles() -> list[Article]:
    """A small generated corpus (used when ../shared/data is absent, and by unit tests)."""
    topics = [
        ("Aspirin for secondary prevention of stroke", "Randomized Controlled Trial", 2019),
        ("Statins and muscle pain in older adults", "Cohort Studies", 2015),
        ("Metformin and cancer incidence: a meta-analysis", "Meta-Analysis", 2021),
        ("Vitamin D supplementation and fracture risk", "Randomized Controlled Trial", 2018),
        ("Mammography screening uptake after telephone counseling", "Clinical Trial", 2000),
        ("Aspirin and gastrointestinal bleeding in the elderly", "Case Reports", 2010),
    ]
    articles = []
    for n, (title, pub_type, year) in enumerate(topics, start=1):
        articles.append(
            Article(
                pmid=str(30000000 + n),
                doi=f"10.5555/medlit.{n}",
                title=title,
                abstract=[
                    AbstractSection(
                        label="BACKGROUND",
                        category="BACKGROUND",
                        text=f"We studied {title.lower()}.",
                    ),
                    AbstractSection(
                        label="CONCLUSIONS",
                        category="CONCLUSIONS",
                        text=f"Findings about {title.lower()} were consistent.",
                    ),
                ],
                authors=["Smith J", "Doe A"],
                journal="Journal of Generated Evidence",
                pub_date=f"{year} Mar",
                year=year,
                publication_types=["Journal Article", pub_type],
                mesh_terms=["Humans"],
                language="eng",
            )
        )
    return articles


@pytest.fixture
def make_fake_eutils() -> Iterator[Callable[..., FakeEutils]]:
    """Factory: ``make_fake_eutils(articles=[...])`` or ``(xml_path=...)``; started, stopped."""
    started: list[FakeEutils] = []

    def make(**kwargs: Any) -> FakeEutils:
        fake = FakeEutils(**kwargs).start()
        started.append(fake)
        return fake

    yield make
    for fake in started:
        fake.stop()


@pytest.fixture
def fake_eutils(make_fake_eutils: Callable[..., FakeEutils]) -> FakeEutils:
    """The 500 PubMedQA articles (or the generated corpus when ../shared/data is absent)."""
    if PQAL_XML.exists():
        return make_fake_eutils(xml_path=PQAL_XML)
    return make_fake_eutils(articles=sample_articles())


@pytest.fixture
def fake_europepmc() -> Iterator[FakeEuropePMC]:
    """A fake Europe PMC serving the generated corpus (and Europe PMC samples if present)."""
    with FakeEuropePMC(articles=sample_articles()) as fake:
        yield fake


@pytest.fixture
def source_settings(
    settings: Settings, fake_eutils: FakeEutils, fake_europepmc: FakeEuropePMC
) -> Settings:
    """The shared ``settings`` fixture pointed at both fakes, with fast timeouts."""
    settings.pubmed.base_url = fake_eutils.base_url
    settings.europepmc.base_url = fake_europepmc.base_url
    settings.pubmed.timeout_s = 2.0
    settings.europepmc.timeout_s = 2.0
    return settings
