"""``medlit ask`` end to end: the graph against the fake E-utilities and LLM servers on loopback.

Real HTTP, real SQLite, the real embedder; only PubMed and the model are fakes.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from medlit.agent.prompt import (
    ANSWER_AGAINST_ARTICLES,
    ANSWER_ECHOED,
    ANSWER_EMPTY,
    ANSWER_UNSUPPORTED,
    NO_EVIDENCE_ANSWER,
    best_article_lost,
)
from medlit.agent.query import search_steps
from medlit.assistant import AskResult, Assistant
from medlit.config import Settings
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame
from tests.fakes.eutils_server import FakeEutils, article_to_xml
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import FakeLLMServer

Q1 = "Does aspirin prevent stroke in adults?"


def _article(
    n: int, title: str, conclusion: str, pub_type: str, year: int, mesh: list[str] | None = None
) -> Article:
    return Article(
        pmid=str(31000000 + n),
        title=title,
        abstract=[
            AbstractSection(
                label="METHODS",
                category="METHODS",
                text=f"We studied {title.lower()} in a cohort of adults.",
            ),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
        journal="Journal of Test Evidence",
        year=year,
        publication_types=["Journal Article", pub_type],
        mesh_terms=mesh or [],
        language="eng",
    )


def corpus() -> list[Article]:
    """The generated sample corpus plus several aspirin/stroke studies (so evidence is ample)."""
    extra = [
        _article(
            1,
            "Low-dose aspirin and stroke prevention in adults",
            "Aspirin reduced the incidence of ischaemic stroke in adults.",
            "Meta-Analysis",
            2020,
        ),
        _article(
            2,
            "Aspirin for primary prevention of stroke: a randomised trial",
            "Aspirin lowered stroke risk compared with placebo.",
            "Randomized Controlled Trial",
            2018,
        ),
        _article(
            3,
            "Aspirin use and stroke outcomes in older adults",
            "Regular aspirin use was associated with fewer strokes in adults.",
            "Observational Study",
            2016,
        ),
        _article(
            4,
            "Aspirin dose and gastrointestinal bleeding in stroke prevention",
            "Higher aspirin doses increased gastrointestinal bleeding in adults.",
            "Cohort Studies",
            2017,
        ),
        _article(
            5,
            "Vitamin C and complex regional pain syndrome after wrist fractures",
            "Complex regional pain syndrome (CRPS) follows wrist fractures. Vitamin C reduced "
            "complex regional pain syndrome after wrist fractures.",
            "Randomized Controlled Trial",
            2007,
        ),
        _article(
            6,
            "Vitamin C dose and complex regional pain syndrome in wrist fractures",
            "A daily vitamin C dose of 500 mg prevented complex regional pain syndrome.",
            "Randomized Controlled Trial",
            2010,
            mesh=["Dysgeusia"],
        ),
    ]
    return sample_articles() + extra


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        server.responder = EvidenceResponder(lambda pmids: "Yes")
        yield server


def _configure(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer | None) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.pubmed.timeout_s = 5.0
    settings.agent.min_docs = 2
    settings.agent.score_threshold = 0.5
    settings.agent.fetch_per_round = 5
    if llm is not None:
        settings.llm.base_url = llm.base_url
        settings.llm.model = "fake-model"
    return settings


#: The vitamin C trials' question (31000005 and 31000006 answer it).
CRPS = "Does vitamin C prevent complex regional pain syndrome after wrist fractures?"
CRPS_CHILDREN = (
    "Does vitamin C prevent complex regional pain syndrome after wrist fractures in children?"
)


async def _ask_once(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer, question: str
) -> AskResult:
    """One question to a fresh Assistant on the fakes (the test has set the responder)."""
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        return await assistant.ask(question)


@pytest.fixture
async def assistant(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> AsyncIterator[Assistant]:
    async with Assistant(_configure(settings, eutils, llm_server)) as a:
        yield a


def _answering(write: Callable[[str], str]) -> Callable[[dict[str, Any]], str]:
    """A responder answering like :class:`EvidenceResponder` (verdict Yes), but for the answer
    itself, which ``write`` writes from the prompt (what a model did)."""
    evidence = EvidenceResponder(lambda pmids: "Yes")

    def respond(request: dict[str, Any]) -> str:
        reply = evidence(request)
        if evidence.tasks[-1] != "answer":
            return reply
        return write(request["messages"][-1]["content"])

    return respond


async def _ask_answered(
    settings: Settings,
    eutils: FakeEutils,
    llm_server: FakeLLMServer,
    answer: str,
    question: str = Q1,
) -> AskResult:
    """One question to a fresh Assistant whose model writes ``answer`` (what a model wrote)."""
    llm_server.responder = _answering(lambda prompt: answer)
    return await _ask_once(settings, eutils, llm_server, question)


def _pmids_in_corpus() -> set[str]:
    return {a.pmid for a in corpus() if a.pmid}


def _check_cited(result: AskResult) -> None:
    assert result.citations, result.answer
    for citation in result.citations:
        assert citation.pmid in _pmids_in_corpus()
        assert f"[PMID:{citation.pmid}]" in result.answer


def _cause(result: AskResult) -> tuple[str, str | None, str | None]:
    """Why ``result``'s verdict is withheld: its kind, the check's id, the sentence."""
    cause = result.verdict_cause
    assert cause is not None and cause.detail
    return cause.kind, cause.check, cause.sentence


async def test_miss_then_hit_then_reworded_hit(
    assistant: Assistant, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    first = await assistant.ask(Q1)
    assert first.cache.tier1 == "miss" and first.cache.miss_reason == "nothing_similar"
    assert first.api_calls.pubmed >= 2 and first.api_calls.llm == 1
    assert first.api_calls.pubmed == len(eutils.history)
    _check_cited(first)
    assert first.verdict == "yes" and first.answer.startswith("Verdict: Yes\n")
    assert first.stop_reason == "threshold" and first.cache.admitted
    assert first.mode == "llm"

    sent_pubmed, sent_llm = len(eutils.history), len(llm_server.history)
    again = await assistant.ask(Q1)
    assert again.cache.tier1 == "hit" and again.stop_reason == "cache_hit"
    assert first.cache.created_at is None
    assert again.cache.created_at is not None and 0 <= time.time() - again.cache.created_at < 600
    assert again.api_calls.pubmed == 0 and again.api_calls.llm == 0
    assert (len(eutils.history), len(llm_server.history)) == (sent_pubmed, sent_llm)
    assert again.answer == first.answer and again.verdict == "yes"
    assert [c.pmid for c in again.citations] == [c.pmid for c in first.citations]

    reworded = await assistant.ask("In adults, can aspirin prevent strokes?")
    assert reworded.cache.tier1 == "hit", reworded.cache
    assert reworded.api_calls.pubmed == 0 and reworded.api_calls.llm == 0
    assert reworded.timings_ms["total"] < 1000


async def test_related_question_reuses_evidence(assistant: Assistant) -> None:
    first = await assistant.ask(Q1)
    related = await assistant.ask("Which aspirin doses increase bleeding in stroke prevention?")
    assert related.cache.tier1 == "miss"
    assert related.cache.evidence_reused > 0
    assert related.api_calls.pubmed < first.api_calls.pubmed
    _check_cited(related)


async def test_different_drug_is_not_a_hit(assistant: Assistant) -> None:
    await assistant.ask(Q1)
    other = await assistant.ask("Does clopidogrel prevent stroke in adults?")
    assert other.cache.tier1 == "miss"
    assert other.cache.miss_reason in {"nothing_similar", "guard_rejected"}
    children = await assistant.ask("Does aspirin prevent stroke in children?")
    assert children.cache.tier1 == "miss"


async def test_stop_on_limits(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    settings.agent.score_threshold = 1.0  # never reached
    settings.agent.min_docs = 50  # nor enough articles on the question
    settings.agent.max_iterations = 1
    async with Assistant(settings) as assistant:
        result = await assistant.ask(Q1)
    assert result.stop_reason == "max_iterations"
    assert result.api_calls.pubmed == 2  # one round: esearch + efetch
    settings.agent.max_iterations = 5
    settings.agent.max_api_calls = 1
    settings.home = settings.home.parent / "home2"
    async with Assistant(settings) as assistant:
        result = await assistant.ask(Q1)
    assert result.stop_reason == "max_api_calls"
    assert result.api_calls.pubmed <= 2  # one round of esearch + efetch, then the budget stops


async def test_stop_on_stagnation(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    _configure(settings, eutils, llm_server)
    settings.agent.score_threshold = 1.0
    settings.agent.min_docs = 50  # never enough articles on the question
    settings.agent.max_iterations = 10
    settings.agent.fetch_per_round = 1  # full pages: the loop could page on and on
    settings.agent.stagnation_rounds = 1
    settings.agent.min_gain = 0.05
    async with Assistant(settings) as assistant:
        result = await assistant.ask(Q1)
    assert result.stop_reason == "stagnation"
    assert result.api_calls.pubmed < 20


async def test_a_subject_read_with_common_words_is_searched_by_the_words_naming_it(
    assistant: Assistant, eutils: FakeEutils
) -> None:
    # The frame reads the whole "adding an atypical antipsychotic to antidepressant treatment"
    # as the subject; no article says "adding". Once the outcome is dropped, the subject is
    # searched by fewer of its words, the commonest first, never by fewer than name it.
    question = "Does adding an atypical antipsychotic to antidepressant treatment save money?"
    found = AbstractSection(
        label="CONCLUSIONS",
        category="CONCLUSIONS",
        text="Atypical antipsychotics given with an antidepressant in depression saved costs.",
    )
    others = [
        Article(pmid="31000093", title="Adding exercise to care", abstract=[]),
        Article(pmid="31000095", title="Atypical antipsychotic cost", abstract=[found]),
    ]
    eutils.add_xml(
        b"<PubmedArticleSet>" + b"".join(map(article_to_xml, others)) + b"</PubmedArticleSet>"
    )
    result = await assistant.ask(question)
    searched = [r.params.get("term", "") for r in eutils.requests("esearch")]
    steps = search_steps(read_frame(question))
    assert searched == [s.query for s in steps[: len(searched)]]
    # Every search keeps the words that name the subject; the last of the plan's widenings
    # left out only common ones. (No article held says "money": the last resort, any of the
    # question's rarer words, may follow.)
    assert all("antipsychotic" in t and "antidepressant" in t for t in searched)
    widened = [s.query for s in steps[: len(searched)] if not s.any_word]
    assert "adding" not in widened[-1] and "treatment" not in widened[-1]
    assert any(s["step"].startswith("widened the subject:") for s in result.searches)
    assert "31000095" in {c.pmid for c in result.citations}
    fetched = [p for r in eutils.requests("efetch") for p in r.params.get("id", "").split(",")]
    assert len(fetched) == len(set(fetched))


def test_a_subject_no_rare_word_names_is_never_searched_by_fewer_words() -> None:
    # "limiting teenagers'": two common words; either alone would find anything.
    steps = search_steps(read_frame("Does limiting teenagers' access to films reduce smoking?"))
    assert not any(s.why.startswith("widened the subject") for s in steps)
    assert all("limiting" in s.query and "teenager" in s.query for s in steps)


async def test_a_search_that_finds_nothing_keeps_the_drugs_name_longest(
    assistant: Assistant, eutils: FakeEutils
) -> None:
    # "diseases AND treated AND glofitamab" found nothing; ORing every word brought articles on
    # other diseases. Relaxed a word at a time, the drug's name alone finds the one on it.
    conclusion = AbstractSection(
        label="CONCLUSIONS",
        category="CONCLUSIONS",
        text="Glofitamab was well tolerated and effective in relapsed lymphoma after CAR T cells.",
    )
    eutils.add_xml(
        b"<PubmedArticleSet>"
        + article_to_xml(
            Article(
                pmid="31000091",
                title="Glofitamab after CAR T-cell therapy",
                abstract=[conclusion],
                year=2024,
            )
        )
        + b"</PubmedArticleSet>"
    )
    # Another article says "diseases", so the word is one the server knows (PubMed ignores a
    # word it finds nowhere): the drug and "diseases" together find nothing.
    other = AbstractSection(label="", category="UNASSIGNED", text="A registry of rare diseases.")
    eutils.add_xml(
        b"<PubmedArticleSet>"
        + article_to_xml(Article(pmid="31000092", title="Rare diseases", abstract=[other]))
        + b"</PubmedArticleSet>"
    )
    result = await assistant.ask("What diseases can be treated with glofitamab?")
    searched = [r.params.get("term", "") for r in eutils.requests("esearch")]
    # Not the last resort by any of its words: an article on the subject was found first.
    planned = search_steps(read_frame("What diseases can be treated with glofitamab?"))
    assert planned[-1].any_word
    steps = planned[:-1]
    assert searched == [s.query for s in steps] and searched[-1] == "glofitamab"
    assert all("glofitamab" in term for term in searched)
    # Each search is in the answer with what it is; the one that found the article had to
    # leave the outcome out, and the answer says so.
    assert [s["step"] for s in result.searches] == [s.why for s in steps]
    assert result.searches[-1]["step"] == "dropped the outcome: diseases"
    assert any("without diseases" in w for w in result.warnings), result.warnings
    # No article is fetched twice in one ask.
    fetched = [p for r in eutils.requests("efetch") for p in r.params.get("id", "").split(",")]
    assert len(fetched) == len(set(fetched))
    assert "31000091" in {c.pmid for c in result.citations}


async def test_no_article_is_fetched_twice_in_an_ask_without_the_cache(
    assistant: Assistant, eutils: FakeEutils
) -> None:
    # Without the cache, each relaxed search that found the same one article fetched it again
    # (7 searches, the article fetched 7 times): the sources are told what the ask holds.
    conclusion = AbstractSection(
        label="CONCLUSIONS", category="CONCLUSIONS", text="Zanubrutinib was effective."
    )
    other = AbstractSection(label="", category="UNASSIGNED", text="Elderly lymphoma patients.")
    eutils.add_xml(
        b"<PubmedArticleSet>"
        + article_to_xml(Article(pmid="31000093", title="Zanubrutinib", abstract=[conclusion]))
        + article_to_xml(Article(pmid="31000094", title="Lymphoma", abstract=[other]))
        + b"</PubmedArticleSet>"
    )
    question = "Does zanubrutinib improve survival in elderly lymphoma patients?"
    result = await assistant.ask(question, use_cache=False)
    assert len(result.searches) > 1  # it searched on after the article was first found
    assert sum("pmid:31000093" in s["found"] for s in result.searches) > 1
    fetched = [p for r in eutils.requests("efetch") for p in r.params.get("id", "").split(",")]
    assert fetched.count("31000093") == 1, fetched


async def test_no_results_answers_plainly_without_llm(
    assistant: Assistant, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    result = await assistant.ask("Does zorblatamab cure quixotic fever?")
    assert result.stop_reason == "no_results"
    assert result.answer == NO_EVIDENCE_ANSWER
    assert result.citations == [] and result.verdict is None
    assert _cause(result) == ("no_evidence", None, None)  # withheld: nothing to read it from
    assert result.api_calls.llm == 0 and len(llm_server.history) == 0
    # Every search its frame plans (every concept, widened, then without the outcome; the
    # subject in each; last, any of its rarer words), all in the one round that found
    # nothing; no loop.
    steps = search_steps(read_frame("Does zorblatamab cure quixotic fever?"))
    assert [s.query for s in steps] == [
        'zorblatamab AND ("quixotic fever" OR "quixotic fevers")',
        "zorblatamab AND (quixotic AND (fever OR fevers))",
        "zorblatamab",
        "zorblatamab OR quixotic OR fever OR fevers",
    ]
    assert result.api_calls.pubmed == len(steps)
    assert not result.cache.admitted
    again = await assistant.ask("Does zorblatamab cure quixotic fever?")
    assert again.cache.tier1 == "miss"  # "no evidence" is never cached


async def test_follow_up_is_rewritten_before_the_cache(
    assistant: Assistant, llm_server: FakeLLMServer
) -> None:
    await assistant.ask(Q1, session_id="s1")
    plans_before = sum(1 for r in llm_server.history if _is_plan(r.json))
    assert plans_before == 0  # a standalone first question is planned without the LLM
    follow = await assistant.ask("and what about gastrointestinal bleeding?", session_id="s1")
    plans = [r for r in llm_server.history if _is_plan(r.json)]
    assert len(plans) == 1
    assert "aspirin" in follow.standalone_question.lower()
    assert "bleeding" in follow.standalone_question.lower()
    # The rewrite came before the lookup: the cache saw the standalone question, not the
    # fragment, so the aspirin/stroke answer was not served for it.
    assert follow.cache.tier1 == "miss"
    # Another session has no memory: the same fragment is not rewritten.
    alone = await assistant.ask("and what about gastrointestinal bleeding?", session_id="s2")
    assert alone.standalone_question == "and what about gastrointestinal bleeding?"
    assert sum(1 for r in llm_server.history if _is_plan(r.json)) == 1


async def test_a_follow_up_naming_another_vitamin_is_the_previous_question_renamed(
    assistant: Assistant, llm_server: FakeLLMServer
) -> None:
    # "and vitamin D?" after a vitamin C question: renamed exactly, with no LLM rewrite, and
    # never the vitamin C answer (the guard tells the two apart).
    first = await assistant.ask(
        "Does vitamin C prevent complex regional pain syndrome?", session_id="s1"
    )
    follow = await assistant.ask("and vitamin d?", session_id="s1")
    assert follow.standalone_question == ("Does vitamin D prevent complex regional pain syndrome?")
    assert not any(_is_plan(r.json) for r in llm_server.history)
    assert first.cache.admitted and follow.cache.tier1 == "miss"


async def test_a_rewrite_that_drops_the_follow_up_is_not_answered_as_the_previous_question(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # A small model made "and in children?" standalone as the previous question, unchanged;
    # the cache then served the adults' answer for it. Now the rewrite is refused.
    llm_server.responder = EvidenceResponder(lambda pmids: "Yes", drop_follow_up=True)
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        first = await assistant.ask(Q1, session_id="s1")
        assert first.cache.admitted
        follow = await assistant.ask("and in children?", session_id="s1")
    assert sum(1 for r in llm_server.history if _is_plan(r.json)) == 1  # it was asked
    assert follow.cache.tier1 == "miss"
    assert follow.standalone_question != first.standalone_question
    assert "children" in follow.standalone_question and "aspirin" in follow.standalone_question


async def test_a_follow_up_about_children_is_not_served_the_answer_that_named_no_one(
    assistant: Assistant,
) -> None:
    # "what about children?" after a meropenem question that named no population: the
    # standalone question differs by "children" alone, and the cache served the first answer,
    # which rested on studies of adults.
    first = await assistant.ask(
        "Does low-dose aspirin reduce the incidence of ischaemic stroke in patients?",
        session_id="s1",
    )
    assert first.cache.admitted
    follow = await assistant.ask("what about children?", session_id="s1")
    assert "children" in follow.standalone_question
    assert follow.cache.tier1 == "miss", follow.cache
    assert follow.cache.miss_reason == "guard_rejected"
    assert follow.cache.guard_reason is not None and "child" in follow.cache.guard_reason


def _is_plan(request: dict[str, object]) -> bool:
    messages = request.get("messages")
    assert isinstance(messages, list)
    return "Rewrite the user's latest question" in str(messages[0].get("content", ""))


async def test_a_sentence_citing_an_article_about_another_vitamin_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # Asked about vitamin D over vitamin C trials, a small model wrote "Vitamin D reduced ..."
    # citing them: every word but one letter is in the abstract, and the PMID was retrieved.
    llm_server.responder = EvidenceResponder(lambda pmids: "Yes", swap=("vitamin C", "vitamin D"))
    question = "Does vitamin D prevent complex regional pain syndrome after wrist fractures?"
    # A relaxed search keeps "vitamin d"; a search engine matching on part of the words (as
    # PubMed's term mapping may) still brings the vitamin C trials.
    eutils.match = "any"
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        result = await assistant.ask(question)
        again = await assistant.ask(question)
    searched = [r.params.get("term", "") for r in eutils.requests("esearch")]
    assert searched and '"vitamin d"' in searched[0]  # not "vitamin" alone
    vitamin_c = {"31000005", "31000006"}
    written = [r for r in llm_server.history if "Evidence:" in str(r.json)]
    assert all(p in str(written[0].json) for p in vitamin_c)  # both trials were in the prompt
    assert not vitamin_c & {c.pmid for c in result.citations}
    assert "vitamin D reduced" not in result.answer and "vitamin D dose" not in result.answer
    left_out = [w for w in result.warnings if w.startswith("a sentence was left out")]
    assert len(left_out) == 2
    assert all("vitamin D" in w and "about vitamin C" in w for w in left_out)
    # What is left does not speak of vitamin D: the model's "Yes" stood on the sentences gone.
    assert result.verdict == "uncertain"
    assert _cause(result) == ("check", "left-unanswered", None)
    assert result.answer.startswith(
        "Verdict: Uncertain\n\nNone of the retrieved articles addresses vitamin D: the "
        "statements written from articles about vitamin C were left out."
    )
    assert not result.cache.admitted and again.cache.tier1 == "miss"


async def test_the_verdict_is_read_again_when_a_sentence_was_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # One sentence names vitamin E over a vitamin C trial and goes; the model's "Yes" may have
    # rested on it, so the verdict is asked of what is left (which cites only the other trial).
    responder = EvidenceResponder(
        lambda pmids: "Yes" if "31000005" in pmids else "No",
        swap=("vitamin C reduced", "vitamin E reduced"),
    )
    llm_server.responder = responder
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    # The verdict call: one scored word, then JSON when (as here) no logprobs come back.
    assert responder.tasks[0] == "answer" and set(responder.tasks[1:]) == {"verdict"}
    assert result.verdict == "no" and result.answer.startswith("Verdict: No\n\n")
    assert "vitamin E" not in result.answer and "31000005" not in result.answer
    assert "[PMID:31000006]" in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000005 for vitamin E, but that article is "
        "about vitamin C"
    ]
    assert result.api_calls.llm == len(responder.tasks)


async def test_a_sentence_naming_a_population_its_article_never_mentions_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # Asked a follow-up "... in children?", the local model wrote "... in children [PMID of a
    # study that never mentions children]": the PMID was retrieved, and the words are its own.
    responder = EvidenceResponder(
        lambda pmids: "Yes", swap=("vitamin C reduced", "in children, vitamin C reduced")
    )
    llm_server.responder = responder
    result = await _ask_once(settings, eutils, llm_server, CRPS_CHILDREN)
    assert "in children" not in result.answer and "31000005" not in result.answer
    assert "[PMID:31000006]" in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000005 for 'children', which that article "
        "never mentions"
    ]
    # Nothing left speaks of children: the model's "Yes" stood on the sentence gone.
    assert result.verdict == "uncertain"
    assert _cause(result) == ("check", "untold-subjects", None)
    assert result.answer.startswith(
        "Verdict: Uncertain\n\nNone of the articles cited speaks of children: the statements "
        "that said so were left out."
    )
    assert not result.cache.admitted


async def test_a_sentence_that_only_points_at_a_cited_article_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model ended an answer with "This is supported by [PMID:19852337].", the
    # article its one finding had just cited: a citation of nothing.
    responder, replies = EvidenceResponder(lambda pmids: "Yes", point=True), []

    def answer(request: dict[str, Any]) -> str:
        replies.append(responder(request))
        return replies[-1]

    llm_server.responder = answer
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    assert "This is supported by [PMID:" in replies[0]  # what the model wrote
    assert "supported by" not in result.answer
    assert result.verdict == "yes" and result.citations and not result.warnings
    _check_cited(result)


async def test_an_abbreviation_the_cited_article_defines_is_spelled_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model wrote "a significant reduction in ... PVT [PMID:19852337]", an
    # abbreviation its reader never saw defined; the article defines it.
    llm_server.responder = EvidenceResponder(
        lambda pmids: "Yes", swap=("complex regional pain syndrome after", "CRPS after")
    )
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    assert (
        "reduced complex regional pain syndrome (CRPS) after wrist fractures [PMID:31000005]"
        in (result.answer)
    )
    assert result.answer.count("(CRPS)") == 1


async def test_a_sentence_carrying_a_term_of_an_article_it_does_not_cite_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model joined two studies into one sentence: "..., suggesting that cycloplegic
    # autorefraction is not necessary [PMID of a meropenem study]"; the eye test was another
    # article's. Here the sentence citing 31000005 borrows "dysgeusia", a MeSH term of 31000006.
    responder = EvidenceResponder(
        lambda pmids: "Yes", swap=("vitamin C reduced", "vitamin C reduced dysgeusia and")
    )
    llm_server.responder = responder
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    written = [r for r in llm_server.history if "Evidence:" in str(r.json)]
    assert "31000006" in str(written[0].json)  # the article the word comes from was given
    assert "reduced dysgeusia" not in result.answer and "31000005" not in result.answer
    assert "[PMID:31000006]" in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000005, but its 'dysgeusia' comes from "
        "PMID 31000006, which it does not cite"
    ]
    assert not result.cache.admitted


@pytest.mark.parametrize(
    "written",
    [
        # The local model answered a question with "Verdict: Yes" and nothing else; the page
        # showed "Verdict: Yes" over no statement and no citation (the verdict was then asked
        # of nothing).
        "Verdict: Yes",
        # It answered a question on CT slice thickness with "Verdict: No" over
        # "[PMID:18784527]" and nothing else; the page showed that bare citation as the answer.
        "Verdict: No\n\n[PMID:31000001]. See also [PMID:31000002].",
    ],
)
async def test_a_verdict_or_citations_written_alone_are_answered_by_the_evidence_digest(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer, written: str
) -> None:
    evidence = EvidenceResponder(lambda pmids: "Yes")

    def alone(request: dict[str, Any]) -> str:
        reply = evidence(request)
        return written if evidence.tasks[-1] == "answer" else reply

    llm_server.responder = alone
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    assert evidence.tasks == ["answer"]  # no verdict asked of an empty text
    assert result.mode == "evidence_digest"
    assert result.warnings == [ANSWER_EMPTY]
    assert result.citations and "[PMID:3100000" in result.answer
    body = result.answer.split("\n\n", 1)[-1]
    assert body and not body.startswith("Verdict:")
    assert re.search(r"[a-z]{4,} [a-z]{4,}", body)  # the digest's sentences, not a citation
    _check_cited(result)
    assert not result.cache.admitted


async def test_an_answer_left_without_its_best_article_off_the_question_is_the_digest(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model, asked whether mildly raised fasting glucose before bypass surgery is
    # linked to higher death rates, gave the best article (on glucose and CABG mortality) a
    # number it does not give, concluded uncited in words no article uses, and cited a gastric
    # bypass review for diabetes: that sentence alone was left, under "None of the retrieved
    # articles speaks of ... together". The digest answers from the evidence instead.
    written: list[str] = []

    def answer(prompt: str) -> str:
        headers = re.findall(r"^\[PMID:(\d+)\] ", prompt, flags=re.M)
        best, lesser = headers[0], "31000004" if "31000004" in headers[1:] else headers[-1]
        written.append(best)
        return (
            f"Aspirin cut stroke by 97.3% in adults [PMID:{best}]. Higher aspirin doses "
            f"increased gastrointestinal bleeding in adults [PMID:{lesser}]. Therefore, aspirin "
            "prevents stroke in farmers.\nVerdict: Yes"
        )

    llm_server.responder = _answering(answer)
    result = await _ask_once(
        settings, eutils, llm_server, "Does aspirin prevent stroke in farmers?"
    )
    assert result.mode == "evidence_digest"
    assert result.warnings[-1] == best_article_lost(written[0])[1]
    assert "97.3%" not in result.answer and "farmers" not in result.answer
    assert f"Evidence digest ({best_article_lost(written[0])[0]})" in result.answer
    assert f"[PMID:{written[0]}]" in result.answer
    _check_cited(result)
    assert not result.cache.admitted

    # The same when the model never cited the best article: its second answer on fasting
    # glucose was left with one sentence on sleeve gastrectomy.
    def off_question(prompt: str) -> str:
        headers = re.findall(r"^\[PMID:(\d+)\] ", prompt, flags=re.M)
        lesser = "31000004" if "31000004" in headers[1:] else headers[-1]
        return (
            f"Higher aspirin doses increased gastrointestinal bleeding in adults [PMID:{lesser}]. "
            "Therefore, aspirin prevents stroke in farmers.\nVerdict: Yes"
        )

    llm_server.responder = _answering(off_question)
    again = await _ask_once(settings, eutils, llm_server, "Does aspirin prevent stroke in farmers?")
    assert again.mode == "evidence_digest" and "farmers" not in again.answer
    assert again.warnings[-1] == best_article_lost(written[0])[1]


async def test_an_answer_that_only_repeats_the_evidence_headers_is_answered_by_the_digest(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model, asked how common fibromyalgia is in Sjögren's syndrome, answered with
    # two of its evidence headers ("[PMID:n] Title (2000, other)") and nothing else; the titles,
    # one on thigh muscles, read as the answer, both cited.
    def headers_alone(prompt: str) -> str:
        return " ".join(re.findall(r"^\[PMID:\d+\] .*$", prompt, flags=re.M)[:2])

    llm_server.responder = _answering(headers_alone)
    result = await _ask_once(settings, eutils, llm_server, CRPS)
    assert result.mode == "evidence_digest"
    assert result.warnings == [ANSWER_ECHOED]
    assert result.answer.startswith("Evidence digest (the model's answer held no statement)")
    assert result.citations and "[PMID:3100000" in result.answer
    assert not result.cache.admitted


async def test_an_answer_left_with_no_cited_statement_is_the_digest_when_the_evidence_fits(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model's answer on fasting glucose and CABG mortality lost every sentence (a
    # number the article does not give, a term from another article), and read "None of the
    # statements written for this question could be tied to the retrieved articles", over an
    # article that answers it.
    wrong = (
        "Vitamin C cut complex regional pain syndrome by 97.3% [PMID:31000005]. A dose of "
        "888 mg prevented it [PMID:31000006].\nVerdict: Yes"
    )
    result = await _ask_answered(settings, eutils, llm_server, wrong, CRPS)
    assert result.mode == "evidence_digest"
    assert result.warnings[-1] == ANSWER_UNSUPPORTED[1]
    assert "97.3%" not in result.answer and "888 mg" not in result.answer
    _check_cited(result)
    # Where no retrieved article names what was asked, nothing is shown as its answer.
    asked = "Does vitamin C prevent complex regional pain syndrome after scaphoid fractures?"
    unnamed = await _ask_answered(settings, eutils, llm_server, wrong, asked)
    assert unnamed.mode == "llm" and not unnamed.citations
    assert unnamed.answer.startswith(
        "Verdict: Uncertain\n\nNone of the retrieved articles mentions scaphoid."
    )


async def test_an_answer_left_citing_only_another_subject_after_a_contradiction_is_the_digest(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model's "... can predict kidney stone composition [the article concluding it
    # cannot]" went, and the answer was left with a CT scanner study's finding under Uncertain.
    def article(pmid: str, title: str, conclusion: str) -> bytes:
        section = AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion)
        return article_to_xml(Article(pmid=pmid, title=title, abstract=[section], year=2013))

    eutils.add_xml(
        b"<PubmedArticleSet>"
        + article(
            "31000081",
            "Can we predict urinary stone composition based on an analysis of microelement "
            "concentration in the hair and urine?",
            "The data obtained did not allow for the creation of a proper and practical "
            "algorithm to predict stone chemical composition based on hair and urine analysis.",
        )
        + article(
            "31000082",
            "Urinary stone composition on CT: the same on different scanner models?",
            "There was great variability when different brands and models of scanners were "
            "compared directly.",
        )
        + b"</PubmedArticleSet>"
    )
    question = "Can hair and urine trace element analysis predict kidney stone composition?"
    eutils.match = "any"  # the CT study shares only some of the question's words
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        (
            "Hair and urine trace element analysis can predict kidney stone composition "
            "[PMID:31000081]. A study [PMID:31000082] found great variability when different "
            "brands and models of scanners were compared directly.\nVerdict: Uncertain"
        ),
        question=question,
    )
    assert result.mode == "evidence_digest", result.answer
    assert "can predict" not in result.answer and "[PMID:31000081]" in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000081 for the answer 'yes', where the "
        "article concludes 'no'",
        best_article_lost("31000081")[1],
    ]


async def test_an_answer_whose_verdict_and_sentence_its_article_contradicts_is_the_digest(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model wrote "Verdict: No" and "... with head-down tilt is not dangerous [PMID]"
    # over an article concluding that the Trendelenburg position "causes profound ischemia".
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        "Aspirin does not prevent stroke [PMID:31000001].\nVerdict: No",
    )
    assert result.mode == "evidence_digest"
    assert "does not prevent" not in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000001 for the answer 'no', where the "
        "article concludes 'yes'",
        ANSWER_AGAINST_ARTICLES[1],
    ]
    _check_cited(result)
    # With a cited sentence left, that one stays, under Uncertain.
    kept = "Aspirin lowered stroke risk compared with placebo [PMID:31000002]."
    both = await _ask_answered(
        settings,
        eutils,
        llm_server,
        f"Aspirin does not prevent stroke [PMID:31000001]. {kept}\nVerdict: No",
    )
    assert both.mode == "llm" and both.verdict == "uncertain"
    assert _cause(both) == (
        "check",
        "against-conclusions",
        "Aspirin does not prevent stroke [PMID:31000001].",
    )
    assert kept in both.answer and "does not prevent" not in both.answer
    # What was left does not open with a connective tied to the sentence that went.
    tied = await _ask_answered(
        settings,
        eutils,
        llm_server,
        f"Aspirin does not prevent stroke [PMID:31000001]. Specifically, {kept[0].lower()}"
        f"{kept[1:]}\nVerdict: No",
    )
    assert tied.verdict == "uncertain" and "Specifically" not in tied.answer
    assert tied.answer == f"Verdict: Uncertain\n\n{kept}"
    # A paragraph of the model's own that opens "None of the" is no note of the check's: the
    # connective after it stays.
    own = (
        "None of the trials found harm from aspirin [PMID:31000001].\n\nHowever, aspirin "
        "lowered stroke risk compared with placebo [PMID:31000002]."
    )
    kept_whole = await _ask_answered(settings, eutils, llm_server, f"{own}\nVerdict: Yes")
    assert "However, aspirin lowered stroke risk" in kept_whole.answer


async def test_a_statement_its_verdict_and_its_article_contradict_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model opened "Yes, very high CA 19-9 levels are a contraindication ..." over an
    # article concluding they are not, and went on to say what the article found; the answer
    # read "Verdict: No" over the sentence saying the opposite, citing the article for it.
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        (
            "Aspirin does not prevent stroke in adults [PMID:31000001]. Aspirin "
            "lowered stroke risk compared with placebo [PMID:31000002].\nVerdict: Yes"
        ),
    )
    assert result.verdict == "yes"
    assert "does not prevent" not in result.answer
    assert "Aspirin lowered stroke risk compared with placebo [PMID:31000002]." in result.answer
    assert result.warnings == [
        "a sentence was left out: it cited PMID 31000001 for the answer 'no', where the "
        "article concludes 'yes'"
    ]


async def test_an_inference_no_cited_article_draws_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model reported a finding and read its own inference into it: "... was five,
    # indicating that participants were not reporting their sexual practices frequently
    # enough to generate a statistically significant result [PMID]".
    invented = "pharmacies were not stocking enough aspirin to change national prescribing"
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        (
            f"Aspirin lowered stroke risk compared with placebo, suggesting that {invented} "
            "[PMID:31000002]. Aspirin reduced the incidence of ischaemic stroke in adults "
            "[PMID:31000001].\nVerdict: Yes"
        ),
    )
    assert invented not in result.answer
    assert "Aspirin lowered stroke risk compared with placebo [PMID:31000002]." in result.answer
    assert result.warnings == [f'an inference no article it cites draws was left out: "{invented}"']
    assert result.verdict == "yes"


async def test_an_articles_title_said_back_as_the_answer_it_does_not_give_is_left_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model said PubMedQA 11340218's title back as its finding ("... pretreatment
    # with statins improves clinical outcome after stroke [PMID]", Verdict: Yes; gold no).
    title = "Does aspirin monotherapy prevent stroke recurrence after TIA?"
    eutils.add_xml(
        b"<PubmedArticleSet>"
        + article_to_xml(
            Article(
                pmid="31000077",
                title=title,
                abstract=[
                    AbstractSection(
                        label="CONCLUSIONS",
                        category="CONCLUSIONS",
                        text="Aspirin monotherapy did not prevent stroke recurrence after TIA.",
                    )
                ],
                year=2019,
            )
        )
        + b"</PubmedArticleSet>"
    )
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        (
            "Aspirin monotherapy prevents stroke recurrence after TIA [PMID:31000077]. Aspirin "
            "reduced the incidence of ischaemic stroke in adults [PMID:31000001].\nVerdict: Yes"
        ),
        question="Does aspirin prevent stroke recurrence after TIA?",
    )
    assert "monotherapy prevents" not in result.answer
    assert "[PMID:31000001]" in result.answer
    # (The fake server matches words as written: "recurrence" finds no "recurrent stroke", so
    # the search that found the articles had to leave the outcome out, and the answer says so.)
    assert result.warnings == [
        "No search found aspirin and stroke recurrence together: some articles were found "
        "searching aspirin without stroke recurrence.",
        "a sentence was left out: it cited PMID 31000077 for the answer 'yes' to the question "
        "its title asks, where it concludes 'no'",
    ]
    # The verdict the model gave that article's question, which it concludes against, is not
    # the answer, whatever the rest reads as (the local model's "No" to whether prostate shape
    # affects HoLEP outcomes stood, read again from a sentence on a non-significant difference).
    assert result.verdict == "uncertain"


async def test_a_publication_year_no_cited_article_has_is_taken_out(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model dated a 2014 case report "two studies published between 2011 and 2013".
    result = await _ask_answered(
        settings,
        eutils,
        llm_server,
        (
            "A meta-analysis published in 2011 found that aspirin reduced the incidence of "
            "ischaemic stroke in adults [PMID:31000001].\nVerdict: Yes"
        ),
    )
    assert (
        "A meta-analysis found that aspirin reduced the incidence of ischaemic stroke in adults "
        "[PMID:31000001]." in result.answer
    )
    assert result.warnings == [
        'a publication year was taken out: "published in 2011", where what it cites is of 2020'
    ]
    assert result.verdict == "yes"


async def test_asked_about_children_answered_from_studies_that_never_mention_them(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # "what about children?" after a meropenem question: the local model cited the adult
    # study's numbers and concluded "Yes". No sentence named children, so no citation was wrong.
    llm_server.responder = EvidenceResponder(lambda pmids: "Yes")
    result = await _ask_once(settings, eutils, llm_server, CRPS_CHILDREN)
    assert result.citations and not result.warnings
    assert result.verdict == "uncertain"
    assert _cause(result) == ("check", "populations-unspoken", None)
    assert result.answer.startswith(
        "Verdict: Uncertain\n\nNone of the articles cited speaks of children: what they found "
        "may not hold for children."
    )


async def test_asked_about_what_no_retrieved_article_mentions(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # "Do statins cause myopathy?" over statin studies of stroke: the answer quoted what they
    # found, and nothing said that none of them speaks of myopathy.
    llm_server.responder = EvidenceResponder(lambda pmids: "Yes")
    result = await _ask_once(settings, eutils, llm_server, "Does aspirin cause tinnitus?")
    assert result.citations
    assert result.verdict == "uncertain"
    assert _cause(result) == ("check", "unmentioned-terms", None)
    assert result.answer.startswith(
        "Verdict: Uncertain\n\nNone of the retrieved articles mentions tinnitus, so what "
        "follows may not answer the question."
    )


async def test_a_digest_says_which_subject_no_retrieved_article_mentions(
    settings: Settings, eutils: FakeEutils
) -> None:
    async with Assistant(_configure(settings, eutils, None)) as assistant:
        result = await assistant.ask("Does aspirin cause tinnitus?")
        on_topic = await assistant.ask(Q1)
    assert result.mode == "evidence_digest" and result.citations
    assert result.verdict == "uncertain"
    assert result.verdict_cause is not None
    assert (result.verdict_cause.kind, result.verdict_cause.rule) == ("policy", "off-question")
    assert result.verdict_cause.detail == "none of the retrieved articles is about tinnitus"
    assert on_topic.verdict != "uncertain" or on_topic.verdict_cause is not None
    assert "None of the retrieved articles is about tinnitus: the sentences below" in result.answer
    assert "None of the retrieved" not in on_topic.answer


async def test_a_digest_follow_up_says_no_article_speaks_of_the_new_population(
    settings: Settings, eutils: FakeEutils
) -> None:
    """In digest mode, "and in children?" after an adult question says first that no article
    quoted speaks of children, as the generated answer does; and each follow-up is one
    standalone question, not a chain of "Follow-up:" parts."""
    async with Assistant(_configure(settings, eutils, None)) as assistant:
        first = await assistant.ask(Q1, session_id="kids")
        follow = await assistant.ask("and in children?", session_id="kids")
        again = await assistant.ask("and in children?", session_id="kids")
        other = await assistant.ask("what about the dose?", session_id="kids")
    assert first.mode == follow.mode == "evidence_digest"
    assert "children" not in first.answer
    assert follow.standalone_question == f"{Q1} Follow-up: and in children?"
    assert follow.answer.splitlines()[2] == (
        "None of the articles quoted speaks of children: what they found may not hold for children."
    )
    assert follow.verdict == "uncertain" and follow.citations
    assert follow.verdict_cause is not None and follow.verdict_cause.kind == "policy"
    assert follow.verdict_cause.rule == "population-unspoken"
    assert again.standalone_question == follow.standalone_question
    assert again.cache.tier1 == "hit"  # the same standalone question: served from the cache
    assert again.verdict_cause == follow.verdict_cause  # stored with the answer
    assert other.standalone_question == f"{Q1} Follow-up: what about the dose?"
    assert other.standalone_question.count("Follow-up:") == 1


async def test_invented_citations_are_stripped(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    llm_server.responder = EvidenceResponder(lambda pmids: "Yes", invent=True)
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        result = await assistant.ask(Q1)
        assert "99999999" not in result.answer
        assert all(c.pmid != "99999999" for c in result.citations)
        assert not result.cache.admitted  # an answer that invented a source is not cached
        again = await assistant.ask(Q1)
    assert again.cache.tier1 == "miss"


async def test_without_llm_answers_with_evidence_digest(
    settings: Settings, eutils: FakeEutils, tmp_path: Path
) -> None:
    async with Assistant(_configure(settings, eutils, None)) as assistant:
        result = await assistant.ask(Q1)
        assert result.mode == "evidence_digest"
        assert result.api_calls.llm == 0
        _check_cited(result)
        assert result.verdict in {"yes", "no", "uncertain", None}
        again = await assistant.ask(Q1)
    if result.cache.admitted:
        assert again.cache.tier1 == "hit" and again.api_calls.pubmed == 0


async def test_no_cache_bypasses_both_tiers(assistant: Assistant) -> None:
    first = await assistant.ask(Q1)
    fresh = await assistant.ask(Q1, use_cache=False)
    assert fresh.cache.tier1 == "miss" and fresh.cache.miss_reason == "disabled"
    assert fresh.cache.evidence_reused == 0
    assert fresh.api_calls.pubmed >= first.api_calls.pubmed
    assert fresh.api_calls.llm == 1


async def test_source_down_with_nothing_cached_is_an_error_not_no_evidence(
    settings: Settings, eutils: FakeEutils
) -> None:
    from medlit.errors import SourceUnavailable
    from tests.fakes.eutils_server import Fault

    _configure(settings, eutils, None)
    settings.pubmed.max_retries = 1
    eutils.enqueue(Fault.status(500), endpoint="esearch", times=100)
    async with Assistant(settings) as a:
        with pytest.raises(SourceUnavailable, match="could not search the literature"):
            await a.ask(Q1)


async def test_source_down_serves_relevant_cached_evidence_with_a_warning_and_no_admission(
    settings: Settings, eutils: FakeEutils
) -> None:
    from tests.fakes.eutils_server import Fault

    _configure(settings, eutils, None)
    settings.pubmed.max_retries = 1
    async with Assistant(settings) as a:
        first = await a.ask(Q1, use_cache=True)
        assert not first.warnings
        eutils.enqueue(Fault.status(500), endpoint="esearch", times=100)
        settings.agent.score_threshold = 0.99  # cached evidence alone no longer stops the loop
        related = await a.ask("Does aspirin reduce the risk of ischaemic stroke in older adults?")
    assert related.cache.tier1 == "miss"
    assert related.warnings and "pubmed" in related.warnings[0]
    assert related.citations and related.cache.evidence_reused > 0
    assert not related.cache.admitted


async def test_unrelated_cached_chunks_are_never_evidence(
    settings: Settings, eutils: FakeEutils
) -> None:
    _configure(settings, eutils, None)
    async with Assistant(settings) as a:
        await a.ask(Q1)  # fills tier 2 with aspirin/stroke abstracts
        result = await a.ask("What is the prognosis of pancreatic adenocarcinoma after surgery?")
    aspirin = {a.pmid for a in corpus()[-4:]}
    assert not aspirin & {c.pmid for c in result.citations}, result.answer


async def test_progress_events_follow_the_graph(assistant: Assistant) -> None:
    from medlit.progress import ProgressEvent, progress_scope

    events: list[ProgressEvent] = []
    with progress_scope(events.append):
        await assistant.ask(Q1)
    stages = [e.stage for e in events if e.kind == "stage"]
    assert stages[:2] == ["plan_query", "query_cache"]
    assert "fetch_pubmed" in stages and "call_llm" in stages
    assert stages.index("fetch_pubmed") < stages.index("call_llm")
    assert all(e.message for e in events)
    # The search says what it sends, then what it got.
    searched = [e for e in events if e.stage == "fetch_pubmed"]
    query = searched[0].data["query"]
    assert searched[0].message == f"searching PubMed for “{query}”"
    assert re.fullmatch(r"\d+ articles? found, \d+ new", searched[1].message)
    assert searched[1].data["found"] > 0
    # Each decision says what it decided: first to search, last to answer from what it has.
    decided = [e.message for e in events if e.stage == "decision"]
    assert decided[0] == "no stored evidence answers it yet: searching"
    assert re.fullmatch(r".+: answering from \d+ articles?", decided[-1]), decided
    assert [e.t for e in events] == sorted(e.t for e in events)

    hit_events: list[ProgressEvent] = []
    with progress_scope(hit_events.append):
        again = await assistant.ask(Q1)
    assert again.cache.tier1 == "hit"
    assert [e.stage for e in hit_events] == ["plan_query", "query_cache", "update_memory"]
    outside = await assistant.ask(Q1)  # no scope: nothing is reported anywhere
    assert outside.cache.tier1 == "hit" and len(hit_events) == 3


async def test_verified_band_serves_a_rewording_below_tau_and_records_the_verifier(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    from tests.fakes.llm_server import Reply

    settings.cache.verify_band.threshold = 0.8  # calibrated for "fake-model", as a user sets it
    async with Assistant(_configure(settings, eutils, llm_server)) as assistant:
        first = await assistant.ask(Q1)
        assert first.cache.admitted and first.api_calls.llm == 1  # empty cache: no verification
        sent_pubmed = len(eutils.history)
        llm_server.enqueue(Reply.scored({"Yes": 0.93}), Reply.scored({"Yes": 0.9}))
        # Cosine 0.86 with Q1 (below tau 0.92), the guard passes it: the verifier decides.
        reworded = await assistant.ask("Do adults who take aspirin have fewer strokes?")
        assert reworded.cache.tier1 == "hit", reworded.cache
        assert reworded.cache.verified_by == "fake-model"
        assert reworded.cache.similarity is not None and reworded.cache.similarity < 0.92
        assert reworded.api_calls.llm == 2 and reworded.api_calls.pubmed == 0
        assert len(eutils.history) == sent_pubmed
        assert reworded.answer == first.answer
        assert '"verified_by":"fake-model"' in reworded.model_dump_json()

        llm_server.enqueue(Reply.scored({"No": 0.9, "Yes": 0.1}))
        refused = await assistant.ask("Is aspirin effective for preventing strokes in grown-ups?")
        assert refused.cache.tier1 == "miss" and refused.cache.miss_reason == "not_verified"
        assert refused.cache.verified_by is None and refused.api_calls.llm == 2  # 1 + answer

        exact = await assistant.ask(Q1)  # above tau nothing changes: no call at all
        assert exact.cache.tier1 == "hit" and exact.cache.verified_by is None
        assert exact.api_calls.llm == 0


async def test_an_accented_name_is_searched_as_one_word(
    settings: Settings, llm_server: FakeLLMServer
) -> None:
    # "Sjögren's" was searched as "sj AND gren's", which PubMed finds in no article.
    sjogren = [
        _article(
            50 + n,
            f"Fatigue in primary Sjögren's syndrome and fibromyalgia: cohort {n}",
            "Fatigue in primary Sjögren's syndrome was not explained by coexisting fibromyalgia.",
            "Observational Study",
            2000 + n,
        )
        for n in (1, 2)
    ]
    with FakeEutils(
        articles=[*corpus(), *sjogren], rate_limit=None, rate_limit_with_key=None
    ) as eutils:
        question = "Is fatigue in primary Sjögren's syndrome explained by fibromyalgia?"
        result = await _ask_once(settings, eutils, llm_server, question)
        first = eutils.requests("esearch")[0].params["term"]

    assert "sjogren's" in first and " sj " not in f" {first} "
    assert {c.pmid for c in result.citations} <= {a.pmid for a in sjogren}
    assert result.citations and result.api_calls.pubmed == 2  # found by the first search


async def test_a_verdict_line_against_every_answer_the_text_states_is_read_again(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    # The local model wrote "Verdict: Yes" under its own "a scout film is not necessary before
    # a voiding cystourethrogram in children [PMID]" (gold no), and the Yes stood.
    written = "Aspirin reduced the incidence of ischaemic stroke in adults [PMID:31000001].\n"
    result = await _ask_answered(settings, eutils, llm_server, written + "Verdict: No", Q1)
    asked = [
        r for r in llm_server.history if "What does the written answer conclude" in str(r.json)
    ]
    assert asked  # the verdict call (scored, then as JSON without logprobs), on the text
    assert result.verdict == "yes" and result.answer.startswith("Verdict: Yes\n")
    # A verdict line that agrees with the text is not asked again.
    llm_server.history.clear()
    agreed = await _ask_answered(settings, eutils, llm_server, written + "Verdict: Yes", Q1)
    assert agreed.verdict == "yes"
    assert not [r for r in llm_server.history if "What does the written answer" in str(r.json)]


INVENTED_INFERENCE = "pharmacies were not stocking enough aspirin to change national prescribing"
INFERRED = (
    f"Aspirin lowered stroke risk compared with placebo, suggesting that {INVENTED_INFERENCE} "
    "[PMID:31000002]. Aspirin reduced the incidence of ischaemic stroke in adults "
    "[PMID:31000001].\nVerdict: Yes"
)


async def test_each_warning_comes_with_the_finding_of_the_check_that_spoke(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    result = await _ask_answered(settings, eutils, llm_server, INFERRED)
    warning = f'an inference no article it cites draws was left out: "{INVENTED_INFERENCE}"'
    assert result.warnings == [warning]
    told = [f for f in result.findings if f.message]
    assert [(f.check, f.message) for f in told] == [("unsupported-inferences", warning)]
    assert told[0].action == "rewrite" and INVENTED_INFERENCE in (told[0].sentence or "")
    records = result.model_dump(mode="json")["findings"]
    assert {"check", "action", "message", "pmids", "sentence"} <= set(records[0])


async def test_checks_turned_off_by_id_leave_the_answer_as_written(
    settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    settings.checks.disabled = ["unsupported-inferences"]
    result = await _ask_answered(settings, eutils, llm_server, INFERRED)
    assert "unsupported-inferences" not in {f.check for f in result.findings}
    # the sentence then states an answer its article contradicts: the next check takes it
    assert [f.check for f in result.findings if f.message] == ["contradicted"]
    settings.checks.disabled = ["unsupported-inferences", "contradicted"]
    result = await _ask_answered(settings, eutils, llm_server, INFERRED)
    assert INVENTED_INFERENCE in result.answer and not result.warnings


async def test_the_answer_checks_are_given_the_asks_embedder(
    assistant: Assistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A verdict withheld for the question's words alone is earned back by a cited title that
    # asks the question (tests/unit/checks/test_title_match.py): only with the embedder.
    import medlit.checks
    from medlit.checks.answer import check_answer
    from medlit.embeddings.base import Embedder

    given: list[object] = []

    async def recording(*args: Any, **kwargs: Any) -> Any:
        given.append(kwargs.get("embedder"))
        return await check_answer(*args, **kwargs)

    monkeypatch.setattr(medlit.checks, "check_answer", recording)
    result = await assistant.ask(Q1, use_cache=False)
    assert result.verdict == "yes"
    assert given and all(isinstance(e, Embedder) for e in given)
