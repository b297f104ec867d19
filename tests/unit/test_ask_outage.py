"""A source outage is an outage, not an answer: every source failed and nothing was cited, so
the result says ``outage``, gives no verdict and says in its answer that nothing was searched."""

from __future__ import annotations

from typing import Any

from medlit.agent.state import initial_state
from medlit.assistant import OUTAGE_ANSWER, AskResult
from medlit.types import Citation
from medlit.usage import Usage

ERROR = "pubmed: connection failed (ConnectError: All connection attempts failed)"


def _result(**state: Any) -> AskResult:
    full = initial_state("Does aspirin prevent stroke?", sources=["pubmed"])
    drafted = {
        "final_answer": "Verdict: Uncertain\n\nNone of the retrieved articles mentions aspirin.",
        "verdict": "uncertain",
    }
    full.update({**drafted, **state})  # type: ignore[typeddict-item]
    return AskResult.from_state(full, Usage(), 12.0)


def test_every_source_failed_and_nothing_cited_is_an_outage() -> None:
    result = _result(fetch_errors=[ERROR, ERROR], searched_ok=False, citations=[])
    assert result.outage is True and result.verdict is None
    assert result.answer == OUTAGE_ANSWER
    assert result.warnings == [f"source failed: {ERROR}"]  # once
    assert '"outage":true' in result.model_dump_json()


def test_a_source_that_answered_once_is_no_outage() -> None:
    result = _result(fetch_errors=[ERROR], searched_ok=True, citations=[])
    assert result.outage is False and result.verdict == "uncertain"


def test_an_answer_that_cites_is_no_outage() -> None:
    cited = Citation(pmid="31000001", title="Aspirin and stroke", url="u")
    result = _result(fetch_errors=[ERROR], searched_ok=False, citations=[cited])
    assert result.outage is False and result.verdict == "uncertain"
    assert result.answer.startswith("Verdict: Uncertain")


def test_no_error_and_nothing_found_is_no_outage() -> None:
    result = _result(fetch_errors=[], searched_ok=True, citations=[], verdict=None)
    assert result.outage is False
