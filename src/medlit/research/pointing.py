"""Findings that point: an article shown as numbered sentences, a quote made from the numbers.

A small model asked to *write* a quote and a claim copies the quote loosely and paraphrases the
claim past what the checks accept. Shown the article's sentences numbered (the title, the
abstract's sentences with their section, and the passages of the full text when read), it only
has to name the sentences a finding rests on: the quote is then assembled here from those
sentences, verbatim by construction. A number outside the list points at nothing: that finding
is dropped, with the reason :data:`OUT_OF_RANGE`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from medlit.text import split_sentences
from medlit.types import Article

__all__ = [
    "OUT_OF_RANGE",
    "Numbered",
    "numbered_sentences",
    "pointed_quote",
    "render_numbered",
]

#: Why a finding or cell pointing at a sentence the article does not have is dropped.
OUT_OF_RANGE = "sentence_number_out_of_range"


@dataclass(frozen=True, slots=True)
class Numbered:
    """One sentence of the article as the model is shown it: its number (from 1), the
    passage it is in (``title``, an abstract label, ``full text, Results``) and its text."""

    number: int
    passage: str
    text: str
    block: int  # sentences of one block (a section) are contiguous text


def numbered_sentences(
    article: Article, *, max_chars: int = 6000, full_text: bool = True
) -> list[Numbered]:
    """The article's sentences, numbered: the title, the abstract's (each with its section
    label), then the full text's passages that report the study (results first), up to
    ``max_chars`` of abstract and as much again of full text."""
    out: list[Numbered] = []

    def add(passage: str, text: str, block: int, budget: int) -> int:
        for sentence in split_sentences(text):
            if budget <= 0:
                break
            out.append(Numbered(len(out) + 1, passage, sentence.strip(), block))
            budget -= len(sentence)
        return budget

    add("title", article.title, 0, max_chars)
    left = max_chars
    for block, section in enumerate(article.abstract, start=1):
        left = add(section.label or "abstract", section.text, block, left)
    if full_text and article.full_text is not None:
        pieces = [p for p in article.full_text.sections if p.reports_study and p.kind == "text"]
        pieces.sort(key=lambda p: not p.is_result)
        left = max_chars
        first = len(article.abstract) + 1
        for block, piece in enumerate(pieces, start=first):
            left = add(f"full text, {piece.label}", piece.text, block, left)
    return out


def render_numbered(sentences: Sequence[Numbered]) -> str:
    """The sentences as the prompt shows them: ``[3] (RESULTS) text``, one a line."""
    return "\n".join(f"[{s.number}] ({s.passage}) {s.text}" for s in sentences)


def pointed_quote(numbers: Sequence[int], sentences: Sequence[Numbered]) -> str | None:
    """The quote the sentence ``numbers`` make: the first cited sentence and those cited
    right after it in the same passage (contiguous text, so verbatim); None when any number
    is out of range or none is given."""
    if not numbers or any(n < 1 or n > len(sentences) for n in numbers):
        return None
    wanted = sorted(set(numbers))
    run = [sentences[wanted[0] - 1]]
    for n in wanted[1:]:
        sentence = sentences[n - 1]
        if n != run[-1].number + 1 or sentence.block != run[-1].block:
            break
        run.append(sentence)
    return " ".join(s.text for s in run)
