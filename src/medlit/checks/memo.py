"""What the checks remember of the texts they read (a sentence's stance, its content words),
kept in one place so that it can be forgotten at once.

:func:`remembered` is :func:`functools.lru_cache` for a pure function of texts: an answer's
checks read one sentence or one conclusion many times (each check, each article it cites),
and read it once so. :func:`forget` empties every such memory (the speed benchmark does
before each answer, to time it as if its texts were new).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["forget", "remembered"]

_F = TypeVar("_F", bound=Callable[..., Any])
_MEMORIES: list[Any] = []


def remembered(maxsize: int = 8192) -> Callable[[_F], _F]:
    """A memory of ``maxsize`` calls for a pure function of hashable arguments."""

    def wrap(function: _F) -> _F:
        memory = functools.lru_cache(maxsize=maxsize)(function)
        _MEMORIES.append(memory)
        return memory  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """Empty every memory made by :func:`remembered`."""
    for memory in _MEMORIES:
        memory.cache_clear()
