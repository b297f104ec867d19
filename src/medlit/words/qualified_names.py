"""Names that a letter or a number tells apart: vitamin D / C, COX-1 / 2, type 1 / 2, HPV 16 / 18.

Embeddings and word overlap are nearly blind to them: "Is COX-2 inhibition safe after
surgery?" and "Is COX-1 inhibition safe after surgery?" embed almost alike, and a sentence about
"vitamin D supplementation" shares every word but one letter with an abstract about vitamin C.
Yet each pair names two different things, with different answers. This module reads such names
so that the answer cache (:mod:`medlit.cache.guard`), the ask flow's citations
(``misattributed-names``, :mod:`medlit.checks`) and the research verifier
(:func:`medlit.research.grounding.claim_supported`) can tell them apart.

A *qualified name* is a head and its qualifier:

- a head from :data:`WORD_HEADS` (vitamin, type, stage, grade, phase, class, level, factor,
  hepatitis, omega, sero/geno/subtype), then a space or hyphen and a capital letter with up to two
  digits (``vitamin B12``), a number (``type 2``) or a Roman numeral (``stage III``, read 3);
  "25-hydroxyvitamin D" is vitamin D;
- an all-capitals head of 2-5 letters, then a hyphen or nothing and a number, a Roman numeral, a
  Greek letter, or one or two capitals with up to two digits (``IL-6``, ``BRCA1``, ``CD4``,
  ``HIV-1``, ``PD-L1``, ``HLA-B27``); a space only after the viruses of :data:`SPACED_HEADS`
  (``HPV 16``), so "OR 2.1" or "BMI 30" are not names;
- lists and ranges share the head: "vitamins A, D and E", "types 1 and 2", "stage I-III"
  (1, 2 and 3), "HPV 16/18"; a comparison ("grade ≥3") matches every qualifier.

A number followed by a decimal part or a percent sign ("IL-6 2.5", "class 95%") is not a
qualifier. Hand-written: no library offers this, and biomedical NER models (scispaCy) cannot be
installed here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from medlit.words import data_lines, guarded

__all__ = [
    "SPACED_HEADS",
    "WORD_HEADS",
    "Names",
    "describe",
    "mismatched",
    "qualified_names",
    "qualifiers_match",
    "without_names",
]

#: Lower-case heads whose qualifier names a different thing (singular forms).
WORD_HEADS = tuple(data_lines("name_heads.txt"))
#: Capitalised heads that may stand a space before their number ("HPV 16", "HIV 1").
SPACED_HEADS = tuple(data_lines("spaced_heads.txt"))

Names = Mapping[str, frozenset[str]]
"""Head (lower case) to its qualifiers (upper case; ``*`` for "any": "grade ≥3")."""

_ROMAN = {
    "I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10,
    "XI": 11, "XII": 12, "XIII": 13,
}  # fmt: skip
_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ"}
_GREEK.update({letter: letter for letter in _GREEK.values()})
_END = r"(?![A-Za-z0-9]|-\d)"  # "IL-6 and IL-10": the list ends before the second IL
_NUM = r"\d{1,2}(?![.,]\d|\s?%|\d)"
_ROM = rf"(?:XI{{0,3}}|IX|IV|V?I{{1,3}}|V|X)[A-C]?{_END}"  # "IIIA": sub-stage A of 3
_GRK = r"(?:[αβγδ]|(?i:alpha|beta|gamma|delta))(?![A-Za-z])"
_CMP = r"(?:[≥≤<>]=?\s*)?"
_JOIN = r"\s*(?:,\s*(?:and|or)?|/|&|\band\b|\bor\b|-|–|\bto\b)\s*-?"
# After a word head: "D", "B12", "2", "III" (letters upper case, even when the head is not).
_WORD_QUAL = rf"{_CMP}(?:{_ROM}|{_NUM}|(?-i:[A-Z])\d{{0,2}}{_END})"
# After a capitals head and a hyphen: "6", "I", "α", "L1", "B27", "DR4".
_HYPHEN_QUAL = rf"{_CMP}(?:{_ROM}|{_NUM}|{_GRK}|[A-Z]{{1,2}}\d{{0,2}}{_END})"
# Straight after a capitals head ("BRCA1", "CD4", "TNFα") or a space after a virus ("HPV 16").
_TIGHT_QUAL = rf"(?:{_NUM}|{_GRK})"

_heads = "|".join(WORD_HEADS)
_WORD_NAME = re.compile(
    rf"(?<![A-Za-z])(?:[\d,]+-(?:di)?hydroxy)?(?P<head>{_heads})(?:e?s)?[ -]"
    rf"(?P<quals>{_WORD_QUAL}(?:{_JOIN}{_WORD_QUAL})*)",
    re.I,
)
_spaced = "|".join(SPACED_HEADS)
_CAPS_NAME = re.compile(
    rf"(?<![A-Za-z0-9-])(?P<head>[A-Z]{{2,5}})"
    rf"(?:-(?P<hyphen>{_HYPHEN_QUAL}(?:{_JOIN}{_HYPHEN_QUAL})*)"
    rf"|(?P<tight>{_TIGHT_QUAL}(?:{_JOIN}{_TIGHT_QUAL})*))"
)
_SPACED_NAME = guarded(
    rf"(?<![A-Za-z0-9-])(?P<head>{_spaced})\s(?P<quals>{_NUM}(?:{_JOIN}{_NUM})*)"
)
_QUAL_PART = re.compile(
    rf"(?P<sep>\b(?:and|or)\b|[,/&])|(?P<range>-|–|\bto\b)|(?P<cmp>[≥≤<>]=?\s*)?"
    rf"(?P<q>(?<![A-Za-z])(?:{_ROM}|{_GRK}|[A-Z]{{1,2}}\d{{0,2}}{_END})|\d{{1,2}})",
    re.I,
)
_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}  # ASCII only: "α" stays "α"


def _normal(qualifier: str) -> str:
    upper = qualifier.upper()
    if upper in _ROMAN:
        return str(_ROMAN[upper])
    if upper[:-1] in _ROMAN and upper[-1] in "ABC":
        return f"{_ROMAN[upper[:-1]]}{upper[-1]}"
    return _GREEK.get(qualifier.lower(), qualifier.upper())


def _qualifiers(text: str) -> set[str]:
    """The qualifiers of a matched list: "A, D and E", "I-III" (1, 2, 3), "≥3" (any)."""
    found: list[str] = []
    pending_range = after_sep = False
    for match in _QUAL_PART.finditer(text):
        if match.group("sep"):
            pending_range, after_sep = False, True
            continue
        if match.group("range"):  # "I-III", not "6 and -10"
            pending_range = bool(found) and not after_sep
            continue
        after_sep = False
        if match.group("cmp"):
            found.append("*")
        else:
            value = _normal(match.group("q"))
            if pending_range and found[-1].isdigit() and value.isdigit():
                low, high = int(found[-1]), int(value)
                if low < high <= low + 20:
                    found.extend(str(n) for n in range(low + 1, high))
            found.append(value)
        pending_range = False
    return set(found)


@lru_cache(maxsize=4096)
def qualified_names(text: str, fold_case: bool = False) -> Names:
    """The qualified names in ``text``: head to qualifiers (see the module docstring).

    Args:
        text: any text (a question, an answer sentence, an abstract).
        fold_case: read lower-case names too ("vitamin d", "il-6", "brca1"), as people type
            questions; off for written text, where "at this stage a patient" names nothing.
    """
    source = text.translate(_UPPER) if fold_case else text
    names: dict[str, set[str]] = {}
    for match in _WORD_NAME.finditer(source):
        names.setdefault(match.group("head").lower(), set()).update(
            _qualifiers(match.group("quals"))
        )
    for match in _CAPS_NAME.finditer(source):
        head = match.group("head").lower()
        if head in WORD_HEADS:
            continue
        quals = match.group("hyphen") or match.group("tight")
        names.setdefault(head, set()).update(_qualifiers(quals))
    for match in _SPACED_NAME.finditer(source):
        names.setdefault(match.group("head").lower(), set()).update(
            _qualifiers(match.group("quals"))
        )
    # Read-only: the mapping is shared by every caller of the cache.
    return MappingProxyType({head: frozenset(quals) for head, quals in names.items() if quals})


def without_names(text: str, *, in_place: bool = False) -> str:
    """``text`` with its qualified names blanked out ("type 1 diabetes" -> " diabetes"; with
    ``in_place``, each by as many spaces, every other character where it stood)."""
    for pattern in (_WORD_NAME, _CAPS_NAME, _SPACED_NAME):
        text = pattern.sub((lambda m: " " * len(m.group())) if in_place else " ", text)
    return text


def qualifiers_match(a: str, b: str) -> bool:
    """Whether two qualifiers of one head may name the same thing (D and D3 do; 1 and 10 not)."""
    if a == b or "*" in (a, b):
        return True
    short, long = sorted((a, b), key=len)
    if not long.startswith(short):
        return False
    rest = long[len(short) :]
    # "D" and "D3", "3" and "3A" (stage IIIA); never "1" and "10".
    return (short.isalpha() and rest.isdigit()) or (short.isdigit() and rest.isalpha())


def mismatched(claim: Names, source: Names) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """The heads ``claim`` qualifies otherwise than ``source`` does, with both sets.

    A head counts when the source names it too and none of the claim's qualifiers matches one
    of the source's ("vitamin D" against a source that speaks only of vitamin C). A head the
    source never names says nothing: the source may use another word for it.
    """
    found = []
    for head, quals in claim.items():
        other = source.get(head)
        if not other:
            continue
        if not any(qualifiers_match(q, o) for q in quals for o in other):
            found.append((head, quals, other))
    return found


def describe(head: str, quals: frozenset[str], text: str = "") -> str:
    """A name as people write it: "vitamin D", "IL-6", "type 1 or 2"; a capitals name as
    ``text`` writes it when it does ("BRCA1", "CD4", "HPV 16")."""
    named = sorted(q for q in quals if q != "*")
    if head in WORD_HEADS:
        return f"{head} {' or '.join(named) or '(any)'}"
    shown = [_written(head, q, text) or f"{head.upper()}-{q}" for q in named]
    return " or ".join(shown) or head.upper()


def _written(head: str, qual: str, text: str) -> str | None:
    if not text or not (qual.isalnum() and qual.isascii()):
        return None
    found = re.search(
        rf"(?<![A-Za-z]){re.escape(head)}[- ]?{re.escape(qual)}(?![A-Za-z0-9])", text, re.I
    )
    return found.group(0).upper() if found else None
