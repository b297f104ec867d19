"""Section-aware chunking of an article's abstract (the unit tier 2 embeds and searches).

* Chunk 0 is the title (with the author keywords, when there are any): titles of PubMed
  articles often state the question, which makes them strong anchors.
* Each section of a structured abstract is its own chunk; a long one is split at sentence
  boundaries (``syntok``, which knows "e.g.", "et al.", "3.5 mg") into pieces of about
  ``target_words`` (never above ``max_words`` unless a single sentence is).
* The conclusion is always kept whole: it is what an answer cites, and splitting it would
  separate a claim from its qualifier.
* An unstructured abstract is split by sentences the same way.

Chunk ids are ``"{article.key}#{ordinal}"``.
"""

from __future__ import annotations

import hashlib

from medlit.text import split_sentences
from medlit.types import AbstractSection, Article, Chunk

__all__ = ["article_content_hash", "chunk_article", "split_sentences"]

TARGET_WORDS = 100
MAX_WORDS = 120
MIN_TAIL_WORDS = 30


def article_content_hash(article: Article) -> str:
    """Hash of what chunks are made of: a different hash means re-chunk and re-embed."""
    h = hashlib.sha256()
    for part in (article.title, "\x1f".join(article.keywords)):
        h.update(part.encode())
        h.update(b"\x1e")
    for section in article.abstract:
        h.update(f"{section.label}\x1f{section.category}\x1f{section.text}\x1e".encode())
    return h.hexdigest()[:32]


def _words(text: str) -> int:
    return len(text.split())


def _pack(sentences: list[str], target: int, maximum: int) -> list[str]:
    """Greedy packing of sentences into pieces of about ``target`` words."""
    pieces: list[list[str]] = []
    current: list[str] = []
    count = 0
    for sentence in sentences:
        n = _words(sentence)
        if current and (count + n > maximum or count >= target):
            pieces.append(current)
            current, count = [], 0
        current.append(sentence)
        count += n
    if current:
        # A short tail reads badly alone: give it to the previous piece if that stays sane.
        if (
            pieces
            and count < MIN_TAIL_WORDS
            and _words(" ".join(pieces[-1])) + count <= (maximum + MIN_TAIL_WORDS)
        ):
            pieces[-1].extend(current)
        else:
            pieces.append(current)
    return [" ".join(piece) for piece in pieces]


def _section_texts(section: AbstractSection, target: int, maximum: int) -> list[str]:
    text = " ".join(section.text.split())
    if not text:
        return []
    if section.is_conclusion or _words(text) <= maximum:
        return [text]
    return _pack(split_sentences(text), target, maximum)


def chunk_article(
    article: Article, *, target_words: int = TARGET_WORDS, max_words: int = MAX_WORDS
) -> list[Chunk]:
    """Split ``article`` into chunks: title first, then its abstract, section by section.

    Args:
        article: the article.
        target_words: preferred words per piece when a section is split.
        max_words: sections up to this many words stay whole.

    Returns:
        Chunks with ordinals 0..n-1 (an article with neither title nor abstract has none).
    """
    chunks: list[Chunk] = []

    def add(text: str, section: str | None, is_conclusion: bool) -> None:
        chunks.append(
            Chunk(
                id=f"{article.key}#{len(chunks)}",
                article_key=article.key,
                ordinal=len(chunks),
                section=section,
                text=text,
                is_conclusion=is_conclusion,
            )
        )

    title = " ".join(article.title.split())
    if title:
        if article.keywords:
            title = f"{title} Keywords: {', '.join(article.keywords)}."
        add(title, "TITLE", False)
    for section in article.abstract:
        label = section.label or section.category
        for piece in _section_texts(section, target_words, max_words):
            add(piece, label, section.is_conclusion)
    return chunks
