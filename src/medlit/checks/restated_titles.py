"""A cited article's title question, said as its answer, must be the answer the article gives.

A PubMed title is often the study's question ("Does pretreatment with statins improve clinical
outcome after stroke?"), and a small model says it back as the finding ("The evidence shows
that pretreatment with statins improves ..."), whatever the article answers. Every word of
the sentence is the article's, so no check that holds a sentence to its article's words sees
it.

Here a cited sentence that says most of its article's title question
(:data:`~medlit.checks.contradicted.RESTATED` of its content words) and states an answer to it
(:func:`~medlit.checks.contradicted.stated_answer`, the title as the question) loses that
citation when the article's conclusion answers the title the other way
(:func:`~medlit.checks.contradicted.concludes`), and is left out with none left, with a
warning. The verdict is then read again, or is Uncertain when nothing cited is left; it is
Uncertain too when it is the answer a sentence left out gave an article about the question
that concludes the other (two readings against it: the sentence and the conclusion; a verdict
read again from what is left could still be the one the article concludes against).

How often the title said back as "yes" (or as "there is no evidence that ...") goes, by the
PubMedQA label of its article, is measured by ``python benchmarks/restated_titles.py``
(figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.contradicted import RESTATED, concludes, stated_answer
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.types import Article
from medlit.words.stance import Stance, content_terms

__all__ = ["restated_titles", "title_answer"]


def title_answer(sentence: str, article: Article) -> Stance | None:
    """The answer ``sentence`` gives to ``article``'s title question when it says most of it
    ("yes" or "no"); None when the title asks nothing or the sentence does not say it."""
    title = article.title.strip()
    if not title.endswith("?"):
        return None
    asked = content_terms(title)
    said = content_terms(without_citations(sentence))
    if not asked or len(asked & said) < RESTATED * len(asked):
        return None
    return stated_answer(sentence, title)


def restated_in(
    articles: Mapping[str, Article],
) -> tuple[Callable[[str], list[tuple[str, str]]], dict[str, Stance]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited article whose
    title question it answers the other way than the article concludes; and those answers,
    by PMID (filled as sentences are read)."""
    answers: dict[str, Stance] = {}

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in dict.fromkeys(extract_pmids(sentence)):
            article = articles.get(pmid)
            said = title_answer(sentence, article) if article is not None else None
            if article is None or said not in ("yes", "no"):
                continue
            found = concludes(article, article.title)
            if found in ("yes", "no") and found != said:
                answers[pmid] = said
                asks = f"the answer {said!r} to the question its title asks"
                wrong.append((pmid, f"{asks}, where it concludes {found!r}"))
        return wrong

    return wrong_in, answers


@check("restated-titles", "sentence")
def restated_titles(ctx: CheckContext) -> list[Finding]:
    """An answer to a cited article's title question that the article does not give (it
    concludes the other)."""

    wrong_in, said = restated_in(ctx.articles)
    found = cited_findings("restated-titles", ctx, wrong_in)
    ctx.data["restated-titles"] = said
    return logged(found, "answer_titles_restated")
