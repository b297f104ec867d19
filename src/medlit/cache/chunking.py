"""Section-aware chunking of an article's abstract (the unit tier 2 embeds and searches).

* Chunk 0 is the title (with the author keywords, when there are any): titles of PubMed
  articles often state the question, which makes them strong anchors.
* Each section of a structured abstract is its own chunk; a long one is split at sentence
  boundaries (``syntok``, which knows "e.g.", "et al.", "3.5 mg") into pieces of about
  ``target_words`` (never above ``max_words`` unless a single sentence is).
* The conclusion is always kept whole: it is what an answer cites, and splitting it would
  separate a claim from its qualifier.
* An unstructured abstract is split by sentences the same way.
* An article's full text (:attr:`~medlit.types.Article.full_text`, PMC), when it was read,
  follows its abstract, the sections that report the study only (methods, results, tables,
  figures, conclusions; not the introduction or discussion, which tell what other studies
  found): the paragraphs of each top-level section ("Results") packed the same
  way, never across sections; each table as its caption and header row with as many of its rows
  as fit (a long table is split by rows, each piece repeating caption and header); each figure
  caption alone. Every chunk keeps its section label and is marked ``from_full_text``.

Chunk ids are ``"{article.key}#{ordinal}"``.

Not every full-text chunk is embedded (:func:`embedded_chunks`): an answer reads an article's
Results passages closest to its question, so tier 2 embeds the abstract's chunks and, of the full
text, only the Results chunks (text, tables, figures) that a cheap lexical score (BM25, over the
article's own Results chunks) ranks highest for the question that read it, at most
``fulltext.embed_per_article``. Embedding every chunk of a body cost seconds per article on one
core (``benchmarks/fulltext.py``); BM25 over 20-50 chunks costs a few milliseconds. A later
question embeds its own picks that tier 2 does not hold yet. Chunk ids stay those of the whole
list, so a chunk embedded for one question is the same chunk for the next.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from medlit.text import split_sentences
from medlit.types import AbstractSection, Article, Chunk, FullText

__all__ = [
    "FULL_TEXT_EMBEDDED",
    "article_content_hash",
    "chunk_article",
    "embedded_chunks",
    "full_text_pieces",
    "is_results_chunk",
    "rank_lexically",
    "split_sentences",
]

TARGET_WORDS = 100
MAX_WORDS = 120
MIN_TAIL_WORDS = 30
#: Full-text chunks of one article embedded for a question (``fulltext.embed_per_article``).
FULL_TEXT_EMBEDDED = 7

#: Sections of a full text whose passages join an answer's evidence: what the study found.
#: An introduction or discussion tells what other studies found, which a citation of this
#: article would then attribute to it.
_RESULTS_SECTION = re.compile(r"result|finding", re.I)


def article_content_hash(article: Article) -> str:
    """Hash of what chunks are made of: a different hash means re-chunk and re-embed."""
    h = hashlib.sha256()
    for part in (article.title, "\x1f".join(article.keywords)):
        h.update(part.encode())
        h.update(b"\x1e")
    for section in article.abstract:
        h.update(f"{section.label}\x1f{section.category}\x1f{section.text}\x1e".encode())
    if article.full_text is not None:  # an article without one hashes as it always did
        h.update(f"\x1dfull text {article.full_text.pmcid}\x1e".encode())
        for piece in article.full_text.sections:
            h.update(f"{piece.label}\x1f{piece.kind}\x1f{piece.text}\x1e".encode())
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


def _table_pieces(text: str, maximum: int) -> list[str]:
    """A table (caption, header row, rows: one a line) in pieces of at most ``maximum`` words
    (a single row may exceed it), each repeating the caption and header row, and the group
    heading (a row of one cell: "Among pre-menopausal women") its first rows fall under."""
    lines = [line for line in text.splitlines() if line.strip()]
    if _words(text) <= maximum or len(lines) <= 2:
        return ["\n".join(lines)] if lines else []
    head = lines[:2]
    budget = max(maximum - _words(" ".join(head)), 1)
    pieces: list[list[str]] = []
    current: list[str] = []
    group: str | None = None  # the heading the rows now read fall under
    count = 0
    for row in lines[2:]:
        heading = " | " not in row
        n = _words(row)
        if current and count + n > budget:
            carried = []
            if current[-1] == group:  # a heading never ends a piece: it opens the next
                carried = [current.pop()]
            pieces.append(current)
            current = carried or ([group] if group is not None and not heading else [])
            count = sum(_words(r) for r in current)
        if heading:
            group = row
        current.append(row)
        count += n
    if current:
        pieces.append(current)
    return ["\n".join([*head, *rows]) for rows in pieces if rows]


def full_text_pieces(
    full_text: FullText, target: int = TARGET_WORDS, maximum: int = MAX_WORDS
) -> list[tuple[str, str]]:
    """(section label, text) pieces of a full text, in order (see the module docstring)."""
    pieces: list[tuple[str, str]] = []
    prose: list[str] = []
    label: str | None = None

    def flush() -> None:
        if prose and label is not None:
            pieces.extend((label, piece) for piece in _pack(prose, target, maximum))
        prose.clear()

    for section in full_text.sections:
        if not section.reports_study:
            continue  # introduction and discussion: other studies' findings, not this one's
        if section.kind != "text" or section.label != label:
            flush()
        label = section.label
        if section.kind == "table":
            pieces.extend((label, piece) for piece in _table_pieces(section.text, maximum))
        elif section.kind == "figure":
            text = " ".join(section.text.split())
            if text:
                pieces.append((label, text))
        else:
            text = " ".join(section.text.split())
            if text:
                prose.extend(split_sentences(text) if _words(text) > target else [text])
    flush()
    return pieces


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

    def add(text: str, section: str | None, is_conclusion: bool, full: bool = False) -> None:
        chunks.append(
            Chunk(
                id=f"{article.key}#{len(chunks)}",
                article_key=article.key,
                ordinal=len(chunks),
                section=section,
                text=text,
                is_conclusion=is_conclusion,
                from_full_text=full,
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
    if article.full_text is not None:
        for label, piece in full_text_pieces(article.full_text, target_words, max_words):
            add(piece, label, False, True)
    return chunks


def is_results_chunk(chunk: Chunk) -> bool:
    """True for a full-text chunk of the Results (or Findings) section: its text, tables and
    figures; the passages an answer may add to its evidence."""
    return chunk.from_full_text and bool(_RESULTS_SECTION.search(chunk.section or ""))


def rank_lexically(question: str, texts: Sequence[str]) -> list[int]:
    """Indexes of ``texts``, best BM25 match for ``question`` first (ties, and texts sharing no
    word with it, in their order). BM25 (``bm25s``, English stop words dropped) is computed
    over ``texts`` alone: a word every Results chunk of the article repeats (its exposure, its
    outcome) weighs little, the one that tells the chunks apart ("pre-menopausal") much."""
    if len(texts) <= 1:
        return list(range(len(texts)))
    import bm25s  # imported on first use: only an answer reading a full text needs it

    corpus = bm25s.tokenize(list(texts), stopwords="en", show_progress=False)
    words = bm25s.tokenize([question], stopwords="en", show_progress=False, return_ids=False)
    known = [w for w in words[0] if w in corpus.vocab]
    if not known:
        return list(range(len(texts)))
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    scores = retriever.get_scores(known)
    return sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))


def embedded_chunks(
    chunks: Sequence[Chunk], question: str | None, limit: int = FULL_TEXT_EMBEDDED
) -> list[Chunk]:
    """The chunks of one article (:func:`chunk_article`) that tier 2 embeds for ``question``.

    Every abstract chunk; of the full text, the ``limit`` Results chunks
    (:func:`is_results_chunk`) that :func:`rank_lexically` ranks highest for ``question`` (all
    of them when there are no more). Without a question (an article stored by a search, not
    read for an answer), no full-text chunk: the body stays with the article, and the answer
    that reads it embeds its own picks. In their order in the article.
    """
    keep = [c for c in chunks if not c.from_full_text]
    results = [c for c in chunks if is_results_chunk(c)]
    if question and limit > 0 and results:
        if len(results) > limit:
            order = rank_lexically(question, [c.text for c in results])
            results = [results[i] for i in sorted(order[:limit])]
        keep.extend(results)
    return sorted(keep, key=lambda c: c.ordinal)
