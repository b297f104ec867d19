"""PubMed's Boolean search syntax, for the fake servers: ``AND``, ``OR``, ``NOT``, parentheses,
quoted phrases and field tags (``[tiab]``, ignored), as medlit's search planner writes them.

A word found in no record is ignored, as PubMed ignores a phrase it cannot find
(``PhraseNotFound``): it neither matches nor fails a record. Operators bind as in PubMed:
left to right, ``NOT`` and ``AND`` before ``OR`` (PubMed reads strictly left to right; the
planner always parenthesises its ORs, so the two agree on every query it writes); two terms
side by side are ANDed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Node", "Term", "is_boolean", "matches", "parse", "terms_of"]

_TOKEN = re.compile(r'\(|\)|"[^"]*"|\[[^\]]*\]|[^\s()"\[]+')
_OPERATORS = ("AND", "OR", "NOT")


@dataclass(frozen=True)
class Term:
    """One word, or a quoted phrase (``phrase``: its words in order)."""

    text: str
    phrase: bool = False


@dataclass(frozen=True)
class Node:
    """An operator (``AND``, ``OR``, ``NOT``: the first part without the others) over parts."""

    op: str
    parts: tuple[Node | Term, ...]


def is_boolean(term: str) -> bool:
    """Whether ``term`` uses Boolean syntax (an uppercase operator or parentheses)."""
    return bool(re.search(r"\b(?:OR|NOT)\b|[()]", term))


def parse(term: str, words: Callable[[str], list[str]]) -> Node | Term | None:
    """The query ``term`` as a tree; ``words`` splits a word or phrase into the fake's words
    (lower case, stop words left out). None for a query with no word in it."""
    parser = _Parser([t for t in _TOKEN.findall(term) if not t.startswith("[")], words)
    tree = None
    while parser.peek() is not None:
        part = parser.expression()
        tree = part if tree is None else (Node("AND", (tree, part)) if part else tree)
        if parser.peek() == ")":
            parser.take()  # an unbalanced ")": skipped, as PubMed does
    return tree


class _Parser:
    """A recursive-descent reader of the tokens of one query."""

    def __init__(self, tokens: list[str], words: Callable[[str], list[str]]) -> None:
        self.tokens, self.words, self.position = tokens, words, 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        self.position += 1
        return self.tokens[self.position - 1]

    def primary(self) -> Node | Term | None:
        if self.peek() is None:  # an operator at the end: nothing after it
            return None
        token = self.take()
        if token == "(":
            inner = self.expression()
            if self.peek() == ")":
                self.take()
            return inner
        if token == ")":
            return None
        split = self.words(token.strip('"'))
        if not split:
            return None
        if token.startswith('"'):
            return Term(" ".join(split), phrase=True)
        return Term(split[0]) if len(split) == 1 else Node("AND", tuple(Term(w) for w in split))

    def joined(
        self, op: str, inner: Callable[[], Node | Term | None], implicit: bool
    ) -> Node | Term | None:
        parts = [inner()]
        while (token := self.peek()) is not None and token != ")":
            if token == op:
                self.take()
            elif not implicit or token in _OPERATORS:
                break
            parts.append(inner())
        kept = tuple(p for p in parts if p is not None)
        if not kept or (op == "NOT" and parts[0] is None):
            return None
        return kept[0] if len(kept) == 1 else Node(op, kept)

    def negated(self) -> Node | Term | None:
        return self.joined("NOT", self.primary, implicit=False)

    def conjunction(self) -> Node | Term | None:
        return self.joined("AND", self.negated, implicit=True)

    def expression(self) -> Node | Term | None:
        return self.joined("OR", self.conjunction, implicit=False)


def terms_of(tree: Node | Term | None) -> list[Term]:
    """Every word and phrase of ``tree``."""
    if tree is None:
        return []
    if isinstance(tree, Term):
        return [tree]
    return [t for part in tree.parts for t in terms_of(part)]


def matches(
    tree: Node | Term, found: Callable[[Term], bool], known: Callable[[Term], bool]
) -> tuple[bool | None, int]:
    """Whether a record matches ``tree`` (None: every term of it is unknown, so ignored) and
    how many of its terms it has; ``found``: the record has the term; ``known``: some record
    has it."""
    if isinstance(tree, Term):
        if not known(tree):
            return None, 0
        hit = found(tree)
        return hit, int(hit)
    results = [matches(part, found, known) for part in tree.parts]
    hits = sum(h for _, h in results)
    if tree.op == "NOT":
        first, rest = results[0][0], [r for r, _ in results[1:] if r is not None]
        if first is None:
            return None, 0
        return first and not any(rest), hits
    values = [r for r, _ in results if r is not None]
    if not values:
        return None, 0
    return (all(values) if tree.op == "AND" else any(values)), hits
