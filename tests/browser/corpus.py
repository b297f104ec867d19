"""What the fakes serve to the browser tests: articles (some carrying HTML) and a model.

* Stroke and aspirin studies for the ask flow, plus the research corpus of
  :mod:`tests.fakes.research_responder` for the quick research job.
* Two warfarin/vitamin K articles whose title and conclusion carry ``<img onerror>`` and
  ``<script>``: the careful fake model quotes the conclusion in its answer, so the page receives
  that markup both in an abstract-derived citation and in the model's answer text.
"""

from __future__ import annotations

from typing import Any

from medlit.types import AbstractSection, Article
from tests.fakes.evidence_llm import EvidenceResponder
from tests.fakes.fixtures import sample_articles
from tests.fakes.llm_server import Reply
from tests.fakes.research_responder import ARTICLES, ResearchResponder

__all__ = [
    "ASK_QUESTION",
    "RESEARCH_QUESTION",
    "XSS_MARKUP",
    "XSS_QUESTION",
    "BrowserResponder",
    "browser_corpus",
]

ASK_QUESTION = "Does aspirin prevent stroke in adults?"
XSS_QUESTION = "Does vitamin K reverse warfarin anticoagulation in adults?"
RESEARCH_QUESTION = "Does aspirin prevent recurrent ischaemic stroke, and at what bleeding cost?"
# Markup that would set window.__xss if the page ever parsed it as HTML.
XSS_MARKUP = {
    "title": "<img src=x onerror=\"window.__xss='title'\">",
    "script": "<script>window.__xss='script'</script>",
    "answer": "<img src=x onerror=\"window.__xss='answer'\">",
}


def _article(
    pmid: str, title: str, methods: str, conclusion: str, pub_type: str, year: int
) -> Article:
    return Article(
        pmid=pmid,
        title=title,
        abstract=[
            AbstractSection(label="METHODS", category="METHODS", text=methods),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
        journal="Journal of Test Evidence",
        year=year,
        publication_types=["Journal Article", pub_type],
        language="eng",
    )


def browser_corpus() -> list[Article]:
    """Every article the fake E-utilities and Europe PMC serve to the browser tests."""
    stroke = [
        _article("31000001", "Low-dose aspirin and stroke prevention in adults",
                 "We studied low-dose aspirin and stroke in a cohort of adults.",
                 "Aspirin reduced the incidence of ischaemic stroke in adults.",
                 "Meta-Analysis", 2020),
        _article("31000002", "Aspirin for primary prevention of stroke: a randomised trial",
                 "We randomised adults to aspirin or placebo and followed stroke.",
                 "Aspirin lowered stroke risk compared with placebo in adults.",
                 "Randomized Controlled Trial", 2018),
        _article("31000003", "Aspirin use and stroke outcomes in older adults",
                 "We studied aspirin use and stroke in a cohort of older adults.",
                 "Regular aspirin use was associated with fewer strokes in adults.",
                 "Observational Study", 2016),
    ]  # fmt: skip
    hostile = [
        _article("32000001", f"Vitamin K for warfarin reversal in adults {XSS_MARKUP['title']}",
                 "We gave vitamin K to adults anticoagulated with warfarin.",
                 "Vitamin K reversed warfarin anticoagulation in adults "
                 f"{XSS_MARKUP['script']}{XSS_MARKUP['answer']} within a day.",
                 "Randomized Controlled Trial", 2021),
        _article("32000002", "Oral vitamin K and warfarin anticoagulation in adults",
                 "A cohort of adults on warfarin received oral vitamin K.",
                 "Oral vitamin K lowered the INR of adults on warfarin.",
                 "Cohort Studies", 2019),
    ]  # fmt: skip
    return sample_articles() + stroke + hostile + list(ARTICLES)


RESEARCH_STEP_S = 0.4
"""How long the fake model takes over each research step."""


class BrowserResponder:
    """The fake model: research prompts go to :class:`ResearchResponder`, the rest (the ask
    tasks) to :class:`EvidenceResponder`, which answers "Yes" and quotes the evidence."""

    def __init__(self) -> None:
        self.ask = EvidenceResponder(lambda pmids: "Yes")
        self.research = ResearchResponder()

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        messages = request.get("messages", [])
        system = str(messages[0]["content"]) if messages else ""
        if system.startswith("medlit research:"):
            reply = self.research(request)
            # A research step takes a moment, as a model's does: a quick job otherwise ended
            # before a loaded machine's browser drew its live view, which a test watches.
            return Reply.slow(RESEARCH_STEP_S, reply) if isinstance(reply, str) else reply
        return self.ask(request)
