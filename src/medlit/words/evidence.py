"""Each article as the checks read it, worked out once per article (:func:`article_view`)."""

from __future__ import annotations

import re
from functools import cached_property

from medlit.text import forget_kept_sentences, keep_sentences, make_room
from medlit.types import Article, StudyType
from medlit.words.conclusions import conclusion_sentences
from medlit.words.grounding import word_stems
from medlit.words.memo import forget_articles

__all__ = ["EvidenceView", "article_view", "forget_views", "title_and_abstract"]

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")


def title_and_abstract(article: Article) -> str:
    """The article's title and abstract (labels inline) as one text."""
    return f"{article.title} {article.abstract_text}"


class EvidenceView:
    """What the checks read of one article: its word stems, its numbers, its conclusion
    sentences, its MeSH terms and publication types, its design (each computed on first use,
    then kept)."""

    def __init__(self, article: Article) -> None:
        self.article = article
        # Its sections' sentences are cut once, for every answer that reads the article
        # (:func:`medlit.text.keep_sentences`: the checks' own ``split_sentences`` of a
        # section's text, from the first, keeps them there); what the checks work out of its
        # texts (its title and abstract as one, too) is kept so (:mod:`medlit.words.memo`).
        keep_sentences(
            [
                article.title,
                *(s.text for s in article.abstract),
                article.everything_said,
                title_and_abstract(article),
            ]
        )

    @cached_property
    def words(self) -> frozenset[str]:
        """The word stems of everything the article says (title, abstract, MeSH, keywords)."""
        return frozenset(word_stems(self.article.everything_said))

    @cached_property
    def numbers(self) -> frozenset[str]:
        """The numbers its title and abstract give, as written ("12", "0.5", "1,000")."""
        return frozenset(_NUMBER.findall(title_and_abstract(self.article)))

    @cached_property
    def conclusions(self) -> tuple[str, ...]:
        """The sentences of its conclusion (an unstructured abstract's last one)."""
        return tuple(conclusion_sentences(self.article))

    @property
    def mesh(self) -> tuple[str, ...]:
        """Its MeSH descriptor names."""
        return tuple(self.article.mesh_terms)

    @property
    def publication_types(self) -> tuple[str, ...]:
        """Its publication types as PubMed gives them."""
        return tuple(self.article.publication_types)

    @cached_property
    def design(self) -> StudyType:
        """The study design its publication types and text tell."""
        return self.article.study_type


#: The views of the articles read, by content: an article's view is a property of the article,
#: not of the answer that cites it.
_VIEWS: dict[tuple[str | None, str, tuple[str, ...]], EvidenceView] = {}
_VIEWS_MAX = 1024


def article_view(article: Article) -> EvidenceView:
    """The view of ``article``, made the first time an article with this PMID, title and
    abstract is read, and kept, with what it worked out, for the next answers (the oldest
    half is let go past :data:`_VIEWS_MAX` articles)."""
    key = (article.pmid, article.title, tuple(s.text for s in article.abstract))
    view = _VIEWS.get(key)
    if view is None:
        make_room(_VIEWS, _VIEWS_MAX)
        view = _VIEWS[key] = EvidenceView(article)
    return view


def forget_views() -> None:
    """Let every view go (and the sentences they kept)."""
    _VIEWS.clear()
    forget_kept_sentences()
    forget_articles()
