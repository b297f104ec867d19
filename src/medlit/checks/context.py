"""What a check reads: the draft as it stands, the question, the evidence, and what the checks
before it left for the ones after."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from medlit.checks.citations import Verdict, extract_pmids, remove_citations, remove_cited_for
from medlit.checks.draft import Draft
from medlit.checks.findings import Finding
from medlit.embeddings.base import Embedder
from medlit.log import get_logger
from medlit.types import Article
from medlit.words.evidence import EvidenceView, article_view
from medlit.words.frame import QuestionFrame

__all__ = [
    "CheckContext",
    "WrongIn",
    "cited_findings",
    "edit_action",
    "logged",
    "sentence_findings",
]

#: What a check finds wrong with a sentence's citations: (PMID, what it was cited for) pairs.
WrongIn = Callable[[str], Sequence[tuple[str, str]]]


@dataclass
class CheckContext:
    """The state one answer's checks share (one per answer; the checks run in order)."""

    question: str
    articles: Mapping[str, Article]
    draft: Draft
    verdict: Verdict | None = None
    #: What the question asks (its subject, outcome, populations), read once per question
    #: and carried here; None where a caller has none (a check that needs it then finds
    #: nothing).
    frame: QuestionFrame | None = None
    #: The shipped embedder, where the caller has one: a concept of the frame an article names
    #: in other words (:func:`medlit.checks.answering.names_near`); None: named as asked only.
    embedder: Embedder | None = None
    #: What a check left for later ones and the policy (its reading of the answer), by id.
    data: dict[str, Any] = field(default_factory=dict)
    _views: dict[str, EvidenceView] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for pmid in self.articles:  # each article's view: made once per article, not answer
            self.view(pmid)

    def view(self, pmid: str) -> EvidenceView:
        """The evidence view of an article (:func:`~medlit.words.evidence.article_view`)."""
        if pmid not in self._views:
            self._views[pmid] = article_view(self.articles[pmid])
        return self._views[pmid]


def cited_findings(check: str, ctx: CheckContext, wrong_in: WrongIn) -> list[Finding]:
    """The findings of a check that holds each sentence's citations to their articles.

    Each (PMID, why) pair ``wrong_in`` gives for a sentence is a citation to take out: the
    sentence's finding is an ``uncite`` of those PMIDs, or a ``drop`` when it would then cite
    nothing; one finding for each pair, saying "a citation was removed: it cited PMID n for
    <why>" ("a sentence was left out: ..." for a drop).
    """
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        wrong = wrong_in(sentence.text)
        if not wrong:
            continue
        kept, told = remove_cited_for(sentence.text, wrong)
        if kept == sentence.text:  # no citation of it could be taken out: only say so
            findings += [Finding(check, "warn", message) for message in told]
            continue
        action, pmids = edit_action(sentence.text, kept)
        replacement = kept if action == "rewrite" else None
        findings += [
            Finding(check, action, m, pmids, sentence.index, sentence.text, replacement)  # type: ignore[arg-type]
            for m in told
        ]
    return findings


def sentence_findings(
    check: str, ctx: CheckContext, rewrite: Callable[[str], str], told: list[str]
) -> list[Finding]:
    """The findings of a check that reads the answer one sentence at a time.

    ``rewrite`` gives what a sentence should read (``""``: left out) and adds what the reader
    is told of it to ``told``; the check's finding for the sentence is a ``drop``, ``uncite``,
    ``cite`` or ``rewrite`` (with the sentence it proposes), one for each message. A message
    of a sentence left as it was is a ``warn``.
    """
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        before = len(told)
        new = rewrite(sentence.text)
        messages = told[before:]
        if new == sentence.text:
            findings += [Finding(check, "warn", message) for message in messages]
            continue
        action, pmids = edit_action(sentence.text, new)
        replacement = new if action in ("cite", "rewrite") else None
        findings += [
            Finding(check, action, m, pmids, sentence.index, sentence.text, replacement)  # type: ignore[arg-type]
            for m in messages or [""]
        ]
    return findings


def edit_action(before: str, after: str) -> tuple[str, tuple[str, ...]]:
    """What turned sentence ``before`` into ``after``, and the PMIDs it concerns: ``drop``,
    ``uncite`` (citations taken out), ``cite`` (citations added) or ``rewrite``."""
    had, has = extract_pmids(before), extract_pmids(after)
    if not after:
        return "drop", tuple(had)
    lost = tuple(p for p in had if p not in has)
    gained = tuple(p for p in has if p not in had)
    if lost and not gained and remove_citations(before, lost) == after:
        return "uncite", lost
    if gained and not lost:
        return "cite", gained
    return "rewrite", lost + gained


def logged(findings: list[Finding], event: str) -> list[Finding]:
    """``findings``, logged as ``event`` (with how many) when there are any."""
    if findings:
        get_logger("agent").warning(event, removals=len(findings))
    return findings
