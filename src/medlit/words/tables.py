"""The word tables: data files of :mod:`medlit.words` (``words/data/``), each read once.

Every loader is cached (``functools.cache``): a table is read and parsed the first time it is
asked for, in any process, and never again. :func:`load` reads them all now (the cache guard
calls it when it is made, so that its first check is as fast as the others).
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib.resources import files
from typing import Any

try:  # re's own parser, private: a Python without it compiles the cues unguarded
    from re import _constants, _parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover (present in 3.11-3.13)
    _parser = None

__all__ = [
    "cue",
    "cue_group",
    "cue_pairs",
    "cue_source",
    "cue_words",
    "data_lines",
    "named_alike",
    "opposite_pairs",
    "stop_words",
    "synonym_groups",
    "word_set",
]


@cache
def _text(name: str) -> str:
    return files("medlit.words").joinpath("data", name).read_text(encoding="utf-8")


def data_lines(name: str) -> list[str]:
    """Lines of a table in ``words/data/``, without comments (``#``) and blank lines."""
    return [line.rstrip() for line in _text(name).splitlines() if line.strip() and line[0] != "#"]


_SET_HEADER = re.compile(r"^\[(?P<name>\w+)(?::(?P<base>[^\]]*))?\]$")


@cache
def _stop_sets() -> dict[str, frozenset[str]]:
    sets: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in data_lines("stop_words.txt"):
        header = _SET_HEADER.match(line.strip())
        if header is None:
            if current is None:
                raise ValueError(f"stop_words.txt: words before the first set: {line!r}")
            current.update(line.split())
            continue
        current = set()
        for part in (header["base"] or "").split():
            if part.startswith("-"):
                current.discard(part[1:])
            elif part in sets:
                current |= sets[part]
            else:
                raise ValueError(f"stop_words.txt: [{header['name']}] builds on unknown {part!r}")
        sets[header["name"]] = current
    return {name: frozenset(words) for name, words in sets.items()}


def stop_words(name: str) -> frozenset[str]:
    """The stop-word set ``name`` of ``stop_words.txt`` (``initials``, ``query``, ``topic``,
    ``search``, ``stance``, ``lay_question``, ``group_label``: see the file)."""
    try:
        return _stop_sets()[name]
    except KeyError:
        raise KeyError(f"no stop-word set {name!r}; sets: {sorted(_stop_sets())}") from None


@cache
def word_set(name: str) -> frozenset[str]:
    """The whitespace-separated words of a table (``drugs.txt``, ``findings.txt``)."""
    return frozenset(word for line in data_lines(name) for word in line.split())


@cache
def synonym_groups(name: str) -> tuple[tuple[str, ...], ...]:
    """The groups of a synonym table, one a line, tab-separated terms, the group's name (its
    canonical term) first: ``synonyms.tsv``, ``drug_names.tsv``, ``term_synonyms.tsv``."""
    groups = []
    for line in data_lines(name):
        terms = tuple(t.strip() for t in line.split("\t") if t.strip())
        if terms:
            groups.append(terms)
    return tuple(groups)


@cache
def opposite_pairs(reader: str) -> tuple[tuple[str, str], ...]:
    """The pairs of ``opposites.tsv`` that ``reader`` reads (``question``, ``numbers``), in the
    file's order."""
    pairs = []
    for line in data_lines("opposites.tsv"):
        a, b, readers = line.split("\t")
        if reader in readers.split():
            pairs.append((a, b))
    if not pairs:
        raise KeyError(f"opposites.tsv has no pair read by {reader!r}")
    return tuple(pairs)


@cache
def _cues() -> dict[str, Any]:
    return tomllib.loads(_text("cues.toml"))


def _cue_entry(name: str) -> dict[str, Any]:
    entry: Any = _cues()
    for part in _cue_path(name):
        if not isinstance(entry, dict) or part not in entry:
            raise KeyError(f"cues.toml has no cue {name!r}")
        entry = entry[part]
    if not isinstance(entry, dict):
        raise KeyError(f"cues.toml: {name!r} is not a cue")
    return entry


def _cue_path(name: str) -> list[str]:
    group, _, rest = name.partition(".")
    return [group, rest] if rest else [group]


def cue_source(name: str) -> str:
    """The regular expression of cue ``name`` (``"direction.rising"``), as text: for cues
    built into other patterns."""
    pattern = _cue_entry(name)["pattern"]
    return pattern if isinstance(pattern, str) else "".join(pattern)


@cache
def cue(name: str) -> re.Pattern[str]:
    """Cue ``name`` of ``cues.toml`` (``"negation.finding"``), compiled once (with a guard on
    its first letter where that helps, :func:`guarded`: the same matches)."""
    flags = re.IGNORECASE if _cue_entry(name).get("ignore_case") else 0
    return guarded(cue_source(name), flags)


#: Past this many possible first characters, a guard rejects too few places to pay.
_GUARD_MAX = 40


def guarded(source: str, flags: int = 0) -> re.Pattern[str]:
    """``source`` compiled, behind a lookahead for the characters any match of it starts
    with, when they are few and ``re`` has no literal prefix of its own to search for (a
    case-blind pattern, or one opening with an assertion or a choice). The lookahead takes
    nothing and every match starts with one of them: the matches are the same, but ``re``
    rejects most places of a text at once instead of trying each word of a cue there."""
    if _parser is None:
        return re.compile(source, flags)
    parsed = _parser.parse(source, flags)  # (compiled once: the plain one only if unguarded)
    first = _first_chars(list(parsed))
    if first is None or len(first) > _GUARD_MAX or parsed.state.flags & re.VERBOSE:
        return re.compile(source, flags)
    if not flags & re.IGNORECASE and next(iter(parsed))[0] is _constants.LITERAL:
        return re.compile(source, flags)  # re searches for its literal prefix itself
    try:
        fast = re.compile(f"(?=[{''.join(map(re.escape, sorted(first)))}])(?:{source})", flags)
    except re.error:  # global inline flags, which must open the pattern
        return re.compile(source, flags)
    return fast if dict(fast.groupindex) == parsed.state.groupdict else re.compile(source, flags)


def _first_chars(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The characters a match of the parsed pattern ``items`` can start with, or None when
    not known to be a few (an empty match, a class of characters, a wildcard)."""
    for op, arg in items:
        if op in (_constants.AT, _constants.ASSERT, _constants.ASSERT_NOT):
            continue  # takes no character
        if op is _constants.LITERAL:
            return {chr(arg)}
        if op is _constants.IN:
            chars = {chr(a) for o, a in arg if o is _constants.LITERAL}
            return chars if len(chars) == len(arg) else None
        if op is _constants.BRANCH:
            found = [_first_chars(list(branch)) for branch in arg[1]]
            if any(f is None for f in found):
                return None
            return set().union(*found)  # type: ignore[arg-type]
        if op is _constants.SUBPATTERN and not (arg[1] or arg[2]):
            sub = arg[3]
            return _first_chars(list(sub)) if sub.getwidth()[0] > 0 else None
        if op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT) and arg[0] >= 1:
            return _first_chars(list(arg[2]))
        return None
    return None


@cache
def cue_words(name: str) -> frozenset[str]:
    """The words of cue ``name`` (an entry with ``words``: ``"negation.scope_end"``)."""
    return frozenset(_cue_entry(name)["words"])


def cue_group(group: str) -> dict[str, re.Pattern[str]]:
    """Every cue of ``group`` (``"intent"``, ``"modality"``) by name, in the file's order."""
    return {name: cue(f"{group}.{name}") for name in _cues()[group]}


@cache
def cue_pairs(name: str) -> frozenset[frozenset[str]]:
    """The pairs of a cue list of pairs (``"intent_pairs.compatible"``), each a frozenset."""
    group, _, key = name.partition(".")
    return frozenset(frozenset(pair) for pair in _cues()[group][key])


@cache
def named_alike() -> tuple[tuple[re.Pattern[str], tuple[str, ...], tuple[str, ...]], ...]:
    """The things of ``named_alike.toml``: each, the pattern of its names (any case), the
    words a text naming it says too, and the strings one of which every name holds."""
    things = tomllib.loads(_text("named_alike.toml"))["thing"]
    out = []
    for thing in things:
        names = thing["names"] if isinstance(thing["names"], str) else "".join(thing["names"])
        letters = tuple(thing["letters"])
        out.append((re.compile(names, re.IGNORECASE), tuple(thing["says"]), letters))
    return tuple(out)
