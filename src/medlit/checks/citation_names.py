"""A citation must be to an article about the thing its sentence names.

A model can cite, for a claim about one member of a family (vitamin D), an article about
another (vitamin C): the PMID was retrieved, so citation enforcement keeps it, and every word
but one letter may be in the abstract, so no word-overlap check can tell. Here a
sentence's qualified names
(:mod:`medlit.words.qualified_names`: vitamin D, COX-2, type 1, HPV 16...)
are checked against each article it cites: a citation to an article that names the same head
only otherwise (vitamin C, never vitamin D) is removed, and a sentence left with no citation is
left out of the answer, with a warning that says why. An article that never names the head says
nothing either way ("supplementation with cholecalciferol" is vitamin D3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from medlit.checks.citations import extract_pmids, remove_citations, without_citations
from medlit.checks.context import CheckContext, edit_action
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.checks.policy import TOGETHER
from medlit.log import get_logger
from medlit.types import Article
from medlit.words.qualified_names import Names, describe, mismatched, qualified_names

__all__ = [
    "Misattribution",
    "left_unanswered",
    "log_misattributed",
    "misattributed_names",
    "misattributions_in",
    "unaddressed",
]

log = get_logger("agent.citation_names")


@dataclass(frozen=True)
class Misattribution:
    """One citation removed: the sentence names ``claimed``, the article only ``found``."""

    pmid: str
    claimed: str
    found: str
    sentence_dropped: bool
    head: str = ""
    qualifiers: frozenset[str] = frozenset()

    def warning(self) -> str:
        """The line shown with the answer."""
        what = "a sentence was left out" if self.sentence_dropped else "a citation was removed"
        return (
            f"{what}: it cited PMID {self.pmid} for {self.claimed}, but that article is about "
            f"{self.found}"
        )

    def together(self) -> str:
        """The line shown for several sentences of this one kind (``{n}``: how many)."""
        what = "sentences were left out" if self.sentence_dropped else "citations were removed"
        return (
            f"{{n}} {what}: they cited PMID {self.pmid} for {self.claimed}, but that article "
            f"is about {self.found}"
        )


def misattributions_in(articles: Mapping[str, Article]) -> Callable[[str], list[Misattribution]]:
    """What is wrong with a sentence's citations: a :class:`Misattribution` for each article it
    cites that names only otherwise what it names (in the order cited; each article read once).

    Args:
        articles: the retrieved evidence articles, by PMID.
    """
    names_of: dict[str, Names] = {}
    texts: dict[str, str] = {}

    def wrong_in(sentence: str) -> list[Misattribution]:
        cited = [p for p in extract_pmids(sentence) if p in articles]
        claim = qualified_names(without_citations(sentence)) if cited else {}
        if not claim:
            return []
        wrong: list[tuple[str, str, frozenset[str], frozenset[str]]] = []
        for pmid in cited:
            if pmid not in names_of:
                article = articles[pmid]
                texts[pmid] = f"{article.title} {article.abstract_text}"
                names_of[pmid] = qualified_names(texts[pmid])
            for head, ours, theirs in mismatched(claim, names_of[pmid]):
                wrong.append((pmid, head, ours, theirs))
                break
        if not wrong:
            return []
        dropped = not remove_citations(sentence, [pmid for pmid, *_ in wrong])
        return [
            Misattribution(
                p, describe(h, ours, sentence), describe(h, theirs, texts[p]), dropped, h, ours
            )
            for p, h, ours, theirs in wrong
        ]

    return wrong_in


def log_misattributed(found: list[Misattribution]) -> None:
    """Log what was removed, if anything."""
    if found:
        log.warning(
            "citation_names_mismatch",
            pmids=[m.pmid for m in found],
            claimed=[m.claimed for m in found],
            found=[m.found for m in found],
            sentences_dropped=sum(m.sentence_dropped for m in found),
        )


def left_unanswered(text: str, found: list[Misattribution], question: str) -> list[Misattribution]:
    """What was left out that the answer no longer addresses, if that leaves it unanswered.

    The answer is unanswered when no citation is left in ``text``, or when a sentence left out
    named what the question asks about (a qualified name: an instrument, a subtype) and
    nothing left names it: the rest is about something else (a sibling of that name), and a
    verdict drawn from the sentence left out would stand on nothing.
    """
    if not found:
        return []
    if not extract_pmids(text):
        return found
    asked = qualified_names(question, fold_case=True)
    left = qualified_names(text)
    return [m for m in found if m.sentence_dropped and _names(asked, m) and not _names(left, m)]


def _names(names: Names, what: Misattribution) -> bool:
    other = names.get(what.head, frozenset())
    return bool(other) and not mismatched({what.head: what.qualifiers}, {what.head: other})


def unaddressed(text: str, found: list[Misattribution]) -> str:
    """The answer when what it was asked was left out: say what is missing, then the rest."""
    claimed = ", ".join(dict.fromkeys(m.claimed for m in found))
    about = ", ".join(dict.fromkeys(m.found for m in found))
    note = (
        f"None of the retrieved articles addresses {claimed}: the statements written from "
        f"articles about {about} were left out."
    )
    rest = text.strip()
    # Without a citation left, the rest is uncited prose that would read as the answer.
    return f"{note}\n\n{rest}" if extract_pmids(rest) else note


@check("misattributed-names", "sentence")
def misattributed_names(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that names only otherwise what the sentence names (vitamin C
    where the sentence says vitamin D, type 1 where it says type 2)."""

    wrong_in = misattributions_in(ctx.articles)
    findings: list[Finding] = []
    found: list[Misattribution] = []
    for sentence in ctx.draft.sentences:
        wrong = wrong_in(sentence.text)
        if not wrong:
            continue
        found += wrong
        kept = remove_citations(sentence.text, [m.pmid for m in wrong])
        action, pmids = edit_action(sentence.text, kept)
        findings += [
            Finding(
                "misattributed-names", action, m.warning(), pmids, sentence.index, sentence.text,  # type: ignore[arg-type]
                data={TOGETHER: m.together()},
            )
            for m in wrong
        ]  # fmt: skip
    ctx.data["misattributed-names"] = found
    log_misattributed(found)
    return findings
