"""What a study set out to test is not what it found.

A model can copy an abstract's aim ("The purpose of this study was to explore whether X can
replace Y") as its finding ("The study found that X can replace Y"), though the article may
have found something weaker or the other way. Every word of the sentence is the article's, so
the checks on words, numbers and terms pass it; it states the question the study asked as its
answer.

Here a cited sentence that does not itself speak of an aim ("aimed to", "examined whether")
is held to the sentences of each article it cites that state an aim ("The purpose of this
study was to ...", "We sought to determine whether ...", "to assess if ..."). When such a
sentence says at least :data:`AIM_SHARE` of the cited sentence's content words, and
:data:`AIM_LEAD` more of them than any other sentence of the article (its results and
conclusions above all, and a title stating a finding), and the article's conclusion does not
answer that aim yes (what a study set out to show and found, a sentence may say in the aim's
words), the citation goes, and a sentence left citing nothing goes with it.

Hand-written: no natural-language-inference model can be loaded here. How many of the
PubMedQA abstracts' result and conclusion sentences are flagged cited to their own article
(with and without themselves), and how many aims said as findings are caught, is measured by
``python benchmarks/stated_aims.py`` (figures in ``docs/benchmarks.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from medlit.checks.citations import extract_pmids, without_citations
from medlit.checks.context import CheckContext, cited_findings, logged
from medlit.checks.contradicted import concludes
from medlit.checks.declare import check
from medlit.checks.findings import Finding
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words import cue
from medlit.words.memo import remembered
from medlit.words.stance import content_terms

__all__ = ["AIM_LEAD", "AIM_SHARE", "aim_sentences", "aims_as_findings", "stated_aim"]

AIM_SHARE = 0.6
"""Share of a cited sentence's content words an aim of its article must say."""
AIM_LEAD = 2
"""Content words more than any other sentence of the article says that the aim must say."""
_MIN_TERMS = 4  # fewer content words than this are not judged

# An article's sentence stating what the study set out to do.
_AIM = cue("aim.stated")
# A cited sentence that speaks of the aim as an aim ("The study examined whether ..."): it
# reports the question, as the article does.
_SPEAKS_OF_AIM = cue("aim.spoken_of")
# Words a cited sentence frames a finding with, not what it says.
_FRAMING = content_terms("the evidence shows that the study found that researchers reported")


def aim_sentences(article: Article) -> list[str]:
    """The sentences of ``article`` stating what the study set out to do (none from its
    results or conclusions)."""
    return [s for s, aim in _read(article) if aim]


def _read(article: Article) -> list[tuple[str, bool]]:
    """Each sentence of ``article``'s abstract, and whether it states an aim; with its title,
    as no aim, when that states a finding ("Aspirin reduces stroke recurrence: a randomised
    trial"), not a question."""
    read = [said for section in article.abstract for said in _aims(section.text, section.is_result)]
    if article.title and not article.title.rstrip().endswith("?"):
        read.append((article.title, False))
    return read


@remembered(16384)
def _aims(text: str, is_result: bool) -> tuple[tuple[str, bool], ...]:
    """Each sentence of a section's ``text``, and whether it states an aim (none of a results
    or conclusion section does): an article's, read once for every answer that cites it."""
    return tuple(
        (sentence, not is_result and bool(_AIM.search(sentence)))
        for sentence in split_sentences(text)
    )


def stated_aim(
    sentence: str, article: Article, read: list[tuple[str, bool]] | None = None
) -> str | None:
    """The aim sentence of ``article`` that ``sentence`` states as a finding (see the module
    doc), or None (``read``: the article's sentences as :func:`_read` gives them, when the
    caller has them already)."""
    said = without_citations(sentence)
    if _SPEAKS_OF_AIM.search(said):
        return None
    wanted = content_terms(said) - _FRAMING
    if len(wanted) < _MIN_TERMS:
        return None
    best_aim, aim_shared, other_shared = None, 0, 0
    for text, aim in _read(article) if read is None else read:
        shared = len(wanted & content_terms(text))
        if aim and shared > aim_shared:
            best_aim, aim_shared = text, shared
        elif not aim:
            other_shared = max(other_shared, shared)
    if best_aim is None or aim_shared < AIM_SHARE * len(wanted):
        return None
    if aim_shared < other_shared + AIM_LEAD or concludes(article, best_aim) == "yes":
        # Said in other words by a finding, or in the aim's words where the conclusion
        # answers the aim yes ("X can detect Y", after "To determine whether X detects Y"):
        # what the study set out to show, it found.
        return None
    return best_aim


def aims_in(articles: Mapping[str, Article]) -> Callable[[str], list[tuple[str, str]]]:
    """What is wrong with a sentence's citations: (PMID, why) for each cited study whose aim
    it states as a finding (each article read once)."""

    reads: dict[str, list[tuple[str, bool]]] = {}  # each article split once, not per sentence

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        wrong = []
        for pmid in extract_pmids(sentence):
            if pmid not in articles:
                continue
            if pmid not in reads:
                reads[pmid] = _read(articles[pmid])
            if aim := stated_aim(sentence, articles[pmid], reads[pmid]):
                wrong.append((pmid, f'what that study set out to test: "{aim}"'))
        return wrong

    return wrong_in


@check("aims-as-findings", "sentence")
def aims_as_findings(ctx: CheckContext) -> list[Finding]:
    """What a cited study set out to test, stated as what it found."""
    return logged(
        cited_findings("aims-as-findings", ctx, aims_in(ctx.articles)), "answer_aims_as_findings"
    )
