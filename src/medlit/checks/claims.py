"""A research finding held to the article it was drawn from.

An extraction gives a claim and the verbatim quote it rests on; :func:`check_claim` keeps the
claim only when the quote is the article's, states a finding, and says what the claim says
(or another result sentence of the article does), with no term swapped, no comparison
reversed, nothing the article denies, and no subject of the question the article never says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlit.checks.comparisons import reverses
from medlit.checks.contradicted import concludes
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.checks.swapped_terms import Swap, swapped_term
from medlit.log import get_logger
from medlit.text import split_sentences
from medlit.types import AbstractSection, Article, Passage
from medlit.words.conclusions import states_aim
from medlit.words.defined_terms import long_forms
from medlit.words.grounding import claim_supported, denied_by_article, unsaid_in_article
from medlit.words.stance import content_terms

__all__ = [
    "ClaimContext",
    "article_quote",
    "claim_denied_by_article",
    "claim_finding",
    "claim_quote",
    "claim_reverses_quote",
    "claim_subject_unsaid",
    "quote_in_article",
    "quote_passage",
    "quotes_a_result",
    "result_sentence_for",
    "without_label",
]

log = get_logger("research.researcher")

_NORM = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)


def _norm(text: str) -> str:
    text = text.translate(_NORM).lower()
    return re.sub(r"\s+", " ", text).strip()


def _quoted(quote: str) -> str:
    """A quote normalised for matching: no surrounding punctuation or ellipses."""
    return _norm(quote).strip(" .,;:\"'…").removesuffix("...").strip()


def quote_in_article(quote: str, article: Article, *, min_words: int = 3) -> bool:
    """Whether ``quote`` really occurs (modulo case, spacing, typographic quotes and dashes,
    and leading/trailing punctuation or ellipses) in the article's title or abstract."""
    return article_quote(quote, article, min_words=min_words) is not None


def article_quote(quote: str, article: Article, *, min_words: int = 3) -> str | None:
    """``quote`` as the article's text holds it, or None when the article does not say it.

    A leading section label is not part of the quote: the model is shown the abstract with
    its labels inline ("CONCLUSIONS: ..."), and copies one now and then ("Conclusions: X is
    associated with Y"). The text after it is checked and kept.
    """
    text = without_label(quote, article)
    cleaned = _quoted(text)
    if len(cleaned.split()) < min_words:
        return None
    if cleaned in _norm(article.title) or _sections_saying(cleaned, article):
        return text
    return None


def _sections_saying(cleaned: str, article: Article) -> list[AbstractSection]:
    """The abstract sections holding a quote (as :func:`_quoted` normalises it)."""
    return [section for section in article.abstract if cleaned in _norm(section.text)]


def quote_passage(quote: str, article: Article) -> Passage | None:
    """Where ``quote`` (as :func:`article_quote` keeps it) is in ``article``: the abstract
    section holding it, else the piece of its full text (:attr:`Article.full_text`) holding it,
    as a :class:`Passage` with its section label and whether it is full text; the title is a
    passage with no section. None when none of them holds it, verbatim (as :func:`_quoted`
    normalises it)."""
    cleaned = _quoted(quote)
    if not cleaned:
        return None
    for section in article.abstract:
        if cleaned in _norm(section.text):
            return Passage(section=section.label, text=section.text)
    if cleaned in _norm(article.title):
        return Passage(section=None, text=article.title)
    for piece in article.full_text.sections if article.full_text is not None else []:
        if cleaned in _norm(piece.text):
            return Passage(section=piece.label, from_full_text=True, text=piece.text)
    return None


def without_label(text: str, article: Article) -> str:
    """``text`` without a leading section label of the article ("CONCLUSIONS: ...")."""
    text = text.strip()
    for label in {section.label for section in article.abstract if section.label}:
        head = re.match(rf"{re.escape(label)}\s*:\s*", text, flags=re.IGNORECASE)
        if head is not None:
            return text[head.end() :]
    return text


def quotes_a_result(quote: str, article: Article) -> bool:
    """Whether ``quote`` (as :func:`article_quote` keeps it) is from the article's results
    or conclusions."""
    return any(section.is_result for section in _sections_saying(_quoted(quote), article))


#: Content words of the claim a result sentence must hold to stand in for the model's quote.
MIN_REANCHOR_WORDS = 4
#: Verbs that say a finding was made, not what it is: a claim may use them where its result
#: sentence does not ("X does not occur due to Y" over "X is not due to Y").
_REPORTING = content_terms(
    "occur occurs occurred occurring show shows showed shown found find finds demonstrate "
    "demonstrates demonstrated observe observed observes report reports reported seen"
)


def result_sentence_for(claim: str, article: Article) -> str | None:
    """A sentence of the article's results or conclusions that says ``claim``, for a claim whose
    own quote does not (None if no sentence does).

    A small model states the article's conclusion and quotes another sentence beside it (a result
    saying the same comparison the other way round), while the conclusion says the claim in its
    words. The sentence must pass :func:`~medlit.research.grounding.claim_supported` as a quote
    would (and the claim swap none of its terms for another there:
    :func:`~medlit.checks.swapped_terms.swapped_term`), hold :data:`MIN_REANCHOR_WORDS` of the
    claim's content words, and the claim may use no word that neither it nor the article's title has
    (but a verb that reports a finding, "occur" or "show"): searching every sentence must not let a
    claim pass on two common words ("Aspirin cured every stroke" over "aspirin users had fewer
    strokes"). The sentence holding most of the claim's words is taken.
    """
    words = content_terms(claim)
    titled = content_terms(article.title)
    best: tuple[int, str] | None = None
    for section in article.abstract:
        if not section.is_result:
            continue
        for sentence in split_sentences(section.text):
            spelled = long_forms(sentence, article)
            said = words & (content_terms(sentence) | content_terms(spelled))
            if len(said) < MIN_REANCHOR_WORDS or words - said - titled - _REPORTING:
                continue
            if not claim_supported(
                claim, sentence, title=article.title, result=True, spelled=spelled
            ):
                continue
            if swapped_term(claim, sentence, article) is not None:
                continue
            if best is None or len(said) > best[0]:
                best = (len(said), sentence)
    return best[1] if best is not None else None


@dataclass
class ClaimContext:
    """A research claim being held to its article: the claim, the quote the extraction gave,
    the article, the sub-question, and the article's sentence bearing the claim: the quote as
    the article holds it (:func:`article_quote`, found by the claim runner before any check
    runs, None when the article does not say it), or the result sentence ``claim-quote`` takes
    in its place."""

    statement: str
    quote: str
    article: Article
    question: str
    found: str | None = None
    swap: Swap | None = None


def claim_finding(check: str, ctx: ClaimContext, reason: str) -> list[Finding]:
    """The one finding of a ``claim`` check: drop the claim, for ``reason``."""
    return [
        Finding(
            check,
            "drop",
            reason,
            (str(ctx.article.pmid),) if ctx.article.pmid else (),
            text=ctx.statement,
            data={"reason": reason},
        )
    ]


@check("claim-quote", "claim")
def claim_quote(ctx: ClaimContext) -> list[Finding]:
    """A claim whose quote is not the article's (verbatim, up to typography), states no
    finding (a question, an aim), or does not say what the claim says, or says it with a
    term swapped for another of the article, when no other result sentence of the article
    says it either.

    The quote is found by the claim runner whether or not this check runs (``ctx.found``);
    this check decides only whether the claim stands on it, and takes the result sentence
    that says the claim in its place when one does."""
    statement, article = ctx.statement, ctx.article
    found = ctx.found
    supported = (
        bool(statement)
        and found is not None
        # A question is no finding, nor is a study's aim ("The aim of this study was to
        # evaluate whether X was effective" quoted under the claim "X is useful").
        and not statement.rstrip().endswith("?")
        and not states_aim(found)
        and claim_supported(
            statement,
            found,
            title=article.title,
            result=quotes_a_result(found, article),
            spelled=long_forms(found, article),  # the quote's "FM" is "fibromyalgia"
            concluded_yes=concludes(article, article.title) == "yes",
        )
    )
    swap = swapped_term(statement, found, article) if supported and found else None
    supported = supported and swap is None
    if statement and not supported:
        sentence = result_sentence_for(statement, article)
        if sentence is not None:  # the article says it, in another sentence than quoted
            log.info(
                "quote_replaced", pmid=article.pmid, quote=ctx.quote[:120], sentence=sentence[:120]
            )
            found, supported = sentence, True
    ctx.found = found
    if not statement or found is None:
        return claim_finding("claim-quote", ctx, "quote_not_in_article")
    if not supported:
        ctx.swap = swap
        reason = "claim_swaps_term" if swap is not None else "claim_not_in_quote"
        return claim_finding("claim-quote", ctx, reason)
    return []


@check("claim-reverses-quote", "claim")
def claim_reverses_quote(ctx: ClaimContext) -> list[Finding]:
    """A claim that reverses its quote's comparison ("higher" over a quote saying
    "similar")."""
    if ctx.found is None or not reverses(ctx.statement, ctx.found):
        return []
    return claim_finding("claim-reverses-quote", ctx, "claim_reverses_quote")


@check("claim-denied-by-article", "claim")
def claim_denied_by_article(ctx: ClaimContext) -> list[Finding]:
    """A positive claim bringing in a word its article says only in negative sentences."""
    article = ctx.article
    if ctx.found is None or not denied_by_article(
        ctx.statement, ctx.found, [s.text for s in article.abstract], title=article.title
    ):
        return []
    return claim_finding("claim-denied-by-article", ctx, "claim_denied_by_article")


@check("claim-subject-unsaid", "claim")
def claim_subject_unsaid(ctx: ClaimContext) -> list[Finding]:
    """A claim naming a subject of the (sub-)question that its article never says."""
    if not unsaid_in_article(ctx.statement, ctx.question, ctx.article.everything_said):
        return []
    return claim_finding("claim-subject-unsaid", ctx, "claim_subject_not_in_article")
