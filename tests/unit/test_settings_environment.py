"""The MEDLIT_ variables read without pydantic-settings give what pydantic-settings gives."""

from __future__ import annotations

import pytest

from medlit.config import Settings, _read_by_pydantic_settings, environment

CASES = [
    {},
    {"MEDLIT_HOME": "/tmp/medlit-a"},
    {"medlit_home": "/tmp/medlit-b", "MEDLIT_PUBMED_API_KEY": "k", "MEDLIT_LOG_LEVEL": "info"},
    {"MEDLIT_LLM_BASE_URL": "http://127.0.0.1:1/v1", "MEDLIT_LLM_MODEL": "m"},
    {"MEDLIT_SEARCH_DEFAULT_SOURCE": "local", "MEDLIT_CACHE_ENABLED": "false"},
    {"MEDLIT_PUBMED_REQUESTS_PER_SECOND": "5", "MEDLIT_DATABASE_POOL_SIZE": "3"},
    # theirs: JSON, a whole section, a name no field has, an empty value
    {"MEDLIT_LLM_TASKS": '{"answer": {"model": "x"}}'},
    {"MEDLIT_PUBMED": '{"tool": "t"}'},
    {"MEDLIT_PUBMED_FOO": "1"},
    {"MEDLIT_HOME": ""},
]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    import os

    for name in [n for n in os.environ if n.upper().startswith("MEDLIT_")]:
        monkeypatch.delenv(name)
    return monkeypatch


@pytest.mark.parametrize("env", CASES)
def test_the_variables_read_as_pydantic_settings_reads_them(
    env: dict[str, str], clean_env: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert environment() == _read_by_pydantic_settings()


def test_given_values_win_section_by_section(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MEDLIT_PUBMED_API_KEY", "k")
    clean_env.setenv("MEDLIT_PUBMED_TOOL", "from-env")
    settings = Settings(pubmed={"tool": "given"})
    assert settings.pubmed.tool == "given"
    assert settings.pubmed.api_key is not None
    assert settings.pubmed.api_key.get_secret_value() == "k"


def test_a_bad_value_names_its_field(clean_env: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    clean_env.setenv("MEDLIT_PUBMED_TIMEOUT_S", "soon")
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert caught.value.errors()[0]["loc"] == ("pubmed", "timeout_s")
