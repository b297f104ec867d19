"""verify_findings: grouping, single-source facts, cross-referencing into facts/discrepancies."""

from __future__ import annotations

from typing import Any

import pytest

from medlit.errors import LLMOutputError, LLMTimeout, TimeBudgetSpent
from medlit.research.models import ResearchFinding, ResearchPlan, SubQuestion
from medlit.research.verifier import group_findings, verify_findings
from medlit.types import Article, Citation
from tests.unit._research_llm import ScriptedLLM


def _finding(pmid: str, claim: str, question: str = "q1") -> ResearchFinding:
    article = Article(pmid=pmid, title=f"Article {pmid}")
    return ResearchFinding(
        claim=claim,
        quote=f"quote from {pmid} here",
        pmid=pmid,
        article_key=article.key,
        numbers=[f"n={pmid}"],
        sub_question_id=question,
        source=Citation.from_article(article),
    )


def _plan() -> ResearchPlan:
    return ResearchPlan(
        question="Q",
        depth="standard",
        sub_questions=[
            SubQuestion(id="q1", text="Does X reduce Y?"),
            SubQuestion(id="q2", text="Is X safe?"),
            SubQuestion(id="q1.1", text="Does X reduce Y in children?", depth=2, parent_id="q1"),
        ],
    )


def test_follow_up_findings_join_their_root_question_group() -> None:
    findings = [_finding("1", "a"), _finding("2", "b", "q2"), _finding("3", "c", "q1.1")]
    groups = group_findings(findings, _plan())
    assert {k: [f.pmid for f in v] for k, v in groups.items()} == {"q1": ["1", "3"], "q2": ["2"]}
    assert list(group_findings(findings)) == ["q1", "q2", "q1.1"]  # no plan: by own id


async def test_single_source_groups_are_low_confidence_without_llm_calls() -> None:
    llm = ScriptedLLM(lambda task, msgs: AssertionError("no call expected"))
    findings = [_finding("1", "X lowers Y"), _finding("1", "X lowers Z"), _finding("2", "ok", "q2")]
    facts, discrepancies = await verify_findings(findings, llm, _plan())
    assert llm.calls == []
    assert discrepancies == []
    assert [(f.statement, f.confidence) for f in facts] == [
        ("X lowers Y", "low"), ("X lowers Z", "low"), ("ok", "low"),
    ]  # fmt: skip
    assert [s.pmid for s in facts[0].sources] == ["1"]


async def test_cross_reference_gives_facts_with_all_sources_and_discrepancies() -> None:
    replies: dict[str, Any] = {
        "facts": [
            {
                "statement": "X lowers Y by a third",
                "claim_ids": [1, 2, 2, 99],
                "confidence": "high",
            },
            {"statement": "Only one source says so", "claim_ids": [1], "confidence": "high"},
            {"statement": "Nothing supports this", "claim_ids": [42], "confidence": "high"},
        ],
        "conflicts": [
            {
                "topic": "Effect in the elderly",
                "positions": [
                    {"claim": "X works in the elderly", "claim_ids": [3]},
                    {"claim": "X does not work in the elderly", "claim_ids": [4]},
                ],
                "note": "different doses",
            },
            {"topic": "one-sided", "positions": [{"claim": "a", "claim_ids": [1]}]},
        ],
    }
    llm = ScriptedLLM(lambda task, msgs: replies)
    findings = [
        _finding("1", "X lowers Y by 30%"),
        _finding("2", "X lowered Y (RR 0.67)"),
        _finding("3", "X works in elderly"),
        _finding("4", "X fails in elderly"),
        _finding("5", "X is cheap"),
    ]
    facts, discrepancies = await verify_findings(findings, llm, _plan())
    assert llm.tasks() == ["cross_reference"]
    prompt = llm.calls[0][1][1]["content"]
    assert "Does X reduce Y?" in prompt and "[5] (PMID 5) X is cheap" in prompt
    by_statement = {f.statement: f for f in facts}
    merged = by_statement["X lowers Y by a third"]
    assert merged.confidence == "high"
    assert [s.pmid for s in merged.sources] == ["1", "2"]  # all supporting sources, no 99
    assert merged.numbers == ["n=1", "n=2"]
    assert by_statement["Only one source says so"].confidence == "low"  # one source: low
    assert "Nothing supports this" not in by_statement  # no valid claim: dropped
    assert by_statement["X is cheap"].confidence == "low"  # left out by the model: kept, low
    assert len(discrepancies) == 1
    conflict = discrepancies[0]
    assert conflict.topic == "Effect in the elderly" and conflict.note == "different doses"
    assert [[s.pmid for s in c.sources] for c in conflict.claims] == [["3"], ["4"]]


@pytest.mark.parametrize(
    "error",
    [LLMOutputError("garbage", raw="{"), TimeBudgetSpent("time budget of 180 s used")],
    ids=["unparseable", "time budget spent"],
)
async def test_unparseable_or_unsent_cross_reference_degrades_to_low_confidence_facts(
    error: Exception,
) -> None:
    llm = ScriptedLLM(lambda task, msgs: error)
    findings = [_finding("1", "a"), _finding("2", "b")]
    facts, discrepancies = await verify_findings(findings, llm, _plan())
    assert [(f.statement, f.confidence) for f in facts] == [("a", "low"), ("b", "low")]
    assert discrepancies == []


async def test_a_cross_reference_timed_out_otherwise_fails_the_job() -> None:
    llm = ScriptedLLM(lambda task, msgs: LLMTimeout("timed out after 4 attempts"))
    with pytest.raises(LLMTimeout):
        await verify_findings([_finding("1", "a"), _finding("2", "b")], llm, _plan())
