"""What the checks remember of the texts they read (a sentence's stance, its content words),
kept in one place so that it can be forgotten at once.

:func:`remembered` is :func:`functools.lru_cache` for a pure function of texts: an answer's
checks read one sentence or one conclusion many times (each check, each article it cites),
and read it once so. What is worked out of an article's own texts (its sections, their
sentences, everything it says: :func:`medlit.text.is_article_text`, named by the article's
view, :mod:`medlit.words.evidence`) is kept apart, per article, for every later answer that
cites it. :func:`forget` empties the memories of the answers' texts (the speed benchmark does
before each answer, to time it as if its texts were new); :func:`forget_articles` those of
the articles' (with their views).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from medlit.text import Bounded, is_article_text

__all__ = ["forget", "forget_articles", "remembered"]

_F = TypeVar("_F", bound=Callable[..., Any])
_MEMORIES: list[Any] = []
_KEPT: list[Bounded[tuple[Any, ...], Any]] = []
_NOT_KEPT = object()
#: Calls of one function kept for articles' texts; past it, the oldest half go (:class:`Bounded`).
KEPT_MAX = 16384


def remembered(maxsize: int = 8192) -> Callable[[_F], _F]:
    """A memory of ``maxsize`` calls for a pure function of hashable arguments; a call whose
    first argument is an article's text is kept apart (:func:`forget_articles`)."""

    def wrap(function: _F) -> _F:
        memory = functools.lru_cache(maxsize=maxsize)(function)
        kept: Bounded[tuple[Any, ...], Any] = Bounded(KEPT_MAX)

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                return memory(*args, **kwargs)
            found = kept.get(args, _NOT_KEPT)  # (only an article's texts are kept)
            if found is not _NOT_KEPT:
                return found
            if not args or not isinstance(args[0], str) or not is_article_text(args[0]):
                return memory(*args)
            found = kept[args] = function(*args)
            return found

        call.cache_clear = memory.cache_clear  # type: ignore[attr-defined]
        _MEMORIES.append(memory)
        _KEPT.append(kept)
        return call  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """Empty every memory made by :func:`remembered` of the answers' texts."""
    for memory in _MEMORIES:
        memory.cache_clear()


def forget_articles() -> None:
    """Empty every memory made by :func:`remembered` of the articles' texts."""
    for kept in _KEPT:
        kept.clear()
