"""Where ``syntok`` cuts a text into sentences, worked out without its objects.

``syntok.segmenter.process`` tokenises each paragraph into ``Token`` objects and walks them
through a machine of ``State`` objects, one method call per token and per question asked of
it: about 6 µs a token, 2.4 ms for an answer of 300 words. :func:`syntok_sentences` gives the
same sentences, token for token, from syntok's own tables and patterns (its ``Tokenizer`` and
``State`` class attributes, read at the call, so a setting changed there holds here too):

- the tokens: a run of non-space characters that is ASCII and one word between punctuation
  ("word,", "(P", "[PMID:123].") is cut here as ``Tokenizer.tokenize`` cuts it; any other run
  is handed to ``Tokenizer.tokenize`` itself;
- the sentences: syntok's state machine (``syntok._segmentation_states``), replayed over a
  list of tokens with an index for its queue, the history being the tokens from the
  sentence's first to the one before the queue.

Each decision is syntok's, in its order. The two agree on every text of ../shared/data the
checks meet (the 500 PubMedQA abstracts, title, sections and all, the recorded answers,
answers assembled from abstracts, PMC full texts, Europe PMC abstracts, MQP questions) and on
40,000 generated texts of the tokens syntok's rules turn on; tests/unit/test_sentence_cut.py
compares them on a sample of each.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from syntok import segmenter
from syntok._segmentation_states import State
from syntok.tokenizer import Tokenizer

__all__ = ["syntok_sentences", "syntok_starts", "syntok_tokens"]


# What syntok's ``Tokenizer._spaces`` (a ``regex`` pattern) takes for a space: Unicode's
# White_Space and U+200B (``re``'s ``\s`` would take U+001C-U+001F too).
_SPACE = "\t-\r \x85\xa0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000"
# A run of non-space characters and the spacing before it. An ASCII run is read as
# ``Tokenizer.tokenize`` reads it: the punctuation before its first letter or digit
# (``_find_start``, which asks ``str.isalnum``: in ASCII, [0-9A-Za-z]), the word from there to
# its last letter or digit (``_find_end``), and the punctuation after; any other run (the
# last group) is handed to ``Tokenizer.tokenize``.
_RUN = re.compile(
    rf"([{_SPACE}]*+)(?:"
    r"([!-/:-@\[-`{-~]*)((?:[0-9A-Za-z](?:[!-~]*[0-9A-Za-z])?)?)([!-/:-@\[-`{-~]*)"
    rf"(?=[{_SPACE}]|\Z)|([^{_SPACE}]+))"
)
# syntok's ``Tokenizer._separation`` (where a word is cut further: "mRNA", "don't", "a-b",
# "x(y") as it reads an ASCII word.
_ASCII_SEPARATION = re.compile(
    r"(?<=[a-z])[.!?]?(?=[A-Z])|'[A-Za-z]|[()\[\]{}]|\.\.\."
    r"|(?<=[A-Za-z])[,;_-](?=[A-Za-z0-9])|(?<=[A-Za-z0-9])[,;_-](?=[A-Za-z])"
)
_TOKENIZER = Tokenizer()  # as segmenter.process makes it


def _plain(word: str) -> bool:
    """Whether ASCII ``word`` is letters or digits with no lower case letter before an upper
    case one: nothing :data:`_ASCII_SEPARATION` finds (a quicker question, for most words)."""
    return word.isalnum() and (word.islower() or word.istitle() or word.isupper() or word.isdigit())


class _Tokens:
    """The tokens of a paragraph as ``Tokenizer().tokenize`` gives them, as three lists."""

    __slots__ = ("offsets", "spacings", "values")

    def __init__(self, paragraph: str) -> None:
        values: list[str] = []
        offsets: list[int] = []
        spacings: list[str] = []
        self.values, self.offsets, self.spacings = values, offsets, spacings
        separated = _ASCII_SEPARATION.search
        at = 0
        for spacing, before, word, after, other in _RUN.findall(paragraph):
            at += len(spacing)
            if word and not (before or after) and (_plain(word) or not separated(word)):
                values.append(word)  # one word, the most of them
                offsets.append(at)
                spacings.append(spacing)
                at += len(word)
            elif other or (word and not _plain(word) and separated(word)):
                run = other or before + word + after
                self._add_tokenized(run, spacing, at)
                at += len(run)
            elif not (before or word or after):  # the spacing after the last run
                if spacing:
                    values.append("")
                    offsets.append(at)
                    spacings.append(spacing)
            else:
                self._add(spacing, before, word, after, at)
                at += len(before) + len(word) + len(after)

    def _add(self, spacing: str, before: str, word: str, after: str, at: int) -> None:
        """Add the tokens of a run of ``before``, ``word`` and ``after`` at ``at``."""
        values, offsets, spacings = self.values, self.offsets, self.spacings
        if not word:  # no letter or digit: the run is one token
            values.append(before)
            offsets.append(at)
            spacings.append(spacing)
            return
        for i, c in enumerate(before):
            values.append(c)
            offsets.append(at + i)
            spacings.append("" if i else spacing)
        values.append(word)
        offsets.append(at + len(before))
        spacings.append("" if before else spacing)
        if after:
            end = at + len(before) + len(word)
            if after.startswith("..."):
                values.append("...")
                offsets.append(end)
                spacings.append("")
                end, after = end + 3, after[3:]
            for i, c in enumerate(after):
                values.append(c)
                offsets.append(end + i)
                spacings.append("")

    def _add_tokenized(self, run: str, spacing: str, at: int) -> None:
        """Add the tokens ``Tokenizer.tokenize`` cuts ``run`` into (at ``at``, after
        ``spacing``): alone, its first token has no spacing."""
        for i, token in enumerate(_TOKENIZER.tokenize(run)):
            self.values.append(token.value)
            self.offsets.append(token.offset + at)
            self.spacings.append(token.spacing if i else spacing)


def syntok_tokens(paragraph: str) -> list[tuple[str, str, int]]:
    """The tokens ``Tokenizer().tokenize(paragraph)`` gives: spacing, value, offset."""
    tokens = _Tokens(paragraph)
    return list(zip(tokens.spacings, tokens.values, tokens.offsets, strict=True))


_FIRST, _INNER, _TERMINAL, _END = range(4)


class _Machine:
    """syntok's ``State`` machine over ``tokens`` (``syntok._segmentation_states``): ``q`` is
    the head of its queue, its history the tokens ``h`` to ``q``. Each method is the
    ``State`` method its docstring names; a state returns the next one (``_FIRST``: a
    ``FirstToken`` state, ...)."""

    def __init__(self, tokens: _Tokens) -> None:
        self.values = tokens.values
        self.offsets = tokens.offsets
        self.spaced = tokens.spacings
        self.n = len(tokens.values)
        self.q = 0
        self.h = 0
        # Where the tokens are that open a bracket or end a sentence, and the end.
        stops = State.terminals | State.opening_brackets
        self.events = [i for i, value in enumerate(self.values) if value in stops]
        self.events.append(self.n)

    def sentences(self) -> Iterator[tuple[int, int]]:
        """``segmenter.segment``: the first and the end token of each sentence."""
        state = _FIRST if self.n else _END
        while True:
            if state in (_TERMINAL, _END):  # at a sentence: its history is collected
                if self.q > self.h:
                    if self.q - self.h > 1 or self.values[self.h]:
                        yield self.h, self.q
                    self.h = self.q
                if state == _END:
                    return
                state = _FIRST if self.q < self.n else _END
            elif state == _FIRST:
                state = self._first_token()
            else:
                state = self._inner_token()

    def _head(self) -> str | None:
        """The head of the queue (None: the queue is empty)."""
        return self.values[self.q] if self.q < self.n else None

    def _last(self) -> str:
        """``last``."""
        return self.values[self.q - 1] if self.q > self.h else ""

    def _move(self) -> bool:
        """``_move``."""
        self.q += 1
        return self.q < self.n

    def _first_token(self) -> int:
        """``FirstToken.__next__``."""
        head = self._head()
        if (
            head in State.opening_brackets
            and self._skip_bracketed_text()
            and self.q - self.h > 3
            and not (self.q < self.n and self.values[self.q][:1].islower())
        ):
            return _TERMINAL
        if self.q >= self.n:
            return _END
        self._move()
        head = self._head()
        if head is not None and (head in State.terminals or head == "("):
            return self._move_and_maybe_extract_terminal(_FIRST)
        return _INNER

    def _inner_token(self) -> int:
        """``InnerToken.__next__``, which moves one token at a time, and no more, until the
        head opens a bracket or is a terminal: the tokens before the next that does are moved
        past at once."""
        if self.q >= self.n:
            return _END
        self.q = self.events[bisect.bisect_left(self.events, self.q + 1)]
        if self.q < self.n and self.values[self.q] in State.opening_brackets:
            self._skip_bracketed_text()
        head = self._head()
        if head is not None and (
            head in State.terminals or head == "(" or head in State.opening_brackets
        ):
            return self._move_and_maybe_extract_terminal(_INNER)
        return _INNER

    def _find_end_of_bracketed_text(self) -> tuple[int, bool]:
        """``__find_end_of_bracketed_text``: the closing bracket's index in the queue (0:
        none) and whether the brackets seem to hold a sentence."""
        values, q, n = self.values, self.q, self.n
        depth, i = 1, 1
        first_is_title: bool | None = None
        last_is_terminal = False
        while q + i < n and i < 50:
            value = values[q + i]
            if first_is_title is None and value.isalnum():
                first_is_title = value.istitle()
            elif first_is_title and value.isalnum():
                last_is_terminal = q + i + 1 < n and values[q + i + 1] in State.terminals
            if value in State.opening_brackets:
                depth += 1
            elif value in State.closing_brackets:
                depth -= 1
                if depth == 0:
                    break
            i += 1
        return (i if depth == 0 else 0), bool(first_is_title and last_is_terminal)

    def _skip_bracketed_text(self) -> bool:
        """``_skip_bracketed_text``."""
        closing, inner = self._find_end_of_bracketed_text()
        if closing > 0:
            t = self.q + closing
            length = self.offsets[t] + len(self.values[t]) - self.offsets[self.q]
            if length < State.max_bracket_skipping_length or not inner:
                self.q = t + 1
                return True
        return False

    def _move_and_maybe_extract_terminal(self, me: int) -> int:
        """``_move_and_maybe_extract_terminal`` of a state ``me``: ``me`` (no cut) or
        ``_TERMINAL``."""
        before = self._last()
        if self._head() not in State.opening_brackets:
            self._move()
        after = self._token_after_terminal()
        return self._decide(me, before, after)

    def _token_after_terminal(self) -> str:
        """``__move_to_next_relevant_word_and_return_token_after_terminal``."""
        token: str | None = None
        if self._head() in State.opening_brackets and self._last() not in State.terminals:
            self._skip_bracketed_text()
        else:
            token = self._move_past_terminals(token)
            head = self._head()
            if (
                head in State.closing_quotes
                and not self.spaced[self.q]
                and self._move()
                and token is None
            ):
                token = self._last()
            token = self._move_past_terminals(token)
            head = self._head()
            if head in State.opening_brackets:
                token = head
        if token is None and self.q < self.n:
            token = self.values[self.q]
        return "" if token is None else token

    def _move_past_terminals(self, token: str | None) -> str | None:
        """A loop of ``__move_to_next_relevant_word_and_return_token_after_terminal``:
        past terminals and closing brackets, ``token`` the first moved past."""
        while self.q < self.n and (
            self.values[self.q] in State.terminals or self.values[self.q] in State.closing_brackets
        ):
            if not self._move():
                break
            if token is None:
                token = self._last()
        return token

    def _decide(self, me: int, before: str, after: str) -> int:
        """The decision of ``_move_and_maybe_extract_terminal``: to cut (``_TERMINAL``) or
        not (``me``), ``before`` the token before the terminal and ``after`` the one after."""
        head = self._head()
        if head is not None and (head[:1].islower() or head in State.inner_sentence_punctuation):
            return me
        if (
            not (me == _FIRST and State.is_single_letter_or_roman_numeral(before))
            and head in State.starters
        ):
            return _TERMINAL
        if before in State.abbreviations and after not in State.closing_brackets:
            return me
        if head is not None and self._keeps_number(before, after, head):
            return me
        if "." in before and after != ".":
            return me
        if (me == _FIRST or before.isupper()) and State.is_single_letter_or_roman_numeral(before):
            return me
        if State.is_single_consonant(before):
            return me
        if after in State.opening_brackets:
            return self._decide_at_bracket(me)
        return _TERMINAL

    def _keeps_number(self, before: str, after: str, head: str) -> bool:
        """The decisions of ``_move_and_maybe_extract_terminal`` on the head of the queue
        (``head``) that keep the sentence going: a number, a token after no space."""
        unspaced = not self.spaced[self.q]
        if before in ("no", "No", "NO") and (any(c.isnumeric() for c in head) and head.isalnum()):
            return True
        if head.isnumeric() and unspaced:
            return True
        if unspaced and (not after.istitle() or not after.isalpha() or len(after) == 1):
            return True
        if head.isnumeric() and len(head) > 2:
            return True
        if before.isnumeric() and head in State.months:
            return True
        return before in State.months and head.isnumeric()

    def _decide_at_bracket(self, me: int) -> int:
        """The decision when the token after the terminal opens a bracket."""
        closing, inner = self._find_end_of_bracketed_text()
        q, n = self.q, self.n
        after_brackets = ""
        if closing > 0 and not inner and q + closing + 1 < n:
            after_brackets = self.values[q + closing + 1]
        after_next = self.values[q + 1] if q + 1 < n else ""
        if after_brackets in State.inner_sentence_punctuation:
            return me
        if after_next.istitle():
            return _TERMINAL
        return me if after_brackets[:1].islower() else _TERMINAL


def syntok_sentences(text: str) -> Iterator[str]:
    """The sentences ``segmenter.process(text)`` gives, each as the spacing and value of its
    tokens joined."""
    for paragraph in segmenter.preprocess(text):
        tokens = _Tokens(paragraph)
        spacings, values = tokens.spacings, tokens.values
        for first, end in _Machine(tokens).sentences():
            yield "".join(spacings[i] + values[i] for i in range(first, end))


def syntok_starts(text: str) -> list[int]:
    """The offset of the first token of each sentence of ``segmenter.process(text)`` (in its
    paragraph, as syntok gives it)."""
    starts: list[int] = []
    for paragraph in segmenter.preprocess(text):
        tokens = _Tokens(paragraph)
        starts.extend(tokens.offsets[first] for first, _ in _Machine(tokens).sentences())
    return starts
