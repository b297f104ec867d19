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


def test_check_validates_once_and_the_fingerprint_follows_the_settings(
    settings: Settings,
) -> None:
    settings.europepmc.enabled = False
    assistant = Assistant(settings)
    checked = assistant.check("  Does  aspirin\tprevent stroke? ", "s-1", "all")
    assert checked.text == "Does aspirin prevent stroke?"
    assert checked.session_id == "s-1"
    assert checked.sources == ("pubmed", "local")
    assert checked.fingerprint == assistant.deps.fingerprint(["local", "pubmed"])
    # the memoised fingerprint still changes with what shapes an answer
    settings.agent.prompt_version = "ask-v2"
    assert assistant.check("Does aspirin prevent stroke?", None, "all").fingerprint != (
        checked.fingerprint
    )
    with pytest.raises(ValidationError, match="empty"):
        assistant.check("   ")
    with pytest.raises(ValidationError, match="unknown source"):
        assistant.check("Does aspirin prevent stroke?", None, "scopus")


async def test_a_checked_question_carries_its_own_session_and_sources(settings: Settings) -> None:
    assistant = Assistant(settings)
    checked = assistant.check("Does aspirin prevent stroke?")
    with pytest.raises(ValueError, match="carries its own"):
        await assistant.ask(checked, session_id="s-1")
    await assistant.aclose()
