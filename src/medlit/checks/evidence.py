"""Each article as the checks read it, worked out once per answer."""

from __future__ import annotations

import re
from functools import cached_property

from medlit.checks.grounding import word_stems
from medlit.llm.extractive import conclusion_sentences
from medlit.types import Article, StudyType

__all__ = ["EvidenceView"]

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")


class EvidenceView:
    """What the checks read of one article: its word stems, its numbers, its conclusion
    sentences, its MeSH terms and publication types, its design (each computed on first use,
    then kept)."""

    def __init__(self, article: Article) -> None:
        self.article = article

    @cached_property
    def words(self) -> frozenset[str]:
        """The word stems of everything the article says (title, abstract, MeSH, keywords)."""
        return frozenset(word_stems(self.article.everything_said))

    @cached_property
    def numbers(self) -> frozenset[str]:
        """The numbers its title and abstract give, as written ("12", "0.5", "1,000")."""
        return frozenset(_NUMBER.findall(f"{self.article.title} {self.article.abstract_text}"))

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
