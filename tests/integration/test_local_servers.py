"""``ask`` and research quick against fakes of the local servers users run (llama-cpp-python,
Ollama, vLLM), each refusing ``response_format`` the way the real one does, with structured
output left on (the default)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from medlit.assistant import Assistant
from medlit.checks.verdict import NO_FROM, VerdictChoice
from medlit.config import Settings
from medlit.research.models import JobStatus
from medlit.research.runtime import open_orchestrator
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.llm_server import FakeLLMServer, Reply, last_user_message, schema_name_of
from tests.fakes.research_responder import ARTICLES, ResearchResponder

FLAVOURS = [("llama_cpp", 500), ("ollama", 500), ("vllm", 400)]


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=ARTICLES, rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def _configure(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.local.enabled = False
    settings.search.default_source = "pubmed"
    settings.llm.base_url = llm.base_url
    settings.llm.model = "local-model"
    settings.llm.max_retries = 3
    settings.llm.backoff_base_s = 5.0  # a retried refusal would make the test slow, and fail
    assert settings.llm.structured_output
    return settings


@pytest.mark.parametrize(("flavour", "status"), FLAVOURS)
async def test_research_quick_completes_on_local_servers(
    settings: Settings, eutils: FakeEutils, flavour: str, status: int
) -> None:
    with FakeLLMServer(responder=ResearchResponder(), flavour=flavour) as llm:
        async with open_orchestrator(_configure(settings, eutils, llm)) as orchestrator:
            job = orchestrator.create_job(
                "Does aspirin prevent recurrent ischaemic stroke, and at what bleeding cost?",
                "quick",
            )
            job = await orchestrator.run(job)
        assert job.status is JobStatus.COMPLETED, job.error
        assert job.report is not None and job.report.references
        statuses = [r.status for r in llm.completions]
        refused = [r for r in llm.completions if r.status == status]
        if flavour in ("llama_cpp", "ollama"):  # their refusal of json_schema is remembered
            assert len(refused) == 1, statuses
            later = llm.completions[statuses.index(status) + 1 :]
            assert all((r.response_format or {}).get("type") != "json_schema" for r in later)
        else:  # vLLM takes schemas through guided decoding, but for a keyword xgrammar
            # lacks (the findings' "minItems"): that one refusal is remembered
            assert len(refused) <= 1 and any(
                (r.response_format or {}).get("type") == "json_schema" for r in llm.completions
            )
        assert all(s in (200, status) for s in statuses)


@pytest.mark.parametrize(("flavour", "status"), FLAVOURS)
async def test_ask_completes_on_local_servers(
    settings: Settings, eutils: FakeEutils, flavour: str, status: int
) -> None:
    with FakeLLMServer(responder=EvidenceResponder(lambda pmids: "Yes"), flavour=flavour) as llm:
        async with Assistant(_configure(settings, eutils, llm)) as assistant:
            result = await assistant.ask(
                "Does aspirin prevent recurrent ischaemic stroke?", session_id="s1"
            )
            follow = await assistant.ask("and in older adults?", session_id="s1")
        assert result.mode == "llm" and result.citations, result.answer
        assert result.verdict == "yes"
        assert follow.answer and follow.standalone_question != "and in older adults?"
        assert any(r.response_format for r in llm.completions)  # the follow-up's JSON plan
        assert all(r.status in (200, status) for r in llm.completions)


async def test_a_missing_verdict_line_is_read_by_a_verdict_call(
    settings: Settings, eutils: FakeEutils
) -> None:
    # The evidence is divided (one bleeding study concludes yes, one no), so the verdict
    # call's "no" contradicts neither what the answer cites nor what it states.
    answers = EvidenceResponder(lambda pmids: "Yes")

    def forgetful(request: dict[str, Any]) -> str:
        if schema_name_of(request) == "VerdictChoice":
            assert "Written answer:\n" in last_user_message(request)
            return '{"verdict": "no"}'
        if "What does the written answer conclude" in last_user_message(request):
            return "The answer concludes"  # no logprobs and no verdict word: JSON is asked next
        return answers(request).rsplit("\nVerdict:", 1)[0]  # the model forgot the line

    with FakeLLMServer(responder=forgetful, flavour="llama_cpp") as llm:
        async with Assistant(_configure(settings, eutils, llm)) as assistant:
            result = await assistant.ask(
                "Does low-dose aspirin increase major bleeding after stroke?"
            )
        assert result.verdict == "no"  # read from the answer, not defaulted
        assert result.answer.startswith("Verdict: No\n\n") and result.citations
        verdict_call = llm.completions[-1]
        assert verdict_call.response_format == {
            "type": "json_object",
            "schema": VerdictChoice.model_json_schema(),
        }  # llama.cpp's grammar keeps the reply to the three values


async def test_an_opening_verdict_is_not_trusted_the_reasoning_decides(
    settings: Settings, eutils: FakeEutils
) -> None:
    answers = EvidenceResponder(lambda pmids: "Yes")
    verdict_prompts: list[str] = []
    # A small model's reading leans to "Yes" even when the text says no: scored, the mass on
    # "No" decides from NO_FROM on.
    reading = {"Yes": 0.6, "No": NO_FROM + 0.05, "yes": 0.1}

    def hasty(request: dict[str, Any]) -> str | Reply:
        if "What does the written answer conclude" in last_user_message(request):
            verdict_prompts.append(last_user_message(request))
            return Reply.scored(reading)
        # A small model's habit: "Yes." first, whatever the reasoning after it says.
        return "Yes. " + answers(request).rsplit("\nVerdict:", 1)[0]

    with FakeLLMServer(responder=hasty, flavour="llama_cpp") as llm:
        async with Assistant(_configure(settings, eutils, llm)) as assistant:
            result = await assistant.ask(
                "Does low-dose aspirin increase major bleeding after stroke?"
            )
            reading = {"Yes": 0.9, "No": 0.05}  # a clear "Yes" reading stays yes
            again = await assistant.ask(
                "Does low-dose aspirin increase major bleeding after stroke?", use_cache=False
            )
        assert result.verdict == "no" and result.answer.startswith("Verdict: No\n\n")
        assert "Yes." not in result.answer and result.citations
        # The verdict call reads the reasoning without the opening guess, as one scored word.
        assert "Written answer:\nYes" not in verdict_prompts[0]
        assert llm.completions[-1].json["top_logprobs"] == 10
        assert again.verdict == "yes" and len(verdict_prompts) == 2
