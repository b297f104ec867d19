"""A cited sentence must not carry a technical term that only another article says.

A model given several abstracts can join two of them into one sentence: a finding of the
cited article with a term (a test, a drug, a population) that only another article it was
given names. Every subject word of the question may be in the cited article, so the subject
check passes it; the sentence states a finding neither study made.

Here each cited sentence's technical words (rare in English:
:func:`~medlit.words.word_rarity.is_technical`, so "evidence", "association" or "however" never
count) are held to the articles it cites. A word none of them says (title, abstract, MeSH),
which the question does not use either, but which another evidence article does say, was
borrowed from that article: the sentence is left out, with a warning naming both articles. A
rare word no article says is the model's own (a synonym, a class name) and is left to the
other checks: nothing shows it was mixed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.types import Article
from medlit.words.grounding import word_stem, word_stems
from medlit.words.tokens import LETTER_TERMS
from medlit.words.topics import normalise_topic
from medlit.words.word_rarity import is_technical

__all__ = ["borrowed_rewriter", "borrowed_terms"]

_WORD = LETTER_TERMS
_SUSPENDED = re.compile(r"\b[^\W\d_]+-(?=\s)")
"""A suspended prefix ("peri-" in "peri- and postmenopausal"): the word it stands for is the
prefix and the next word's end, which no word here spells, so it is no term of its own."""


def borrowed_rewriter(
    articles: Mapping[str, Article], question: str
) -> tuple[Callable[[str], str], list[str]]:
    """Each cited sentence, or ``""`` when it carries a technical term only an article it does
    not cite says; and the warnings so far (one for each sentence left out)."""
    warnings: list[str] = []
    if len(articles) < 2:
        return lambda sentence: sentence, warnings
    said = {pmid: word_stems(article.everything_said) for pmid, article in articles.items()}
    asked = word_stems(question)

    def check(sentence: str) -> str:
        cited = [p for p in dict.fromkeys(extract_pmids(sentence)) if p in said]
        if not cited:
            return sentence
        theirs = set().union(*(said[p] for p in cited))
        for word in _WORD.findall(_SUSPENDED.sub(" ", without_citations(sentence))):
            for key in normalise_topic(word).split():
                stem = word_stem(key)
                if stem in theirs or stem in asked or not is_technical(key):
                    continue
                source = next((p for p in said if p not in cited and stem in said[p]), None)
                if source is not None:
                    cites = ", ".join(f"PMID {p}" for p in cited)
                    warnings.append(
                        f"a sentence was left out: it cited {cites}, but its {word!r} comes "
                        f"from PMID {source}, which it does not cite"
                    )
                    return ""
        return sentence

    return check, warnings


@check("borrowed-terms", "sentence")
def borrowed_terms(ctx: CheckContext) -> list[Finding]:
    """A sentence carrying a technical term that only an article it does not cite says."""

    rewrite, told = borrowed_rewriter(ctx.articles, ctx.question)
    found = sentence_findings("borrowed-terms", ctx, rewrite, told)
    return logged(found, "answer_terms_borrowed")
