"""A question not in English: one line says medlit searches English abstracts and which
language the question reads as; with a model, its English translation (one
``translate_question`` call) is what is searched, answered and shown. Real HTTP against the
fake E-utilities and LLM servers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.language import non_english
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
SPANISH = "¿La aspirina previene el ictus en adultos?"
CHINESE = "阿司匹林能预防成人中风吗？"
ENGLISH = "Does aspirin prevent stroke in adults?"
LINE = "medlit searches English abstracts; this question reads as"


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(
            lambda pmids: "Yes", translations={SPANISH: ENGLISH, CHINESE: ENGLISH}
        )
        yield server


def _configure(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer | None) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.agent.min_docs = 2
    if llm is not None:
        settings.llm.base_url = llm.base_url
        settings.llm.model = "fake-model"
    return settings


def _tasks(llm: FakeLLMServer) -> list[str]:
    responder = llm.responder
    assert isinstance(responder, EvidenceResponder)
    return responder.tasks


def test_the_language_is_named_and_english_is_not_flagged() -> None:
    assert non_english(SPANISH) is not None and non_english(SPANISH).name == "Spanish"  # type: ignore[union-attr]
    assert non_english(CHINESE) is not None and non_english(CHINESE).code == "zh"  # type: ignore[union-attr]
    for english in (ENGLISH, "Are fibroadenomas malignant?", "Is levaquin for diverticulitis?"):
        assert non_english(english) is None, english


async def test_without_a_model_one_line_says_it_searches_english_abstracts(
    settings: Settings, eutils: FakeEutils
) -> None:
    async with Assistant(_configure(settings, eutils, None)) as assistant:
        result = await assistant.ask(SPANISH)
    assert result.question_language == "es" and result.searched_question is None
    assert result.language_note is not None
    assert result.language_note.startswith(f"{LINE} Spanish")
    assert "configure a model" in result.language_note
    english = None
    async with Assistant(_configure(settings, eutils, None)) as assistant:
        english = await assistant.ask(ENGLISH)
    assert english.question_language is None and english.language_note is None


async def test_with_a_model_the_english_translation_is_searched_and_shown(
    settings: Settings, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    async with Assistant(_configure(settings, eutils, llm)) as assistant:
        result = await assistant.ask(SPANISH)
        assert _tasks(llm).count("translate_question") == 1
        assert result.question_language == "es"
        assert result.searched_question == ENGLISH == result.standalone_question
        assert result.language_note == (
            f'{LINE} Spanish. It searched its English translation: "{ENGLISH}"'
        )
        # The translation found the aspirin and stroke articles, which the Spanish did not name.
        assert result.citations and any("spirin" in c.title for c in result.citations)
        assert "previene" not in result.answer
        terms = [r.params.get("term", "") for r in eutils.requests() if "esearch" in r.endpoint]
        assert terms and all("previene" not in term for term in terms), terms
        asked = len(llm.completions)
        again = await assistant.ask(SPANISH)  # the same question: read by its key
    assert again.cache.tier1 == "hit" and len(llm.completions) == asked
    assert again.searched_question == ENGLISH and again.language_note == result.language_note


def test_the_cli_prints_the_line_and_json_carries_the_translation(
    tmp_path: Path, eutils: FakeEutils, llm: FakeLLMServer
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "MEDLIT_HOME": str(tmp_path / "home"),
        "MEDLIT_PUBMED_BASE_URL": eutils.base_url,
        "MEDLIT_LLM_BASE_URL": llm.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
        "COLUMNS": "200",
    }

    def ask(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "medlit", "ask", CHINESE, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    shown = ask("--no-cache")
    assert shown.returncode == 0, shown.stderr
    first = shown.stdout.splitlines()[0]
    assert first == f'{LINE} Chinese. It searched its English translation: "{ENGLISH}"'
    data = json.loads(ask("--json").stdout)
    assert data["question_language"] == "zh" and data["searched_question"] == ENGLISH
    assert data["language_note"] == first
