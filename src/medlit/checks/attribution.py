"""Citing the evidence a sentence was taken from, when the model did not cite it.

A small model often writes a correct sentence straight from an abstract and forgets the
``[PMID:n]``. Such a sentence is
attributed to the evidence article it was taken from, and only when that is clear: most of the
sentence's content words (:data:`MIN_SHARE`) occur in that article's title and abstract, and
in no other article as much. Nothing is attributed to an article that was not retrieved for the
answer, and a sentence that already cites is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import sentence_pieces
from medlit.types import Article
from medlit.words.evidence import title_and_abstract
from medlit.words.memo import remembered
from medlit.words.search_terms import content_terms

__all__ = ["MIN_SHARE", "attribute_uncited", "attributer", "cited", "uncited_attribution"]

MIN_SHARE = 0.6
"""Share of a sentence's content words that must occur in the article it is attributed to."""
_MIN_TERMS = 4


@remembered(16384)
def _terms(text: str) -> frozenset[str]:
    """The content words of ``text`` (remembered: an article's title and abstract, named an
    article's text by its view, :mod:`medlit.words.evidence`, are read once)."""
    return frozenset(content_terms(text, limit=1000))


def _vocabulary(articles: Mapping[str, Article]) -> dict[str, frozenset[str]]:
    return {pmid: _terms(title_and_abstract(a)) for pmid, a in articles.items()}


def attribute_uncited(text: str, articles: Mapping[str, Article]) -> tuple[str, list[str]]:
    """Add ``[PMID:n]`` to sentences taken from one evidence article without citing it.

    Args:
        text: the answer.
        articles: the retrieved evidence articles, by PMID.

    Returns:
        The text, and the PMIDs attributed (in order, without duplicates).
    """
    attribute = attributer(articles)
    attributed: list[str] = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip().lower().startswith("verdict:"):
            continue
        pieces = sentence_pieces(line)
        for number, sentence in enumerate(pieces):
            pmid = attribute(sentence)
            if pmid is None:
                continue
            pieces[number] = cited(sentence, pmid)
            if pmid not in attributed:
                attributed.append(pmid)
        lines[index] = "".join(pieces)
    return "\n".join(lines), attributed


def attributer(articles: Mapping[str, Article]) -> Callable[[str], str | None]:
    """The PMID of the one evidence article a sentence citing nothing was taken from (its
    content words mostly that article's, and more than any other article's), or None (each
    article's words read once, when first needed)."""
    vocab: dict[str, frozenset[str]] = {}

    def attribute(sentence: str) -> str | None:
        if not articles or extract_pmids(sentence):
            return None
        words = _terms(sentence)
        if len(words) < _MIN_TERMS:
            return None
        if not vocab:
            vocab.update(_vocabulary(articles))
        shares = sorted(
            ((len(words & vocab[pmid]) / len(words), pmid) for pmid in vocab), reverse=True
        )
        best, pmid = shares[0]
        runner_up = shares[1][0] if len(shares) > 1 else 0.0
        if best < MIN_SHARE or best == runner_up:
            return None
        return pmid

    return attribute


def cited(sentence: str, pmid: str) -> str:
    """``sentence`` citing ``pmid`` before its final full stop (its spacing after kept)."""
    stripped = sentence.rstrip()
    end = len(stripped) - 1 if stripped.endswith((".", "!", "?")) else len(stripped)
    return f"{stripped[:end]} [PMID:{pmid}]{stripped[end:]}" + sentence[len(stripped) :]


@check("uncited-attribution", "cite")
def uncited_attribution(ctx: CheckContext) -> list[Finding]:
    """A sentence that cites nothing but states what one retrieved article found.

    It gets that article's citation (its content words must be mostly that article's), so
    that the checks after it hold the sentence to the article it came from.
    """

    attribute = attributer(ctx.articles)
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        if "".join(ctx.draft.lines[sentence.line]).strip().lower().startswith("verdict:"):
            continue
        pmid = attribute(sentence.text)
        if pmid is not None:
            replacement = cited(sentence.text, pmid)
            findings.append(
                Finding(
                    "uncited-attribution", "cite", "", (pmid,), sentence.index, sentence.text,
                    replacement,
                )
            )  # fmt: skip
    ctx.data["uncited-attribution"] = list(dict.fromkeys(p for f in findings for p in f.pmids))
    return findings
