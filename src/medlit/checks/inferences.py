"""An inference the answer draws must be one its articles draw.

A small model reports a finding and then reads something into it ("the median number of
questionnaires was five, indicating that participants were not reporting often enough to reach
significance"). The finding is the article's; the inference is the model's, and it reads as
the evidence's. Each check that holds a sentence to its articles
passes them: their words are mostly the article's.

Here the inference a sentence draws (", suggesting that ...", ", indicating that ...", ",
which suggests ...", or a sentence "This suggests that ...") must be said by one sentence of an
article the sentence cites (of any retrieved article, if it cites none): at least
:data:`INFERENCE_SUPPORT` of its content words in that one sentence. An inference that is not
is left out with a warning: a trailing clause goes and its finding stays, with its citations;
a sentence that is all inference goes whole. An inference in its article's own words stays,
and a paraphrase stays while it keeps half the content words of its article's sentence. How
many of the inferences the PubMedQA abstracts draw are held against their own article, and
against another, is measured by ``python benchmarks/inference_support.py`` (figures in
``docs/benchmarks.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, logged, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.stance import content_terms

__all__ = ["INFERENCE_SUPPORT", "inference", "inference_support", "unsupported_inferences"]

INFERENCE_SUPPORT = 0.5
"""Share of an inference's content words one sentence of its article must say."""
_MIN_TERMS = 3  # fewer content words than this ("suggesting that it works") are not judged

# ", suggesting that ..." / ", which indicates ..." after a finding.
_CLAUSE = re.compile(
    r",\s+(?:(?:suggesting|indicating|implying|meaning)\s+that|which\s+(?:suggests|indicates|"
    r"implies|means)(?:\s+that)?)\s+",
    re.IGNORECASE,
)
# "This suggests that ..." / "These results indicate that ...": a sentence that is all inference.
_WHOLE = re.compile(
    r"^\s*(?:this|these(?:\s+(?:findings|results|data))?|it|that)\s+(?:suggests?|indicates?|"
    r"implies|imply|means)\s+(?:that\s+)?",
    re.IGNORECASE,
)
_CITES = re.compile(r"(?:\s*\[PMID:\d+\])+")


def inference(sentence: str) -> tuple[str, str] | None:
    """The finding ``sentence`` reports (``""`` when it is all inference) and the inference it
    draws from it, both without citations; None when it draws none."""
    text = without_citations(sentence).strip().rstrip(".").strip()
    whole = _WHOLE.match(text)
    if whole:
        return "", text[whole.end() :]
    clause = _CLAUSE.search(text)
    if clause:
        return text[: clause.start()], text[clause.end() :]
    return None


def inference_support(drawn: str, articles: list[Article]) -> float:
    """The largest share of the content words of ``drawn`` that one sentence (or title) of
    ``articles`` says; 1.0 when ``drawn`` has too few to judge."""
    terms = content_terms(drawn)
    if len(terms) < _MIN_TERMS:
        return 1.0
    sentences = [
        s
        for article in articles
        for s in [
            article.title,
            *(x for sec in article.abstract for x in split_sentences(sec.text)),
        ]
    ]
    return max((len(terms & content_terms(s)) / len(terms) for s in sentences), default=0.0)


def inferences_rewriter(articles: Mapping[str, Article]) -> tuple[Callable[[str], str], list[str]]:
    """Each sentence without the inference no article it cites draws, and the warnings so far
    (one for each inference left out)."""
    warnings: list[str] = []

    def check(sentence: str) -> str:
        found = inference(sentence)
        if found is None:
            return sentence
        finding, drawn = found
        cited = [articles[p] for p in extract_pmids(sentence) if p in articles]
        if inference_support(drawn, cited or list(articles.values())) >= INFERENCE_SUPPORT:
            return sentence
        shown = drawn if len(drawn) <= 160 else drawn[:157] + "..."
        no_article = "no article it cites" if cited else "no retrieved article"
        warnings.append(f'an inference {no_article} draws was left out: "{shown}"')
        if not finding:
            return ""
        # The finding keeps the citations written before the inference, or else the sentence's.
        clause = _CLAUSE.search(sentence)
        cites = "".join(_CITES.findall(sentence[: clause.start()] if clause else ""))
        cites = (cites or "".join(_CITES.findall(sentence))).strip()
        before = sentence[: len(sentence) - len(sentence.lstrip())]
        after = sentence[len(sentence.rstrip()) :]
        return f"{before}{finding.strip()}{' ' + cites if cites else ''}.{after}"

    return check, warnings


@check("unsupported-inferences", "sentence")
def unsupported_inferences(ctx: CheckContext) -> list[Finding]:
    """An inference ("..., suggesting that ...") that no article the sentence cites draws."""
    rewrite, told = inferences_rewriter(ctx.articles)
    found = sentence_findings("unsupported-inferences", ctx, rewrite, told)
    return logged(found, "answer_inferences_dropped")
