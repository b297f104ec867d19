"""An answer parsed once into its sentences, and the checks' one walk over them.

A :class:`Draft` holds the answer line by line, each line cut into sentences
(:func:`medlit.text.sentence_pieces`, each with the spacing after it), so that the checks and
:func:`medlit.checks.apply.apply` refer to a sentence by its index and the answer is rebuilt
exactly. :func:`rewrite_sentences` walks the sentences of a text given as a string, keeping its
lines and spacing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

from medlit.text import keep_sentence_pieces, sentence_pieces

_WORD = re.compile(r"[^\W_]")

__all__ = ["Draft", "Sentence", "rewrite_sentences"]


@dataclass(frozen=True)
class Sentence:
    """One sentence of a draft: its index, its line, and its text (with the spacing after)."""

    index: int
    line: int
    text: str


@dataclass(frozen=True)
class Draft:
    """An answer as lines of sentences; ``text`` gives it back exactly."""

    lines: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, text: str) -> Draft:
        """The draft of ``text``."""
        return cls(tuple(tuple(sentence_pieces(line)) for line in text.split("\n")))

    @cached_property
    def text(self) -> str:
        """The answer as written."""
        return "\n".join("".join(pieces) for pieces in self.lines)

    @cached_property
    def sentences(self) -> tuple[Sentence, ...]:
        """Every sentence, numbered in the order of the text."""
        found: list[Sentence] = []
        for row, pieces in enumerate(self.lines):
            found.extend(Sentence(len(found), row, piece) for piece in pieces)
        return tuple(found)

    def replaced(self, replacements: Mapping[int, str]) -> Draft:
        """The draft of :meth:`edited` ``(replacements)``: a line keeps the cut of the
        sentences it kept (:func:`medlit.text.keep_sentence_pieces`), a sentence rewritten
        as one sentence, with the spacing it had, standing for the one it replaces; any other
        line is cut again."""
        lines: list[tuple[str, ...]] = []
        index = 0
        for pieces in self.lines:
            new = [replacements.get(index + i, piece) for i, piece in enumerate(pieces)]
            index += len(pieces)
            if new == list(pieces):
                lines.append(pieces)
            elif _keeps_the_cut(new, pieces):
                lines.append(_kept(new, left_out="" in new))
            else:
                joined = "".join(new)
                lines.append(tuple(sentence_pieces(joined.rstrip() if "" in new else joined)))
        return Draft(tuple(lines))

    def edited(self, replacements: Mapping[int, str]) -> str:
        """The text with the sentences of ``replacements`` (index -> new text; ``""`` leaves it
        out, and a line that lost a sentence loses its trailing space)."""
        out: list[str] = []
        index = 0
        for pieces in self.lines:
            new = [replacements.get(index + i, piece) for i, piece in enumerate(pieces)]
            index += len(pieces)
            joined = "".join(new)
            out.append(joined.rstrip() if "" in new else joined)
        return "\n".join(out)


def _keeps_the_cut(new: list[str], pieces: tuple[str, ...]) -> bool:
    """Whether each sentence ``new`` keeps of ``pieces`` has a word (a piece of punctuation
    alone, "." after a citation, is joined to what comes to stand before it when the line is
    cut again), and each it rewrites is one sentence ending in the spacing it had."""
    for n, piece in zip(new, pieces, strict=True):
        if n == "":
            continue
        if not _WORD.search(n):
            return False
        if n != piece and (
            n[len(n.rstrip()) :] != piece[len(piece.rstrip()) :] or len(sentence_pieces(n)) != 1
        ):
            return False
    return True


def _kept(pieces: list[str], *, left_out: bool) -> tuple[str, ...]:
    """The sentences of a line, ``""`` for one left out (then the last one's trailing space is
    taken off as :meth:`Draft.edited` does), remembered as the line's cut."""
    kept = [piece for piece in pieces if piece]
    if left_out:
        while kept and not kept[-1].strip():
            kept.pop()
        if not kept:
            return ("",)  # as an empty line is cut
        kept[-1] = kept[-1].rstrip()
    keep_sentence_pieces(kept)
    return tuple(kept)


def rewrite_sentences(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with each sentence (:func:`~medlit.text.sentence_pieces`, line by line)
    replaced by ``rewrite(sentence)``: ``""`` leaves it out, and a line that lost a sentence
    loses its trailing space. Lines, and the spacing between kept sentences, are kept."""
    draft = Draft.parse(text)
    after = {s.index: new for s in draft.sentences if (new := rewrite(s.text)) != s.text}
    return draft.replaced(after).text if after else text
