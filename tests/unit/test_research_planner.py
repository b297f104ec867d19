"""create_plan: input validation, depth configs, the minimum and maximum of sub-questions;
what keeps a plan and its articles on the question's subject."""

from __future__ import annotations

from typing import Any

import pytest

from medlit.config import ResearchSettings
from medlit.errors import LLMProviderError, PlanningError, ValidationError
from medlit.research.models import ResearchPlan, SubQuestion
from medlit.research.planner import create_plan, names_otherwise, on_topic
from medlit.types import Article
from medlit.words.frame import read_frame
from medlit.words.topics import anchor_terms
from tests.unit._research_llm import ScriptedLLM, bare_researcher


def _plan_reply(*texts: str, priorities: list[int] | None = None) -> dict[str, Any]:
    priorities = priorities or list(range(1, len(texts) + 1))
    return {
        "sub_questions": [
            {"text": t, "priority": p, "rationale": f"because {t}", "search_query": t.lower()}
            for t, p in zip(texts, priorities, strict=True)
        ]
    }


@pytest.mark.parametrize(
    ("question", "depth", "message"),
    [
        ("", "quick", "empty"),
        ("   \n\t ", "standard", "empty"),
        ("x" * 2001, "deep", "limit is 2000"),
        ("Does aspirin prevent stroke?", "thorough", "depth must be one of"),
        ("Does aspirin prevent stroke?", "", "depth must be one of"),
    ],
)
async def test_invalid_requests_are_validation_errors_before_any_llm_call(
    question: str, depth: str, message: str
) -> None:
    llm = ScriptedLLM(lambda task, msgs: _plan_reply("a", "b", "c"))
    with pytest.raises(ValidationError, match=message):
        await create_plan(question, depth, llm, ResearchSettings())
    assert llm.calls == []


async def test_plan_is_sorted_by_priority_deduplicated_and_capped_at_the_depth_maximum() -> None:
    settings = ResearchSettings()  # quick: 3..4 sub-questions
    reply = _plan_reply(
        "Low priority aspirin stroke", "Top aspirin stroke", "Top aspirin stroke?",
        "Second aspirin stroke", "Third aspirin stroke", "Fourth aspirin stroke",
        priorities=[9, 1, 1, 2, 3, 4],
    )  # fmt: skip
    llm = ScriptedLLM(lambda task, msgs: reply)
    plan = await create_plan("  Does   aspirin prevent stroke? ", "quick", llm, settings)
    assert plan.question == "Does aspirin prevent stroke?"
    assert [q.text for q in plan.sub_questions] == [
        "Does aspirin prevent stroke?",  # the question itself, always (researched last)
        "Top aspirin stroke", "Second aspirin stroke", "Third aspirin stroke",
        "Fourth aspirin stroke",
    ]  # fmt: skip
    assert [q.id for q in plan.sub_questions] == ["q0", "q1", "q2", "q3", "q4"]
    assert all(q.depth == 1 and q.status == "PENDING" for q in plan.sub_questions)
    assert plan.sub_questions[1].search_query == "top aspirin stroke"
    assert llm.tasks() == ["plan_research"]
    system = llm.calls[0][1][0]["content"]
    assert "between 3 and 4" in system  # the depth config reaches the prompt


async def test_a_plan_short_of_the_minimum_is_asked_for_once_more() -> None:
    # Qwen2.5 1.5B proposed one sub-question, the question again, for 3 of 8 questions.
    question = "Does aspirin prevent stroke?"
    second = _plan_reply("Does aspirin prevent stroke in diabetes?", "Aspirin bleeding and stroke")
    llm = ScriptedLLM(lambda task, msgs: _plan_reply(question) if len(msgs) == 2 else second)
    plan = await create_plan(question, "quick", llm, ResearchSettings())  # quick: 3..4
    assert [q.text for q in plan.sub_questions] == [
        question,
        "Does aspirin prevent stroke in diabetes?",
        "Aspirin bleeding and stroke",
    ]
    assert plan.note is None
    assert llm.tasks() == ["plan_research", "plan_research"]
    again = llm.calls[1][1]
    assert [m["role"] for m in again] == ["system", "user", "assistant", "user"]
    assert question in again[2]["content"]  # its own reply, then what was wrong with it
    assert again[3]["content"].startswith("Only 1 of those sub-questions can be used")


async def test_a_plan_still_short_goes_ahead_and_says_so() -> None:
    llm = ScriptedLLM(
        lambda task, msgs: (
            _plan_reply("aspirin one", "aspirin two", "aspirin two!", "  ")
            if len(msgs) == 2
            else _plan_reply("What is the outcome of interest?")
        )  # lost the subject
    )
    plan = await create_plan("Does aspirin prevent stroke?", "standard", llm, ResearchSettings())
    assert [q.text for q in plan.sub_questions][1:] == ["aspirin one", "aspirin two"]
    assert plan.note is not None
    assert plan.note.startswith("The planner proposed 2 usable sub-questions where depth")
    assert "4 to 6" in plan.note
    assert len(llm.calls) == 2  # asked once more, not again and again


async def test_a_failed_second_planner_call_keeps_the_first_plan() -> None:
    def reply(task: str, msgs: list[dict[str, str]]) -> Any:
        if len(msgs) == 2:
            return _plan_reply("What is the population?", "Aspirin and stroke in women")
        return LLMProviderError("server said 500")

    llm = ScriptedLLM(reply)
    plan = await create_plan("Does aspirin prevent stroke?", "quick", llm, ResearchSettings())
    assert [q.text for q in plan.sub_questions] == [
        "Does aspirin prevent stroke?",
        "Aspirin and stroke in women",
    ]
    assert plan.note is not None and "1 usable sub-question where" in plan.note


async def test_llm_failure_is_a_planning_error() -> None:
    llm = ScriptedLLM(lambda task, msgs: LLMProviderError("server said 500"))
    with pytest.raises(PlanningError, match="server said 500"):
        await create_plan("Does aspirin prevent stroke?", "deep", llm, ResearchSettings())


async def test_unparseable_plan_researches_the_question_alone() -> None:
    # A malformed plan (after the client's repair) costs the sub-questions, not the job.
    llm = ScriptedLLM(lambda task, msgs: {"questions": "nope"})
    plan = await create_plan("Does aspirin prevent stroke?", "quick", llm, ResearchSettings())
    assert [(q.id, q.text) for q in plan.sub_questions] == [("q0", "Does aspirin prevent stroke?")]
    assert plan.note is not None and "could not write a research plan" in plan.note
    assert len(llm.calls) == 1  # no second call to a model that gave no plan


async def test_a_plan_that_timed_out_researches_the_question_alone() -> None:
    from medlit.errors import LLMTimeout

    llm = ScriptedLLM(lambda task, msgs: LLMTimeout("no reply within 120 s"))
    plan = await create_plan("Does aspirin prevent stroke?", "quick", llm, ResearchSettings())
    assert [q.id for q in plan.sub_questions] == ["q0"]
    assert plan.note is not None and "it timed out" in plan.note


async def test_a_plan_the_time_budget_cut_says_so() -> None:
    from medlit.errors import TimeBudgetSpent

    llm = ScriptedLLM(lambda task, msgs: TimeBudgetSpent("time budget of 180 s used"))
    plan = await create_plan("Does aspirin prevent stroke?", "quick", llm, ResearchSettings())
    assert [q.id for q in plan.sub_questions] == ["q0"]
    # Nothing is researched after the time ran out: the note does not say the question was.
    assert plan.note == (
        "The model could not write a research plan (the job's time budget ran out)."
    )


async def test_sub_questions_that_lost_the_subject_are_dropped() -> None:
    # What Qwen2.5 1.5B planned for this question (issue 10), plus one that kept the subject.
    reply = _plan_reply(
        "What is the population of older adults?",
        "What is the outcome of interest in this research question?",
        "Does vitamin D supplementation reduce hip fractures in nursing home residents?",
        "Does vitamin C supplementation prevent fractures in older adults?",  # another vitamin
    )
    reply["sub_questions"][2]["search_query"] = "older adults population"  # lost the subject
    llm = ScriptedLLM(lambda task, msgs: reply)
    question = "Does vitamin D supplementation prevent fractures in older adults?"
    plan = await create_plan(question, "quick", llm, ResearchSettings())
    assert [(q.id, q.text) for q in plan.sub_questions] == [
        ("q0", question),
        ("q1", "Does vitamin D supplementation reduce hip fractures in nursing home residents?"),
    ]
    assert plan.sub_questions[1].search_query is None  # rebuilt from its words when searched


def test_anchor_terms_leave_out_generic_words() -> None:
    assert anchor_terms("How severe is COVID-19 in children compared with adults?") == {
        "severe",
        "covid-19",
    }
    # How a question frames its subject: how likely, how often, whether it should be done.
    assert anchor_terms("Are women who conceived with IVF more likely to have a caesarean?") == {
        "conceived",
        "ivf",
        "caesarean",
    }
    assert anchor_terms("Should atropine be given routinely with ketamine?") == {
        "atropine",
        "ketamine",
    }
    # "None of the retrieved articles speaks of delayed, gastric, emptying, caused, keeping and
    # pylorus together", over an article on pylorus preservation and delayed gastric emptying.
    assert anchor_terms("Is delayed gastric emptying caused by keeping the pylorus?") == {
        "delayed",
        "gastric",
        "emptying",
        "pyloru",  # normalised as a plural
    }
    # "None of the articles cited speaks of finding", under a question on PSA tests.
    assert anchor_terms("Is PSA better for finding prostate cancer early?") == {
        "psa",
        "prostate",
        "cancer",
        "early",
    }
    # "None of the retrieved articles speaks of being, overweight, knee, pain, over, term,
    # regardless, x-ray and changes together": the frame of a clinician's question, and the
    # "term" of "over the long term", are no subject ("long-term care" and "term infants" are).
    assert anchor_terms(
        "Is being overweight a risk factor for knee pain in women over the long term, "
        "regardless of x-ray changes?"
    ) == {"overweight", "knee", "pain", "x-ray", "change"}
    assert anchor_terms("Does long-term care help term infants?") == {"long-term", "care", "term"}
    # "tell us" frames the question; "US" is an ultrasound.
    assert anchor_terms("Can CRP tell us the stage?") == {"crp", "stage"}
    assert anchor_terms("Is US accurate in appendicitis?") == {"us", "accurate", "appendiciti"}
    anchors = anchor_terms("Does aspirin prevent recurrent ischaemic stroke?")
    assert on_topic("Aspirin resistance in stroke survivors", anchors)
    assert not on_topic("Falls in older cancer patients", anchors)


async def test_an_article_naming_another_vitamin_does_not_bear_on_the_question() -> None:
    question = "Does vitamin D supplementation prevent fractures in older adults?"
    plan = ResearchPlan(
        question=question,
        depth="quick",
        sub_questions=[SubQuestion(id="q0", text=question, priority=1, rationale="")],
    )
    articles = [
        Article(pmid="1", title="Vitamin D supplementation and hip fractures in nursing homes"),
        Article(pmid="2", title="Can vitamin C prevent pain syndromes after wrist fractures?"),
        Article(pmid="3", title="Vitamins C and D and fractures in the elderly"),
    ]
    researcher = bare_researcher(read_frame(question))
    bearing = await researcher._bearing(plan, plan.sub_questions[0], articles)
    assert bearing == {articles[0].key, articles[2].key}
    assert names_otherwise("Does vitamin C prevent fractures?", question)
    assert not names_otherwise("Vitamins C and D and fractures", question)


async def test_each_sub_question_keeps_the_frames_subject_and_outcome_and_says_its_part() -> None:

    question = "Does aspirin prevent stroke in older adults?"
    reply = _plan_reply(
        "What is the effect of aspirin on stroke in older adults?",
        "What are the bleeding risks of aspirin?",
        "Is aspirin compared with placebo in trials of aspirin and stroke?",
    )
    frame = read_frame(question)
    llm = ScriptedLLM(lambda task, msgs: reply)
    plan = await create_plan(question, "quick", llm, ResearchSettings(), frame=frame)
    assert {(q.subject, q.outcome) for q in plan.sub_questions} == {("aspirin", "stroke")}
    asks = {q.text: q.asks for q in plan.sub_questions}
    assert asks[question] == ["subject", "outcome", "population"]
    assert asks["What is the effect of aspirin on stroke in older adults?"] == asks[question]
    assert asks["What are the bleeding risks of aspirin?"] == ["subject"]
    # A frame the job keeps is the one used: none is read here.
    other = frame.__class__(**{**frame.to_json(), "populations": (), "outcome": "bleeding"})
    plan = await create_plan(
        question, "quick", ScriptedLLM(lambda t, m: reply), ResearchSettings(), frame=other
    )
    assert {q.outcome for q in plan.sub_questions} == {"bleeding"}
    assert plan.sub_questions[2].asks == ["subject", "outcome"]
