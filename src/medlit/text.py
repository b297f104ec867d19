"""Text utilities shared by every front end, chunking, the evidence digest and research.

:func:`require_clean_text` is the one check every piece of user text passes at the edge (the
CLI, the Python API, the HTTP service): a question, a query, a session id, a path shown back.
Its rules, in one place:

- text that is not valid Unicode is **refused** (:class:`~medlit.errors.ValidationError`, exit
  code 2, HTTP 400) with a message naming the argument. On the command line, bytes that are not
  valid UTF-8 arrive as lone surrogates (Python's ``surrogateescape``); through JSON, an
  unpaired ``\\ud800`` escape does. Neither can be embedded, stored, sent to PubMed or printed,
  and guessing what was meant could change a medical question.
- control characters other than whitespace (NUL, ESC, DEL, the C1 range) are **replaced by a
  space**: they carry no meaning in a question, and left in they would reach the store, the
  prompts and the terminal (escape sequences). Whitespace is left for the caller to collapse.
- bidirectional controls (the embeddings, overrides and isolates U+202A-U+202E and
  U+2066-U+2069, the marks U+200E, U+200F and U+061C) are **removed**: invisible, they can make
  a question or a job title display as something else than it says.

:func:`require_words` is the check that a question is one at all: a question without a word
of two letters or digits ("b", an emoji) is refused wherever a question is asked.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from medlit.errors import ValidationError

__all__ = [
    "Bounded",
    "all_of",
    "as_typed",
    "counted",
    "either_of",
    "fold_accents",
    "forget_kept_pieces",
    "forget_kept_sentences",
    "is_article_text",
    "keep_sentence_pieces",
    "keep_sentences",
    "make_room",
    "only_points",
    "remove_control_chars",
    "require_clean_text",
    "require_words",
    "split_sentences",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
# Cc characters except TAB, LF, VT, FF, CR (whitespace that the callers collapse).
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# Bidirectional formatting characters: embeddings and overrides, isolates, and the marks.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
# A word: two or more letters or digits in a row (any script).
_WORD = re.compile(r"[^\W_]{2,}")


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: "1 article", "3 articles"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def all_of(words: Sequence[str]) -> str:
    """``words`` as a list of all of them: "fractures", "vitamin and fractures", "a, b and c"."""
    return _listed(words, "and")


def either_of(words: Sequence[str]) -> str:
    """``words`` as "none of them" is said of them: "myopathy", "myopathy or rhabdomyolysis",
    "A, B or C"."""
    return _listed(words, "or")


def _listed(words: Sequence[str], conjunction: str) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {conjunction} {words[-1]}"


def fold_accents(text: str) -> str:
    """``text`` with its accents off ("Sjögren's" -> "Sjogren's", "Ménière" -> "Meniere"):
    one word for patterns of ASCII letters, and the spelling PubMed's MeSH headings use. Only
    accents go (canonical decomposition, NFD): the micro sign of "10 µg" stays itself (NFKD
    would make it a Greek mu, which the answer-cache guard's dose pattern does not read), and so
    do letters that are no accented Latin letter ("ø", "α")."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


# Typographic apostrophes (text pasted from a word processor or a web page) and a backtick
# typed for one: "Crohn’s disease" is "Crohn's disease".
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2018\u2019\u02bc`", "'"))


def as_typed(text: str) -> str:
    """``text`` as a keyboard types it: typed apostrophes, no accents (:func:`fold_accents`).
    The form the question's words are read in, wherever they are compared or searched."""
    return fold_accents(text.translate(_APOSTROPHES))


def remove_control_chars(text: str) -> str:
    """``text`` with each control character other than whitespace replaced by a space."""
    return _CONTROL.sub(" ", text)


def require_clean_text(value: str, what: str) -> str:
    """``value`` made safe to store, embed, send and print, or a one-line ValidationError.

    Args:
        value: the text as received (a command-line argument, a JSON field...).
        what: how the message names it, e.g. ``"the question"`` or ``"the session id"``.

    Returns:
        ``value`` with control characters replaced by spaces and bidirectional controls
        removed (see the module docstring).

    Raises:
        ValidationError: ``value`` holds bytes that are not valid UTF-8 or a lone surrogate.
    """
    bad = _SURROGATE.search(value)
    if bad is not None:
        char = bad.group()
        at = bad.start() + 1
        if "\udc80" <= char <= "\udcff":  # surrogateescape: an undecodable byte
            raise ValidationError(
                f"{what} contains bytes that are not valid UTF-8 (byte 0x{ord(char) - 0xDC00:02x} "
                f"at character {at}); use UTF-8 text"
            )
        raise ValidationError(
            f"{what} is not valid Unicode (a lone surrogate U+{ord(char):04X} at character {at})"
        )
    return remove_control_chars(_BIDI.sub("", value))


def require_words(text: str, what: str) -> str:
    """``text`` if it holds a word (two or more letters or digits in a row, any script).

    Raises:
        ValidationError: no such word ("b", "?", an emoji): there is nothing to search for.
    """
    if _WORD.search(text) is None:
        raise ValidationError(
            f"{what} has no word to search for; write it out, e.g. 'Does aspirin prevent stroke?'"
        )
    return text


# Sentence ends syntok misses: a closing bracket or parenthesis, a full stop, a capital letter
# ("fell (P < 0.05) [PMID:2]. The rate ..." was one sentence to it, so a check of either
# sentence acted on both).
_MISSED_END = re.compile(r"(?<=[\])]\.)[ \t]+(?=[A-Z])")

# Citations a sentence opens with when they were written after the full stop before it:
# "[PMID:1]", "[PMID: 1, 2]", "(PMID: 1)", "[1]", "[1, 2]", "[1-3]".
_LEADING_CITATIONS = re.compile(
    r"(?:(?:\[\s*(?:PMIDs?\s*:?\s*)?\d[\d\s,;:\-\u2013PMID]*\]|\(\s*PMIDs?\b[^()\n]{0,80}\))"
    r"[ \t]*)+"
)


def _no_end(before: str, after: str) -> bool:
    """Whether a cut syntok made between ``before`` and ``after`` ends no sentence: after a
    semicolon or a comma, or before an opening bracket when no full stop, question or
    exclamation mark precedes it. syntok cuts a sentence at a semicolon inside nested
    parentheses ("similar (bleeding (2.0% vs 0.0%), ...); 38.8% of ...") and before a
    parenthesis after a number ("18 of 1552 (1.15 %) culture bottles")."""
    before = before.rstrip()
    if not before or not after.strip():
        return False
    if before.endswith((";", ",")):
        return True
    return after.lstrip()[0] in "([" and not before.endswith((".", "!", "?"))


def sentence_starts(text: str) -> list[int]:
    """Where each sentence of ``text`` after the first begins (offsets into ``text``).

    Remembered (a text is cut once, however many checks read it).

    Cutting ``text`` there gives its sentences with their own spacing, so the pieces join back
    into ``text`` exactly. ``syntok``, as :func:`split_sentences`: "0.67 vs. 1.58 mmol/l" is one
    sentence. Citations written after a full stop ("A. [PMID:1] B.", "A. [1]") stay with the
    sentence before them, which they cite.

    A text made by leaving sentences out of one already cut (:func:`keep_sentence_pieces`) is
    cut where its sentences were.
    """
    kept = _KEPT_STARTS.get(text)
    return list(kept if kept is not None else _sentence_starts(text))


_K = TypeVar("_K")
_V = TypeVar("_V")


class Bounded(dict[_K, _V]):
    """A memory kept across answers: a dict of at most ``limit`` entries. A new key, once it
    is full, lets the oldest half go first (insertion order, :func:`make_room`): what was
    worked out of recent answers and articles stays. Entries go in by ``memory[key] = value``
    (``update`` and ``setdefault`` are not bounded)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: _K, value: _V) -> None:
        if key not in self:
            make_room(self, self.limit)
        super().__setitem__(key, value)


def make_room(kept: dict[Any, Any], limit: int) -> None:
    """Let the oldest half of ``kept`` (insertion order) go once it holds ``limit`` entries:
    the bound of every memory kept across answers (:class:`Bounded`)."""
    if len(kept) >= limit:
        for old in list(kept)[: max(1, limit // 2)]:
            kept.pop(old, None)  # (another thread may have let it go)


#: Texts made of sentences already cut, and where they are cut (:func:`keep_sentence_pieces`).
_KEPT_MAX = 4096
_KEPT_STARTS: Bounded[str, tuple[int, ...]] = Bounded(_KEPT_MAX)


def keep_sentence_pieces(pieces: Sequence[str]) -> None:
    """Remember ``pieces`` (sentences :func:`sentence_pieces` cut, some of a text's left out)
    as the sentences of the text they join into, so that it is not cut again: a check that
    leaves a sentence out of an answer, or rewrites one in place, leaves the others as they
    were. (Cut again, the text would mostly give the same sentences, but not always: syntok
    can join two sentences it had cut apart once a neighbour is left out or a citation added;
    tests/unit/test_kept_sentences.py.)"""
    cuts: list[int] = []
    at = 0
    for piece in pieces[:-1]:
        at += len(piece)
        cuts.append(at)
    _KEPT_STARTS["".join(pieces)] = tuple(cuts)


def forget_kept_pieces() -> None:
    """Forget the texts :func:`keep_sentence_pieces` remembered."""
    _KEPT_STARTS.clear()


@functools.lru_cache(maxsize=4096)
def _sentence_starts(text: str) -> tuple[int, ...]:
    from medlit.sentence_cut import syntok_starts

    starts = syntok_starts(text)
    missed = [m.end() for m in _MISSED_END.finditer(text)]
    if missed:
        starts = sorted({*starts, *missed})
    cuts: list[int] = []
    for start in starts[1:]:
        # "A. [PMID:1] B." cuts before the citation, which cites A, not B: the cut moves after it.
        cited = _LEADING_CITATIONS.match(text, start)
        if cited is not None:
            start = cited.end()
        previous = cuts[-1] if cuts else 0
        if cited is None and _no_end(text[previous:start], text[start:]):
            continue
        if previous < start < len(text) and text[start:].strip():
            cuts.append(start)
    return tuple(cuts)


def sentence_pieces(text: str) -> list[str]:
    """The sentences of ``text``, each with the spacing after it: ``"".join`` gives ``text``."""
    cuts = sentence_starts(text)
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def rewrite_sentences(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with each sentence (:func:`sentence_pieces`, line by line) replaced by
    ``rewrite(sentence)``: ``""`` leaves it out, and a line that lost a sentence loses its
    trailing space. Lines, and the spacing between kept sentences, are kept."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        pieces = [rewrite(piece) for piece in sentence_pieces(line)]
        joined = "".join(pieces)
        lines[index] = joined.rstrip() if "" in pieces else joined
    return "\n".join(lines)


# What a sentence that only points at its citations is made of: "This is supported by
# [PMID:1].", "See also [PMID:1].", "As shown in the study [PMID:1]." (a small model ends an
# answer so, over the article its previous sentence already cited).
_POINTING_WORDS = frozenset(
    {
        *("this", "that", "these", "it", "they", "is", "are", "was", "were", "be", "been"),
        *("also", "as", "see", "shown", "demonstrated", "supported", "support", "supports"),
        *("confirmed", "confirms", "reported", "evidenced", "by", "in", "the", "a", "an"),
        *("study", "studies", "article", "articles", "evidence", "data", "finding"),
        *("findings", "result", "results", "according", "to", "further", "same", "cited"),
        *("above", "reference", "references", "source", "sources", "here", "claim", "claims"),
        *("statement", "observation", "conclusion"),
    }
)


def only_points(sentence: str) -> bool:
    """Whether ``sentence`` (its citations taken out) has no word but those that point at
    evidence: "This is supported by", "See also", "As shown in the study" (or none at all)."""
    words = set(re.findall(r"[a-z]+", sentence.lower()))
    return words <= _POINTING_WORDS


_BRACKETED = re.compile(r"\[[^\]]*\]")
_REPEAT_OPENING = 6
"""Words an opening clause may put before a sentence said again ("Despite extensive
therapeutic efforts, ..." where the first time read "The evidence shows that ...")."""
_REPEAT_MIN = 12
"""Words the two must end alike in."""


def _repeats(
    words: tuple[str, ...], cites: set[str], earlier: list[tuple[tuple[str, ...], set[str]]]
) -> bool:
    """Whether a sentence of ``words`` citing ``cites`` says an earlier sentence again: the two
    end in the same :data:`_REPEAT_MIN` words or more, behind at most :data:`_REPEAT_OPENING`
    words each, and this one cites nothing the earlier did not."""
    for said, said_cites in earlier:
        if not cites <= said_cites:
            continue
        shared = 0
        for mine, theirs in zip(reversed(words), reversed(said), strict=False):
            if mine != theirs:
                break
            shared += 1
        if (
            shared >= _REPEAT_MIN
            and len(words) - shared <= _REPEAT_OPENING
            and len(said) - shared <= _REPEAT_OPENING
        ):
            return True
    return False


def drop_repeated_sentences(text: str) -> str:
    """``text`` without the sentences that repeat an earlier one.

    A small model can loop, writing the same sentences (even whole paragraphs) again, or end
    an answer on its first sentence again behind an opening clause ("Despite X, Y remains a
    surgical emergency", first said as "The evidence shows that Y remains ...").
    A repeat says nothing new: a sentence said word for word before goes, and so does one
    ending as an earlier one does (:func:`_repeats`), citing nothing the earlier did not.
    Short sentences (under four words, "It may help.") are left alone, and a line left empty
    goes.
    """
    seen: set[str] = set()
    earlier: list[tuple[tuple[str, ...], set[str]]] = []
    lines: list[str] = []
    for line in text.split("\n"):
        pieces = sentence_pieces(line)
        kept = []
        for piece in pieces:
            key = " ".join(piece.lower().split())
            words = tuple(re.findall(r"[a-z0-9]+", _BRACKETED.sub(" ", piece.lower())))
            cites = set(_BRACKETED.findall(piece.upper()))
            if len(key.split()) >= 4 and (key in seen or _repeats(words, cites, earlier)):
                continue
            seen.add(key)
            earlier.append((words, cites))
            kept.append(piece)
        if len(kept) < len(pieces):
            if not kept:
                continue
            line = "".join(kept).rstrip()
        lines.append(line)
    return "\n".join(lines)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``.

    Uses ``syntok``, which handles biomedical prose ("e.g.", "et al.", "3.5 mg", "P < 0.01")
    where pysbd and spaCy's default splitter were seen to break sentences wrongly; its cut is
    worked out by :mod:`medlit.sentence_cut` (the same sentences, a third of the time).
    Remembered (an abstract is split once, however many checks read it); the texts of an
    article read for the answer checks (:func:`keep_sentences`) are kept apart from the others.
    """
    kept = _KEPT_SENTENCES.get(text)
    if kept is not None:
        return list(kept)
    if text in _ARTICLE_TEXTS:
        kept = _KEPT_SENTENCES[text] = _split_sentences.__wrapped__(text)
        keep_sentences(kept)  # its sentences are the article's texts too
        return list(kept)
    return list(_split_sentences(text))


#: The texts of articles (:func:`keep_sentences`), and the sentences of those already cut.
_KEPT_MAX_SENTENCES = 32768
_ARTICLE_TEXTS: Bounded[str, None] = Bounded(_KEPT_MAX_SENTENCES)
_KEPT_SENTENCES: Bounded[str, tuple[str, ...]] = Bounded(_KEPT_MAX_SENTENCES)


def keep_sentences(texts: Iterable[str]) -> None:
    """Keep the sentences of ``texts`` (an article's sections) apart from the texts of
    answers, once cut: the answer checks' view of an article (:mod:`medlit.words.evidence`)
    names its texts when the article is first read, a text is cut the first time a check
    reads it, and every later answer that cites the article reads its sentences from here.
    Bounded (:class:`Bounded`): past :data:`_KEPT_MAX_SENTENCES` texts, the oldest half go."""
    for text in texts:
        _ARTICLE_TEXTS[text] = None


def is_article_text(text: str) -> bool:
    """Whether ``text`` was named an article's by :func:`keep_sentences` (a section, one of
    its sentences, or all the article says): what is worked out of it is the article's, kept
    for every answer that cites it (:mod:`medlit.words.memo`)."""
    return text in _ARTICLE_TEXTS


def forget_kept_sentences() -> None:
    """Forget the texts :func:`keep_sentences` kept."""
    _ARTICLE_TEXTS.clear()
    _KEPT_SENTENCES.clear()


@functools.lru_cache(maxsize=8192)
def _split_sentences(text: str) -> tuple[str, ...]:
    from medlit.sentence_cut import syntok_sentences

    sentences: list[str] = []
    for sentence in syntok_sentences(text):
        joined = sentence.strip()
        for piece in _MISSED_END.split(joined):
            if not piece.strip():
                continue
            if sentences and _no_end(sentences[-1], piece):
                sentences[-1] = f"{sentences[-1]} {piece.strip()}"
            else:
                sentences.append(piece.strip())
    return tuple(sentences)
