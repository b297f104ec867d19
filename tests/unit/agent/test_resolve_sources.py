"""Which sources ``ask`` searches: ``all`` means the enabled ones, however it is asked for."""

from __future__ import annotations

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.errors import ValidationError


@pytest.mark.parametrize("sources", ["all", ["all"], "pubmed,all", None])
def test_all_means_enabled_sources(settings: Settings, sources: str | list[str] | None) -> None:
    settings.search.default_source = "all"
    settings.europepmc.enabled = False
    assert Assistant(settings).resolve_sources(sources) == ["pubmed", "local"]


def test_an_explicit_source_is_kept_and_unknown_ones_are_refused(settings: Settings) -> None:
    assistant = Assistant(settings)
    assert assistant.resolve_sources("europepmc") == ["europepmc"]
    with pytest.raises(ValidationError, match="unknown source"):
        assistant.resolve_sources("scopus")
