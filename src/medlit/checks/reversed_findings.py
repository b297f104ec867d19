"""A cited sentence may not reverse the comparison its article's matching sentence states.

A model can copy its article's comparison with the direction turned ("a higher risk" over
the article's "the risk was similar"). Each cited sentence
that says its groups differ, or that they do not
(:func:`medlit.checks.comparisons.comparison`), is set
against the sentence of each article it cites that shares the most of what it compares; a
citation to an article whose sentence says the other of the same things
(:func:`medlit.checks.comparisons.reverses`) goes, and a sentence left with none is left out, with a
warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.comparisons import Comparison, compared_terms, comparison, reverses
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.conclusions import states_no_finding
from medlit.words.memo import remembered

__all__ = ["matching_sentence", "reversed_findings"]


def _findings(article: Article) -> list[tuple[str, set[str]]]:
    """The sentences of ``article`` that may state a finding (those of its results and
    conclusion, or of an abstract without such sections, that state one), each with what it
    compares (:func:`medlit.checks.comparisons.compared_terms`)."""
    sections = [s for s in article.abstract if s.is_result] or [
        s for s in article.abstract if not s.label and not s.category
    ]
    return [found for section in sections for found in _section_findings(section.text)]


@remembered(16384)
def _section_findings(text: str) -> tuple[tuple[str, set[str]], ...]:
    """The sentences of a section's ``text`` that state a finding, each with what it
    compares: an article's, read once for every answer that cites it."""
    return tuple(
        (sentence, compared_terms(sentence))
        for sentence in split_sentences(text)
        if not states_no_finding(sentence)
    )


def matching_sentence(sentence: str, findings: list[tuple[str, set[str]]]) -> str | None:
    """The one of ``findings`` (:func:`_findings` of an article) that shares the most words
    of what ``sentence`` compares, if any shares one."""
    wanted = compared_terms(sentence)
    best, shared = None, 0
    for candidate, terms in findings:
        count = len(wanted & terms)
        if count > shared:
            best, shared = candidate, count
    return best


def reversed_in(
    articles: Mapping[str, Article],
) -> tuple[Callable[[str], list[tuple[str, str]]], dict[str, Comparison]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article whose
    matching sentence states the opposite comparison; and the PMIDs so far reversed, with
    what the answer said of them (filled as sentences are read)."""
    reversed_from: dict[str, Comparison] = {}
    findings: dict[str, list[tuple[str, set[str]]]] = {}  # each article's, read once

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        cited = [p for p in extract_pmids(sentence) if p in articles]
        said = without_citations(sentence)
        claimed = comparison(said)
        if not cited or claimed is None or states_no_finding(said):
            return []
        wrong = []
        for pmid in cited:
            if pmid not in findings:
                findings[pmid] = _findings(articles[pmid])
            source = matching_sentence(said, findings[pmid])
            if source is not None and reverses(said, source):
                shown = source if len(source) <= 160 else source[:157] + "..."
                what = "a difference" if claimed == "differ" else "no difference"
                wrong.append((pmid, f'{what} where that article says the opposite: "{shown}"'))
                reversed_from[pmid] = claimed
        return wrong

    return wrong_in, reversed_from


@check("reversed-findings", "sentence")
def reversed_findings(ctx: CheckContext) -> list[Finding]:
    """A citation to an article whose matching sentence states the opposite comparison
    ("higher" written over "similar", or the other way)."""

    wrong_in, reversed_from = reversed_in(ctx.articles)
    found = cited_findings("reversed-findings", ctx, wrong_in)
    ctx.data["reversed-findings"] = reversed_from
    return logged(found, "answer_findings_reversed")
