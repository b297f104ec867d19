"""The synthesizer: verified facts become a referenced report (seed 002, generate_report).

Facts are categorised by topic (the plan-level sub-question they answer). The reference list
is built here, before any text is written, from the sources of the facts and discrepancies,
keeping only articles the job actually retrieved; the LLM sees it numbered and may cite only
``[n]``. Whatever it writes is then cleaned: reference numbers outside the list, and PMIDs or
DOIs of articles not retrieved, are removed. Sections shorter than ``min_section_words`` are
expanded a bounded number of times, then kept and flagged ``short``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import cached_property

from medlit.checks import ground_text, refuse_unknown, third_person, unauthored
from medlit.config import ResearchSettings
from medlit.errors import LLMOutputError, LLMTimeout, TimeBudgetSpent
from medlit.log import get_logger
from medlit.research.grounding import fact_support, ground_summary, same_finding, section_fallback
from medlit.research.models import (
    Discrepancy,
    NarrativeReport,
    Reference,
    ReportSection,
    ResearchPlan,
    SubQuestionStatus,
    VerifiedFact,
)
from medlit.research.planner import on_topic
from medlit.research.prompts import (
    EXPAND_SYSTEM,
    SECTION_SYSTEM,
    SUMMARY_SYSTEM,
    ResearchLLM,
    SectionReply,
    SummaryReply,
    Task,
    asked_lines,
    messages,
)
from medlit.text import counted
from medlit.types import Article, Citation, StudyType
from medlit.words.defined_terms import spell_out
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import cited_numbers, word_stems
from medlit.words.search_plan import asked_terms, speaks_of_subject

__all__ = [
    "UNWRITTEN_ERRORS",
    "build_references",
    "clean_citations",
    "count_words",
    "generate_report",
    "stopped_early",
]

#: A reply the model could not give for one part of the report (malformed after its repair, or
#: too late): that part falls back to its verified facts; the job goes on.
UNWRITTEN_ERRORS: tuple[type[Exception], ...] = (LLMOutputError, LLMTimeout)

log = get_logger("research.synthesizer")

_BRACKETS = re.compile(r"\s?\[(\d+(?:\s*[-–,;]\s*\d+)*)\]")
_PMID = re.compile(r"\(?\bPMID:?\s*(\d{1,9})\)?", re.I)
_DOI = re.compile(r"\b(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/[^\s\])>,;]+)", re.I)


def count_words(text: str) -> int:
    """Words of prose (citation brackets do not count)."""
    return len(re.findall(r"[A-Za-z0-9][\w'’-]*", _BRACKETS.sub(" ", text)))


def citation_key(source: Citation) -> str:
    """The ``Article.key`` a citation refers to."""
    return Article(pmid=source.pmid, doi=source.doi, title=source.title).key


def reference_numbers(sources: list[Citation], numbers: dict[str, int]) -> list[int]:
    """The report's reference numbers of ``sources`` (those it holds), ascending."""
    return sorted({numbers[k] for s in sources if (k := citation_key(s)) in numbers})


def build_references(
    facts: list[VerifiedFact], discrepancies: list[Discrepancy], articles: dict[str, Article]
) -> list[Reference]:
    """The numbered reference list: sources of facts and discrepancies that were retrieved."""
    order: list[str] = []
    sources = [s for f in facts for s in f.sources]
    sources += [s for d in discrepancies for c in d.claims for s in c.sources]
    for source in sources:
        key = citation_key(source)
        if key in articles and key not in order:
            order.append(key)
        elif key not in articles:
            log.warning("reference_not_retrieved", key=key)
    return [
        Reference(
            number=n,
            article_key=key,
            pmid=articles[key].pmid,
            doi=articles[key].doi,
            title=articles[key].title,
            journal=articles[key].journal,
            year=articles[key].year,
            study_type=articles[key].study_type.label,
            url=articles[key].url,
        )
        for n, key in enumerate(order, start=1)
    ]


def _expand_numbers(spec: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", spec):
        if m := re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part):
            low, high = int(m.group(1)), int(m.group(2))
            numbers.extend(range(low, high + 1) if 0 < high - low < 50 else [low, high])
        elif part.isdigit():
            numbers.append(int(part))
    return numbers


def clean_citations(text: str, references: list[Reference]) -> tuple[str, list[int]]:
    """Remove citations of anything not in ``references``; returns (text, numbers cited)."""
    allowed = {r.number for r in references}
    pmids = {r.pmid for r in references if r.pmid}
    dois = {r.doi.lower() for r in references if r.doi}
    cited: list[int] = []
    removed: list[str] = []

    def brackets(match: re.Match[str]) -> str:
        numbers = _expand_numbers(match.group(1))
        kept = [n for n in dict.fromkeys(numbers) if n in allowed]
        removed.extend(str(n) for n in numbers if n not in allowed)
        cited.extend(kept)
        return f" [{', '.join(str(n) for n in kept)}]" if kept else ""

    def pmid(match: re.Match[str]) -> str:
        if match.group(1) in pmids:
            return match.group(0)
        removed.append(f"PMID {match.group(1)}")
        return ""

    def doi(match: re.Match[str]) -> str:
        if match.group(1).lower().rstrip(".") in dois:
            return match.group(0)
        removed.append(f"doi {match.group(1)}")
        return ""

    text = _BRACKETS.sub(brackets, text)
    text = _PMID.sub(pmid, text)
    text = _DOI.sub(doi, text)
    if removed:
        log.warning("citations_removed", citations=removed[:20])
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([.,;:])", r"\1", text)
    return text.strip(), list(dict.fromkeys(cited))


def _fact_lines(facts: list[VerifiedFact], numbers: dict[str, int]) -> str:
    lines = []
    for fact in facts:
        cite = "".join(f"[{n}]" for n in reference_numbers(fact.sources, numbers))
        extra = f" (numbers: {', '.join(fact.numbers)})" if fact.numbers else ""
        lines.append(f"- ({fact.confidence} confidence) {fact.statement}{extra} {cite}")
    return "\n".join(lines)


def _conflict_lines(discrepancies: list[Discrepancy], numbers: dict[str, int]) -> str:
    lines = []
    for discrepancy in discrepancies:
        lines.append(f"- (conflict) {discrepancy.topic}:")
        for claim in discrepancy.claims:
            refs = "".join(f"[{n}]" for n in reference_numbers(claim.sources, numbers))
            lines.append(f"  - (one side) {claim.claim} {refs}")
    return "\n".join(lines)


def _reference_lines(references: list[Reference]) -> str:
    return "\n".join(
        f"[{r.number}] {r.title} ({r.study_type}{', ' + str(r.year) if r.year else ''})"
        for r in references
    )


def evidence_quality(
    facts: list[VerifiedFact],
    numbers: dict[str, int],
    articles: dict[str, Article],
    discrepancies: list[Discrepancy] = (),  # type: ignore[assignment]
) -> str:
    """One sentence on what a section rests on: study types, confidence, conflicts."""
    sources = [s for f in facts for s in f.sources]
    sources += [s for d in discrepancies for c in d.claims for s in c.sources]
    keys = {k for s in sources if (k := citation_key(s)) in numbers}
    types = Counter(articles[k].study_type for k in keys)
    design = ", ".join(
        f"{count} {study.label}" for study, count in sorted(types.items(), key=lambda i: -i[0])
    )
    confidence = Counter(f.confidence for f in facts)
    levels = ", ".join(f"{confidence[c]} {c}" for c in ("high", "medium", "low") if confidence[c])
    note = f"Based on {counted(len(keys), 'article')} ({design})"
    note += f"; findings by confidence: {levels}" if levels else ""
    note += f"; {counted(len(discrepancies), 'conflict')} between sources" if discrepancies else ""
    note += "."
    if types and max(types) < StudyType.RCT:
        note += " No randomised trial or systematic review among them."
    return note


async def _write_section(
    topic: str,
    asked: str,
    facts: list[VerifiedFact],
    conflicts: list[Discrepancy],
    references: list[Reference],
    numbers: dict[str, int],
    llm: ResearchLLM,
    settings: ResearchSettings,
    grounded_words: Callable[[str], int],
) -> ReportSection:
    """Draft a section, expanding it while it is short and the expansions add sentences that
    rest on its facts (``grounded_words``): padding the facts do not back would be left out,
    so asking for more of it is an LLM call wasted. ``asked``: what the question asks about
    (:func:`~medlit.research.prompts.asked_lines`), told under the topic."""
    minimum = settings.min_section_words
    user = f"Topic: {topic}\n{asked}\n\n" if asked else f"Topic: {topic}\n\n"
    user += f"Verified facts:\n{_fact_lines(facts, numbers) or '(none)'}\n\n"
    if conflicts:
        user += f"Conflicting findings:\n{_conflict_lines(conflicts, numbers)}\n\n"
    user += f"References:\n{_reference_lines(references)}"
    system = SECTION_SYSTEM.format(min_words=minimum)
    reply = await llm.complete_json(Task.SYNTHESIZE, messages(system, user), SectionReply)
    heading, content = reply.heading.strip() or topic, reply.content
    words, grounded = count_words(content), grounded_words(content)
    tries = 0
    while words < minimum and tries < settings.expand_tries:
        tries += 1
        system = EXPAND_SYSTEM.format(words=words, min_words=minimum)
        try:
            expanded = await llm.complete_json(
                Task.SYNTHESIZE,
                messages(system, f"{user}\n\nSection to expand:\n{content}"),
                SectionReply,
            )
        except UNWRITTEN_ERRORS as exc:  # the draft stands
            log.warning("section_expansion_failed", topic=topic, error=str(exc)[:200])
            break
        # Keep the longer draft: an "expansion" that shrank the text is not progress.
        if count_words(expanded.content) > words:
            content, words = expanded.content, count_words(expanded.content)
            more = grounded_words(content)
            if more <= grounded:
                # A small model pads a one-fact section with textbook prose: stop asking.
                log.info("section_expansion_ungrounded", topic=topic, tries=tries)
                break
            grounded = more
    content, cited = clean_citations(content, references)
    words = count_words(content)
    if words < minimum:
        log.warning("section_short", topic=topic, words=words, minimum=minimum, tries=tries)
    return ReportSection(
        heading=heading,
        content=content,
        word_count=words,
        short=words < minimum,
        references=cited,
    )


#: The note a reader sees on a section the model could not write (the why is in Limitations).
UNWRITTEN_SECTION = (
    "This section lists the verified findings one by one: it could not be written as prose "
    "(see the details under Limitations)."
)


def unwritten_note(part: str, error: Exception) -> str:
    """The report's note on a part the model could not write."""
    if isinstance(error, TimeBudgetSpent):
        why = "the job's time budget ran out"
    else:
        why = f"it {'timed out' if isinstance(error, LLMTimeout) else 'gave no valid reply'}"
        why += ", after a repair"
    return f"The model could not write {part} ({why}): it lists the verified facts instead."


def stopped_early(reason: str) -> str:
    """The report's note on a job its budget stopped (``reason``: the job's stop reason)."""
    return f"Research stopped early: {reason}."


def _fallback_section(
    topic: str,
    facts: list[VerifiedFact],
    conflicts: list[Discrepancy],
    references: list[Reference],
    numbers: dict[str, int],
    settings: ResearchSettings,
    note: str,
) -> ReportSection:
    """The section of a topic the model could not write: its verified facts and the sides of
    its conflicts, cited."""
    text = section_fallback(facts, numbers) if facts else ""
    for conflict in conflicts:
        sides = [
            f"{claim.claim.rstrip('. ')} {cite}"
            for claim in conflict.claims
            if (cite := "".join(f"[{n}]" for n in reference_numbers(claim.sources, numbers)))
        ]
        if len(sides) >= 2:
            text += f" The sources disagree on {conflict.topic.rstrip('. ')}: " + "; ".join(sides)
            text += "."
    content, cited = clean_citations(text.strip() or section_fallback(facts, numbers), references)
    words = count_words(content)
    return ReportSection(
        heading=topic.rstrip("?"),
        content=content,
        word_count=words,
        short=words < settings.min_section_words,
        references=cited,
        unwritten=note,
    )


# What the report is not: a model titled a 6-article report "... : A Systematic Review", and
# one a report on one review "...: A Comparative Study".
_STUDY_DESIGN = re.compile(
    r"\b(?:systematic|scoping|umbrella|narrative|literature)\s+review|\bmeta-?\s?analys[ie]s"
    r"|\brandomi[sz]ed\s+(?:controlled\s+)?trial"
    r"|\b(?:comparative|cohort|case-control|cross-sectional|observational)\s+study",
    re.I,
)


# Words a title frames its subject with ("Comparison of ...", "The Role of ...").
_TITLE_FRAMING = word_stems(
    "comparison versus vs effect role impact evidence overview use outcome evaluation "
    "assessment analysis efficacy effectiveness research report literature current review "
    "after before during over under"
)


def report_title(drafted: str, question: str, *, answered: bool = True) -> str:
    """The drafted title without a claim of a study design the report is not ("...: A
    Systematic Review" loses its subtitle); the question's own when nothing else is left, or
    when the evidence did not answer the question and the title names what the question did
    not (a model may title the report after the one fact it has, a topic the report does not
    cover). A title in the question's words stays."""
    title = " ".join(drafted.split())
    if _STUDY_DESIGN.search(title):
        parts = [p for p in re.split(r"\s*(?::|\s[-\u2013\u2014]\s)\s*", title) if p]
        title = ": ".join(p for p in parts if not _STUDY_DESIGN.search(p))
    if not answered and word_stems(title) - word_stems(question) - _TITLE_FRAMING:
        title = ""
    return title.strip(" :") or f"Research report: {question}"


def _fold_repeated_topics(
    topics: dict[str, list[VerifiedFact]], conflicts: dict[str, list[Discrepancy]]
) -> tuple[dict[str, list[VerifiedFact]], dict[str, list[str]]]:
    """The topics to write a section for, and the topics folded into each.

    A topic (without conflicts) whose every fact is one an earlier topic already has
    (:func:`~medlit.research.grounding.same_finding`) would be a section repeating an earlier
    one: it joins that section (its ``sub_question_ids``) instead of costing a call of its own.
    """
    kept: dict[str, list[VerifiedFact]] = {}
    folded: dict[str, list[str]] = {}
    for topic_id, topic_facts in topics.items():
        home = None
        if topic_facts and not conflicts.get(topic_id):
            home = next(
                (
                    kept_id
                    for kept_id, kept_facts in kept.items()
                    if all(any(same_finding(f, g) for g in kept_facts) for f in topic_facts)
                ),
                None,
            )
        if home is None:
            kept[topic_id] = topic_facts
        else:
            folded.setdefault(home, []).append(topic_id)
            log.info("section_folded", topic=topic_id, into=home)
    return kept, folded


@dataclass
class _Drafting:
    """What every step of writing one report reads, and the limitations they add."""

    frame: QuestionFrame
    facts: list[VerifiedFact]
    discrepancies: list[Discrepancy]
    articles: dict[str, Article]
    llm: ResearchLLM
    settings: ResearchSettings
    references: list[Reference]
    numbers: dict[str, int]
    support: dict[int, set[str]]
    limitations: list[str] = field(default_factory=list)
    disabled: Collection[str] = ()  # ids of checks not to run

    @property
    def question(self) -> str:
        return self.frame.question

    @cached_property
    def asked(self) -> str:
        """What the question asks about, for the prompts (:func:`asked_lines`): read once."""
        return asked_lines(self.frame)


def _topics_of(
    facts: list[VerifiedFact], discrepancies: list[Discrepancy], plan: ResearchPlan | None
) -> tuple[dict[str, list[VerifiedFact]], dict[str, list[Discrepancy]]]:
    """The facts and the conflicts by topic (the sub-question they answer), in plan order; a
    topic of conflicts only has no facts."""
    topics: dict[str, list[VerifiedFact]] = {}
    for fact in facts:
        topics.setdefault(fact.sub_question_id, []).append(fact)
    conflicts: dict[str, list[Discrepancy]] = {}
    for discrepancy in discrepancies:
        conflicts.setdefault(discrepancy.sub_question_id, []).append(discrepancy)
        topics.setdefault(discrepancy.sub_question_id, [])  # a topic of conflicts only
    if plan is not None:
        order = {q.id: i for i, q in enumerate(plan.sub_questions)}
        topics = dict(sorted(topics.items(), key=lambda item: order.get(item[0], len(order))))
    return topics, conflicts


def _research_limitations(plan: ResearchPlan | None, budget_stop_reason: str | None) -> list[str]:
    """What the report says of the research itself: an early stop, the plan's note, and the
    sub-questions not researched (a topic already visited is not one)."""
    limitations: list[str] = []
    if budget_stop_reason:
        limitations.append(stopped_early(budget_stop_reason))
    if plan is not None:
        if plan.note:
            limitations.append(plan.note)
        for sub in plan.sub_questions:
            if sub.status is SubQuestionStatus.SKIPPED and not (sub.skip_reason or "").startswith(
                "topic already visited"
            ):
                limitations.append(f"Not researched: {sub.text} ({sub.skip_reason}).")
    return limitations


async def _write_summary(d: _Drafting) -> tuple[str, str, bool]:
    """(title, executive summary, whether its facts answer the question): the model's,
    cleaned and held to the facts; the verified facts when the model could not write it."""
    summary_user = (
        f"Research question: {d.question}\n"
        + (f"{d.asked}\n" if d.asked else "")
        + f"\nVerified facts:\n{_fact_lines(d.facts, d.numbers)}\n\n"
        f"Conflicting findings:\n{_conflict_lines(d.discrepancies, d.numbers) or '(none)'}\n\n"
        f"References:\n{_reference_lines(d.references)}"
    )
    try:
        summary = await d.llm.complete_json(
            Task.SYNTHESIZE, messages(SUMMARY_SYSTEM, summary_user), SummaryReply
        )
    except UNWRITTEN_ERRORS as exc:
        log.warning("summary_unwritten", error=str(exc)[:200])
        d.limitations.append(unwritten_note("the executive summary", exc))
        summary = SummaryReply(
            title="",
            executive_summary=section_fallback(d.facts, d.numbers).replace(
                "The verified findings on this topic:", "The verified findings:", 1
            ),
        )
    executive_summary, _ = clean_citations(summary.executive_summary, d.references)
    grounded = ground_summary(executive_summary, d.frame, d.facts, d.numbers, d.support, d.disabled)
    executive_summary = _plain(grounded.text, d.references, d.articles)
    title = report_title(summary.title, d.question, answered=grounded.answered)
    if grounded.removed:
        log.warning("summary_sentences_removed", sentences=[s[:120] for s in grounded.removed])
        d.limitations.append(
            f"{_were_left_out(len(grounded.removed), 'of the drafted summary')}: "
            f"{_they(len(grounded.removed))} cited no verified fact, or said more than the "
            "facts cited."
        )
    return title, executive_summary, grounded.answered


async def _topic_section(
    d: _Drafting, topic: str, topic_facts: list[VerifiedFact], topic_conflicts: list[Discrepancy]
) -> tuple[ReportSection, int]:
    """One topic's section, held to its facts, and how many drafted sentences were left out;
    its verified facts when the model could not write it."""
    try:
        section = await _write_section(
            topic,
            d.asked,
            topic_facts,
            topic_conflicts,
            d.references,
            d.numbers,
            d.llm,
            d.settings,
            lambda text: count_words(ground_text(text, d.frame, d.support, d.disabled).text),
        )
    except UNWRITTEN_ERRORS as exc:
        # One bad reply costs this section its prose, not the job: its verified facts.
        log.warning("section_unwritten", topic=topic, error=str(exc)[:200])
        d.limitations.append(unwritten_note(f"the section on {topic!r}", exc))
        section = _fallback_section(
            topic,
            topic_facts,
            topic_conflicts,
            d.references,
            d.numbers,
            d.settings,
            UNWRITTEN_SECTION,
        )
    grounded = ground_text(section.content, d.frame, d.support, d.disabled)
    if grounded.removed:
        log.warning(
            "section_sentences_removed",
            topic=topic,
            sentences=[sentence[:120] for sentence in grounded.removed],
        )
        text = grounded.text or section_fallback(topic_facts, d.numbers)
        section.content, section.references = clean_citations(text, d.references)
        section.word_count = count_words(section.content)
        section.short = section.word_count < d.settings.min_section_words
    section.content = _plain(section.content, d.references, d.articles)
    section.evidence_quality = evidence_quality(topic_facts, d.numbers, d.articles, topic_conflicts)
    return section, len(grounded.removed)


def _section_limitations(
    sections: list[ReportSection], ungrounded: int, settings: ResearchSettings
) -> list[str]:
    """What the report says of its sections: sentences left out, sections short of words."""
    limitations: list[str] = []
    if ungrounded:
        limitations.append(
            f"{_were_left_out(ungrounded, 'drafted for the sections')}: {_they(ungrounded)} "
            "cited no verified fact, or said more than the facts cited."
        )
    short = [s.heading for s in sections if s.short]
    if short:
        limitations.append(
            f"{_counted_words(len(short), 'section').capitalize()} "
            f"{'rests' if len(short) == 1 else 'rest'} on little evidence (under "
            f"{settings.min_section_words} words, marked short): " + "; ".join(short) + "."
        )
    return limitations


async def generate_report(
    frame: QuestionFrame,
    facts: list[VerifiedFact],
    discrepancies: list[Discrepancy],
    articles: dict[str, Article],
    llm: ResearchLLM,
    settings: ResearchSettings,
    *,
    plan: ResearchPlan | None = None,
    budget_stop_reason: str | None = None,
    on_section: Callable[[int, int], None] | None = None,
    disabled_checks: Collection[str] = (),
) -> NarrativeReport:
    """Write the report (task ``synthesize``): summary, one section per topic, references.

    The steps: the facts and conflicts by topic (:func:`_topics_of`); the references,
    numbered in reading order; what the report says of the research
    (:func:`_research_limitations`); the executive summary (:func:`_write_summary`); one
    section per topic, a topic repeating an earlier one folded into it
    (:func:`_topic_section`); what it says of the sections (:func:`_section_limitations`).

    Args:
        frame: the research question's frame (read once, kept on the job): the question is
            ``frame.question``; its subject, outcome and populations are told to the model
            and hold the report's sentences and its no-facts summary.
        facts: verified facts.
        discrepancies: conflicts found by the verifier.
        articles: every article the job retrieved, by ``Article.key`` (the only citable ones).
        llm: the LLM client.
        settings: research settings (``min_section_words``, ``expand_tries``).
        plan: the plan (topic order and wording, what was skipped).
        budget_stop_reason: why research stopped early, if it did (stated in the report).
        on_section: called with (sections done, sections total) for progress.
        disabled_checks: ids of checks not to run (``settings.checks.disabled``); an unknown
            one is a ValueError.
    """
    refuse_unknown(disabled_checks)
    question = frame.question
    topics, conflicts = _topics_of(facts, discrepancies, plan)
    # References are numbered in reading order: topic by topic, facts before conflicts.
    references = build_references(
        [f for topic_facts in topics.values() for f in topic_facts],
        [d for topic_id in topics for d in conflicts.get(topic_id, [])],
        articles,
    )
    numbers = {r.article_key: r.number for r in references}
    limitations = _research_limitations(plan, budget_stop_reason)
    if not topics:
        return NarrativeReport(
            title=f"Research report: {question}",
            question=question,
            executive_summary=no_facts_summary(frame, articles),
            answered=False,
            discrepancies=discrepancies,
            references=references,
            limitations=limitations,
        )
    support = fact_support(facts, references, numbers, discrepancies)
    d = _Drafting(frame, facts, discrepancies, articles, llm, settings, references, numbers,
                  support, limitations, disabled_checks)  # fmt: skip
    title, executive_summary, answered = await _write_summary(d)
    sections: list[ReportSection] = []
    ungrounded = 0
    topics, folded = _fold_repeated_topics(topics, conflicts)
    for done, (topic_id, topic_facts) in enumerate(topics.items(), start=1):
        topic_question = plan.get(topic_id) if plan is not None else None
        topic = topic_question.text if topic_question is not None else topic_id
        section, removed = await _topic_section(d, topic, topic_facts, conflicts.get(topic_id, []))
        ungrounded += removed
        section.sub_question_ids = [topic_id, *folded.get(topic_id, [])]
        sections.append(section)
        if on_section is not None:
            on_section(done, len(topics))
    limitations += _section_limitations(sections, ungrounded, settings)
    return NarrativeReport(
        title=title,
        question=question,
        executive_summary=executive_summary,
        answered=answered,
        sections=sections,
        discrepancies=discrepancies,
        references=references,
        limitations=limitations,
    )


#: Articles named, at most, in the summary of a report that verified no fact.
ARTICLES_NAMED = 5


def no_facts_summary(frame: QuestionFrame, articles: dict[str, Article]) -> str:
    """The executive summary of a report with no verified fact.

    Every claim drawn from the article that answers the question can be dropped (a model may
    misread it each time it is asked), and "no evidence answering the question was found"
    would then be false: the article was read. The summary says what happened, and names the
    articles retrieved whose titles speak of ``frame``'s subject
    (:func:`medlit.words.search_plan.speaks_of_subject`), for the reader to read; with no
    subject read, those keeping the words it asks about (:func:`asked_terms`).
    """
    if not articles:
        return "No articles were found for this question, so this report has no findings."
    if frame.subject:
        on_subject = [a for a in articles.values() if speaks_of_subject(frame, a.title)]
        subject = frame.subject
    else:
        anchors = asked_terms(frame)
        on_subject = [a for a in articles.values() if on_topic(a.title, anchors)]
        subject = "the question's subject"
    text = (
        f"{counted(len(articles), 'article')} {'was' if len(articles) == 1 else 'were'} "
        "found, but nothing they were read to say could be confirmed in their own text, so this "
        "report draws no conclusion from them."
    )
    if not on_subject:
        return text + f" None of them, by its title, is about {subject}."
    named = "; ".join(
        f"{a.title.rstrip('. ')} ({f'PMID {a.pmid}' if a.pmid else a.key})"
        for a in on_subject[:ARTICLES_NAMED]
    )
    more = len(on_subject) - ARTICLES_NAMED
    return f"{text} Found on {subject}, to read for yourself: {named}" + (
        f"; and {more} more." if more > 0 else "."
    )


def _plain(text: str, references: list[Reference], articles: dict[str, Article]) -> str:
    """``text`` in plainer words: no citation read as an author ("the study by [1]"), no
    authors' first person ("our findings"), and the abbreviations the references it cites
    define spelled out at first use."""
    keys = {r.number: r.article_key for r in references}
    numbers = sorted(cited_numbers(text))
    cited = [articles[keys[n]] for n in numbers if n in keys and keys[n] in articles]
    return spell_out(third_person(unauthored(text)), cited)


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _counted_words(count: int, noun: str) -> str:
    """ "one section", "two sections", "12 sections": small counts in words, for a reader."""
    number = _NUMBER_WORDS[count] if 0 <= count < len(_NUMBER_WORDS) else str(count)
    return f"{number} {noun}{'' if count == 1 else 's'}"


def _were_left_out(count: int, where: str) -> str:
    """ "1 sentence of the drafted summary was left out", "3 sentences ... were left out"."""
    return f"{counted(count, 'sentence')} {where} {'was' if count == 1 else 'were'} left out"


def _they(count: int) -> str:
    return "it" if count == 1 else "they"
