"""A near question the cache guard refuses: never the other answer, and no new search.

The ask flow against the fake E-utilities and LLM servers on loopback (real HTTP, SQLite and
embedder), and ``medlit ask --json`` as a user runs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import medlit
from medlit.assistant import Assistant
from medlit.code_version import code_hash
from medlit.config import Settings
from medlit.types import Article
from medlit.words.frame import frame_of, read_frame
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer
from tests.guard_cases import BREAST
from tests.integration.test_ask_cli import _run
from tests.integration.test_ask_flow import Q1, _article, _configure, corpus

PACKAGE = Path(medlit.__file__).resolve().parent


def _breast_articles() -> list[Article]:
    return [
        _article(
            20 + n,
            f"Immediate breast reconstruction and the timing of adjuvant chemotherapy: {kind}",
            "Immediate breast reconstruction did not delay the delivery of adjuvant chemotherapy.",
            kind,
            2010 + n,
        )
        for n, kind in enumerate(("Cohort Studies", "Observational Study", "Meta-Analysis"))
    ]


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(lambda pmids: "Yes")
        yield server


async def test_a_refused_near_question_reuses_the_evidence_one_llm_call_no_search(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        first = await assistant.ask(Q1, session_id="s1")
        assert first.cache.admitted and first.api_calls.pubmed >= 1
        # Kept with its question's frame, the one the ask read: the guard compares that one.
        ((question, kept),) = assistant.deps.answers.store.read(
            "SELECT question, frame FROM answers"
        )
        assert frame_of(question, kept) == read_frame(question) and first.question_frame
        assert frame_of(question, kept).to_json() == {**first.question_frame, "sources": ()}
        searched = len(eutils.history)
        llm_before = len(llm_server.history)

        near = await assistant.ask("Does aspirin cause stroke in adults?")
        assert near.cache.tier1 == "miss"
        assert near.cache.miss_reason == "guard_rejected"
        assert near.cache.guard_reason == "differs: cause / prevent"
        assert near.cache.similarity is not None and near.cache.similarity >= 0.92
        # The cost of being safe: one LLM call on the stored evidence, not a search.
        assert near.api_calls.pubmed == 0 and len(eutils.history) == searched
        assert near.api_calls.llm == 1 and len(llm_server.history) == llm_before + 1
        assert near.cache.evidence_reused > 0

        # The same rule on a follow-up's standalone rewrite.
        follow = await assistant.ask("and in older women?", session_id="s1")
        assert "women" in follow.standalone_question
        assert follow.cache.tier1 == "miss" and follow.cache.miss_reason == "guard_rejected"
        assert follow.cache.guard_reason is not None and "women" in follow.cache.guard_reason


@pytest.fixture
def breast_eutils() -> Iterator[FakeEutils]:
    articles = [*corpus(), *_breast_articles()]
    with FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def test_the_cli_refuses_the_issue_example_and_json_says_why(
    tmp_path: Path, breast_eutils: FakeEutils
) -> None:
    code = code_hash(PACKAGE)
    first = _run(tmp_path, breast_eutils, BREAST, "--json")
    assert first.returncode == 0, first.stderr
    # Admitted before the first process printed this (the store closed after the write).
    assert json.loads(first.stdout)["cache"]["admitted"]
    again = json.loads(_run(tmp_path, breast_eutils, BREAST, "--json").stdout)
    if again["cache"]["miss_reason"] == "fingerprint_mismatch" and code_hash(PACKAGE) != code:
        # The answer fingerprint carries a hash of medlit's sources: an edit of them between
        # the two asks (a tree edited while its suite runs) makes the first answer another
        # version's, which must not be served.
        pytest.skip("medlit's sources changed between the two asks")
    assert again["cache"]["tier1"] == "hit", again["cache"]

    improve = _run(tmp_path, breast_eutils, BREAST.replace("compromise", "improve"), "--json")
    assert improve.returncode == 0, improve.stderr
    cache = json.loads(improve.stdout)["cache"]
    assert cache["tier1"] == "miss"
    assert cache["miss_reason"] == "guard_rejected"
    assert cache["guard_reason"] == "differs: improve / compromise"
