"""Citations and verdicts in an answer's text.

The answer cites evidence as ``[PMID:123]`` (several in one bracket are accepted:
``[PMID:1, PMID:2]``, ``[PMID: 1; 2]``, and so are the forms small models write instead:
``(PMID: 123)``, ``[12345678]``, a bare ``PMID 12345678``, ``PMIDs 1, 2 and 3``, ids continuing
a list of citations ``[PMID:1], 2, and 3``, and a bare id equal to a retrieved article's PMID;
all are rewritten ``[PMID:n]``, so that no check reads them as numbers of the text).
:func:`enforce_citations` keeps only PMIDs of evidence actually retrieved for the answer; any
other is removed from the text and logged, never shown.
:func:`split_verdict` reads a yes/no answer's verdict (written last, after the reasoning) and
takes its line out, so that :func:`verdict_first` can show it first.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from medlit.log import get_logger
from medlit.text import only_points, sentence_pieces, sentence_starts
from medlit.words import guarded
from medlit.words.memo import remembered

__all__ = [
    "CitationCheck",
    "Verdict",
    "enforce_citations",
    "extract_pmids",
    "parse_verdict",
    "reasoned_verdict",
    "remove_citations",
    "remove_cited_for",
    "split_verdict",
    "verdict_first",
    "without_citations",
]

log = get_logger("agent.citations")

Verdict = Literal["yes", "no", "uncertain"]

# A citation of one or more PMIDs: [PMID:1], [PMID: 1, 2], [PMID:1; PMID:2], [PMIDs: 1,2], and
# what small models write instead: (PMID: 1), (PMIDs 1, 2 and 3), [12345678], a bare
# "PMID 12345678", "PMIDs 12345678, 23456789 and 34567890". A bracketed number shorter than
# six digits ("[12]") may be a reference to a list: it is no PMID.
_AND = r"(?:\s*[,;]\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+)"
_LIST = rf"\d+(?:{_AND}(?:PMID\s*:?\s*)?\d+)*"
# Where an id listed after another ends: the list goes on or stops ("..., 2 and 3)"), never
# into words ("PMID 12345678 and 200000 patients": a count).
_LISTED_END = r"(?=[ \t]*(?:[,;)\].!?\n]|(?:and|or)\b|&|$))"
_CITE = (
    rf"(?:\[\s*PMIDs?\s*:?\s*{_LIST}\s*\]|\(\s*PMIDs?\s*:?\s*{_LIST}\s*\)"
    r"|\[\s*\d{6,9}(?:\s*[,;]\s*\d{6,9})*\s*\]"
    rf"|\bPMIDs?\s*:?\s*\d{{5,9}}\b(?:{_AND}(?:PMID\s*:?\s*)?\d{{5,9}}\b{_LISTED_END})*)"
)
# Ids of six to nine digits continuing a list of citations: "[PMID:1], 36206626, and 11878590"
# (each a PMID, whether retrieved or not: the list says so).
_CONTINUED = re.compile(rf"(\[PMID:\d+\])((?:{_AND}\d{{6,9}}\b(?![.,]\d){_LISTED_END})+)")
# A citation list alone in parentheses, once rewritten: "([PMID:1][PMID:2])".
_PARENTHESISED = re.compile(r"\(\s*((?:\[PMID:\d+\])+)\s*\)")
# A bare id of seven or eight digits (not part of a longer number, a decimal or a marker).
_BARE_ID = re.compile(r"(?<![\d.,:/\-])\b\d{7,8}\b(?![.,]\d|\])")
_BRACKET = re.compile(rf"\s?{_CITE}", re.I)
# A statement has three words or more (not a heading, nor "Verdict: Yes").
_STATEMENT = re.compile(r"^(?!\W*verdict\b)\W*(?:[A-Za-z0-9][^\s]*\s+){2,}[A-Za-z0-9]", re.I)
# A line holding nothing but citations ("sentence.\n[PMID:1]"): they cite the line before.
_CITATION_LINE = re.compile(rf"[ \t]*(?:\n[ \t]*)+((?:{_CITE}[ \t]*)+)\.?[ \t]*(?=\n|$)", re.I)
_NUMBER = re.compile(r"\d+")

_VERDICT_LINE = re.compile(
    r"^(?:verdict|answer|bottom line|short answer)?\s*[:\-–]?\s*"
    # The word stands alone ("No.", "Yes,", "Uncertain"): "No effect was found" is a sentence.
    r"(yes|no|uncertain|unclear|maybe|inconclusive)\b(?=\s*(?:[.,:;!\u2013\u2014-]|$))",
    re.I,
)
# "Verdict: Yes", "Final verdict - no", "The verdict is uncertain", "Verdict = Yes.", and
# "Therefore, the answer is: No", 'the answer to the question "Is X ...?" is Yes.' (the word
# alone: "the answer is no longer clear" is not one).
_LABELLED = re.compile(
    r"\b(?:final\s+)?verdict\b\s*(?:is\s*)?[:=\-–]?\s*\W{0,3}"
    r"(yes|no|uncertain|unclear|maybe|inconclusive)\b"
    r"|\bthe\s+answer\s+(?:to\s+(?:the|this|your)\s+question\s+"
    r"(?:\"[^\"\n]{1,300}\"\s*|“[^”\n]{1,300}”\s*)?)?is\s*[:=\-–]?\s*\W{0,3}"
    r"(yes|no|uncertain|unclear|maybe|inconclusive)\b(?=\W{0,3}\s*(?:[.!]|$))",
    re.I,
)
_VERDICT_MAP: dict[str, Verdict] = {
    "yes": "yes",
    "no": "no",
    "uncertain": "uncertain",
    "unclear": "uncertain",
    "maybe": "uncertain",
    "inconclusive": "uncertain",
}


_CHECKED_CITATION = re.compile(r"\[PMID:\d+\]")


def without_citations(text: str) -> str:
    """``text`` with its checked citations (``[PMID:n]``) blanked: its own words, to read."""
    return _CHECKED_CITATION.sub(" ", text)


def extract_pmids(text: str) -> list[str]:
    """PMIDs cited in ``text``, in order of first appearance, without duplicates."""
    return list(_cited_pmids(text))


@remembered(16384)
def _cited_pmids(text: str) -> tuple[str, ...]:
    """:func:`extract_pmids`, read once a text (every check reads each sentence's)."""
    found: dict[str, None] = {}
    for match in _BRACKET.finditer(text):
        found.update(dict.fromkeys(_NUMBER.findall(match.group(0))))
    return tuple(found)


def citation_only_changes(lines: Sequence[Sequence[str]]) -> dict[tuple[int, int], str]:
    """What the ``citation-only`` check makes of the sentences of ``lines`` (each line's
    sentences): (line, sentence) -> its new text, ``""`` for a pointing sentence left out."""
    pieces = [(piece, extract_pmids(piece)) for line in lines for piece in line]
    pointing = {piece for piece, pmids in pieces if pmids and only_points(_BRACKET.sub(" ", piece))}
    if not pointing:
        return {}
    said = {pmid for piece, pmids in pieces if piece not in pointing for pmid in pmids}
    last: tuple[int, int] | None = None  # (line, piece) of the last statement
    changes: dict[tuple[int, int], str] = {}
    for row, line in enumerate(lines):
        for col, piece in enumerate(line):
            if piece not in pointing:
                if _STATEMENT.match(_BRACKET.sub(" ", piece)):
                    last = (row, col)
                continue
            moved = [p for p in dict.fromkeys(extract_pmids(piece)) if p not in said]
            if moved and last is None:
                continue  # nothing before it to have been cited for
            if moved and last is not None:
                changes[last] = _cited_at_end(changes.get(last, lines[last[0]][last[1]]), moved)
                said.update(moved)
            changes[(row, col)] = ""
    return changes


def citation_only_text(
    lines: Sequence[Sequence[str]], changes: Mapping[tuple[int, int], str]
) -> str:
    """The text of ``lines`` with ``changes`` (:func:`citation_only_changes`) made: a line
    that lost a sentence loses its trailing space, and no paragraph is left empty."""
    folded = sum(1 for new in changes.values() if not new)
    if not folded:
        return "\n".join("".join(line) for line in lines)
    log.info("citation_only_sentences_dropped", sentences=folded)
    rows = [
        [changes.get((r, c), piece) for c, piece in enumerate(line)] for r, line in enumerate(lines)
    ]
    kept = "\n".join("".join(line).rstrip() if "" in line else "".join(line) for line in rows)
    return re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", kept).rstrip()  # no paragraph left empty


def _cited_at_end(sentence: str, pmids: Sequence[str]) -> str:
    """``sentence`` with ``[PMID:n]`` markers for ``pmids`` before its closing stop."""
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else ""
    marks = "".join(f"[PMID:{pmid}]" for pmid in pmids)
    head = body[: len(body) - len(end)].rstrip()
    space = "" if head.endswith("]") else " "  # "[PMID:1][PMID:2]", as enforce_citations writes
    return f"{head}{space}{marks}{end}{sentence[len(body) :]}"


@dataclass
class CitationCheck:
    """An answer after its citations were checked against the evidence."""

    text: str
    cited: list[str] = field(default_factory=list)  # kept PMIDs, first appearance first
    removed: list[str] = field(default_factory=list)  # PMIDs stripped: not in the evidence
    # Why the evidence digest answers instead, when the checks left nothing to stand on:
    # (the digest's heading reason, the warning under the answer)
    digest_instead: tuple[str, str] | None = None


# "... (P<0.05). [PMID:1]" and "A. [PMID:1] B.": citations written after a sentence's full
# stop belong inside it. Not after an abbreviation: "Smith et al. [PMID:1] found" goes on.
_TRAILING_CITES = re.compile(r"([.!?])[ \t]*((?:\[PMID:\d+\])+)[ \t]*(?=$|[ \t]+[^\sa-z])", re.M)


def enforce_citations(text: str, allowed: Collection[str]) -> CitationCheck:
    """Strip every cited PMID that is not in ``allowed`` (the retrieved evidence).

    A bracket keeps its valid PMIDs (rewritten as ``[PMID:1][PMID:2]``); a bracket with none
    left disappears with the space before it. Citations written after a sentence's full stop,
    or on a line of their own after it, move before it ("(P<0.05). [PMID:1]" reads
    "(P<0.05) [PMID:1]."), and citations the answer opens with move to the end of its first
    sentence, so that every check reads them with the sentence they cite.
    """
    allowed_set = set(allowed)
    cited: list[str] = []
    removed: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        pmids = _NUMBER.findall(match.group(0))
        keep = [p for p in pmids if p in allowed_set]
        for pmid in pmids:
            bucket = cited if pmid in allowed_set else removed
            if pmid not in bucket:
                bucket.append(pmid)
        lead = match.group(0)[0] if match.group(0)[0].isspace() else ""
        if not keep:
            return lead + "A study" if _a_subject(match) else ""
        return lead + "".join(f"[PMID:{p}]" for p in dict.fromkeys(keep))

    def continued(match: re.Match[str]) -> str:
        pmids = _NUMBER.findall(match.group(2))
        for pmid in pmids:
            bucket = cited if pmid in allowed_set else removed
            if pmid not in bucket:
                bucket.append(pmid)
        kept = [p for p in pmids if p in allowed_set]
        return match.group(1) + "".join(f"[PMID:{p}]" for p in dict.fromkeys(kept))

    def retrieved(match: re.Match[str]) -> str:
        pmid = match.group(0)
        if pmid not in allowed_set:
            return pmid  # a number of the text, for the numbers checks to read
        if pmid not in cited:
            cited.append(pmid)
        return f"[PMID:{pmid}]"

    text = _CITATION_LINE.sub(r" \1", text)
    text = _BRACKET.sub(rewrite, text)
    text = _CONTINUED.sub(continued, text)
    # A bare number equal to the PMID of an article retrieved for this answer is its citation.
    text = _BARE_ID.sub(retrieved, text)
    text = _PARENTHESISED.sub(r"\1", text)
    new_text = _TRAILING_CITES.sub(r" \2\1", text)
    new_text = _leading_cites_to_end(new_text)
    if removed:
        log.warning("citation_removed", pmids=removed, reason="not_in_retrieved_evidence")
    return CitationCheck(text=new_text, cited=cited, removed=removed)


def _a_subject(match: re.Match[str]) -> bool:
    """Whether the citation ``match`` is its sentence's subject: first on its line (after a
    list bullet, if any), a lower-case word after it ("[PMID:1] found that ...")."""
    line = match.string[: match.start()].rsplit("\n", 1)[-1]
    after = match.string[match.end() :]
    return (
        re.fullmatch(r"\s*(?:[-*•]\s*)?", line) is not None
        and re.match(r"[ \t]+[a-z]", after) is not None
    )


# An answer that opens with its citation: "[PMID:1] Delayed diagnosis ... years."
_LEADING_CITES = re.compile(r"\s*((?:\[PMID:\d+\])+)[ \t]+(?=[A-Z])")


def _leading_cites_to_end(text: str) -> str:
    """``text`` with the citations it opens with moved to the end of its first sentence,
    which they cite ("[PMID:1] Delayed diagnosis appears to be common ..."). A sentence
    after another's full stop keeps what precedes it: such a citation belongs to the sentence
    before (see above)."""
    match = _LEADING_CITES.match(text)
    if match is None:
        return text
    rest = text[match.end() :]
    first = sentence_pieces(rest)[0] if rest.strip() else ""
    body = first.rstrip()
    if not body:
        return text
    end = body[-1] if body[-1] in ".!?" else ""
    moved = f"{body[: len(body) - len(end)].rstrip()} {match.group(1)}{end}"
    return moved + rest[len(body) :]


# What joins citations in a list: ", ", " and ", ", and ", " or ", " & ".
_JOINER = r"(?:\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or|&)\s+)"


@functools.lru_cache(maxsize=4096)
def _citation_patterns(pmid: str) -> tuple[re.Pattern[str], ...]:
    """The patterns :func:`remove_citations` takes ``pmid``'s markers out with, compiled once
    (the ``re`` module's own cache holds 512: an answer's dozens of PMIDs overflow it)."""
    return (
        re.compile(rf"\[PMID:{pmid}\]{_JOINER}(?=\[PMID:\d+\])"),
        re.compile(rf"(\[PMID:\d+\]){_JOINER}\[PMID:{pmid}\]"),
        re.compile(rf"^(\s*(?:[-*•]\s+)?)\[PMID:{pmid}\][ \t]+(?=[a-z])"),
        re.compile(rf"(\s?)\[PMID:{pmid}\](?=(\[?))"),
    )


def _kept_space(match: re.Match[str]) -> str:
    return match.group(1) if match.group(2) else ""


def remove_citations(sentence: str, pmids: Collection[str]) -> str:
    """``sentence`` without its ``[PMID:n]`` markers for ``pmids``, or ``""`` when it then
    cites nothing ("fractures [PMID:1][PMID:2]" keeps the space before the marker kept).

    A marker that is the sentence's subject ("[PMID:1] found that ... [PMID:2].") becomes "A
    study", so that what is left reads as a sentence ("A study found that ... [PMID:2].").
    """
    for pmid in pmids:
        listed, listed_after, subject, marker = _citation_patterns(pmid)
        # One of a list ("the studies [PMID:1] and [PMID:2] both found"): its joiner goes too,
        # so "the studies [PMID:1] both found" reads, not "the studies [PMID:1] and both found".
        sentence = listed.sub("", sentence)
        sentence = listed_after.sub(r"\1", sentence)
        # The sentence's subject ("[PMID:1] found that ..."): "A study found that ...".
        sentence = subject.sub(r"\1A study ", sentence)
        sentence = marker.sub(_kept_space, sentence)
    return sentence if extract_pmids(sentence) else ""


def remove_cited_for(sentence: str, wrong: Sequence[tuple[str, str]]) -> tuple[str, list[str]]:
    """``sentence`` without its citations of the ``(pmid, why)`` pairs in ``wrong``, and a
    warning for each: "a citation was removed: it cited PMID n for <why>" ("a sentence was left
    out: ..." when it then cites nothing, and is ``""``)."""
    kept = remove_citations(sentence, [pmid for pmid, _ in wrong])
    what = "a citation was removed" if kept else "a sentence was left out"
    return kept, [f"{what}: it cited PMID {pmid} for {why}" for pmid, why in wrong]


def parse_verdict(answer: str) -> Verdict | None:
    """The verdict of an answer (see :func:`split_verdict`), or None."""
    return split_verdict(answer)[0]


def _find_verdict(lines: list[str]) -> tuple[int, Verdict, re.Match[str]] | None:
    """Where the verdict is stated: (line index, verdict, the match in the cleaned line).

    A labelled verdict wins over an opening word, and the last labelled one over earlier ones
    (the model may restate the question's options first).
    """
    for index in range(len(lines) - 1, -1, -1):
        match = _LABELLED.search(_clean(lines[index]))
        if match is not None:
            return index, _VERDICT_MAP[(match.group(1) or match.group(2)).lower()], match
    for index, line in enumerate(lines):
        cleaned = _clean(line)
        if not cleaned:
            continue
        match = _VERDICT_LINE.match(cleaned)
        if match is None:
            return None
        return index, _VERDICT_MAP[match.group(1).lower()], match
    return None


def split_verdict(answer: str) -> tuple[Verdict | None, str]:
    """The answer's verdict, and its text without the line that only stated it.

    The answer prompt asks the model to reason first and end with ``Verdict: Yes|No|Uncertain``
    (a small model that must commit in its first word says "Yes" to nearly everything). Models
    write that line many ways (``**Verdict:** no``, ``Final verdict - Uncertain.``, ``The
    verdict is yes``), and sometimes open with the verdict instead (``Yes``, ``**No.** The
    trials...``); both are read (:func:`reasoned_verdict` trusts only the first kind).

    Returns:
        ``(verdict, text)``: ``text`` lacks the verdict line when that line held nothing else;
        ``(None, answer)`` when no verdict is stated.
    """
    lines = _label_joined(answer.splitlines())
    found = _find_verdict(lines)
    if found is None:
        return None, answer
    return _without_verdict_line(lines, *found)


_LABEL_END = guarded(r"(?:\bverdict(?:\s+is)?|\bthe\s+answer\s+is)\s*[:=\-–]?\s*\W{0,3}$", re.I)


def _label_joined(lines: list[str]) -> list[str]:
    """``lines`` with a label ending one line ("Therefore, the answer is:") joined to the
    verdict word standing alone on the next ("No"), as a small model may write them."""
    joined: list[str] = []
    for line in lines:
        if (
            joined
            and _LABEL_END.search(_clean(joined[-1]))
            and _VERDICT_LINE.fullmatch(_clean(line).rstrip(".!"))
        ):
            joined[-1] = f"{joined[-1].rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return joined


# What leads in to a verdict label on its line: "Therefore, the answer is: Verdict: Yes".
_LEAD_IN = re.compile(
    r"^(?:(?:therefore|thus|so|hence|overall|in\s+(?:conclusion|summary))\W+)?"
    r"(?:(?:the|my)\s+(?:final\s+)?(?:answer|verdict)\s+is)\W*$",
    re.I,
)


def _without_verdict_line(
    lines: list[str], index: int, verdict: Verdict, match: re.Match[str]
) -> tuple[Verdict, str]:
    cleaned = _clean(lines[index])
    rest = (cleaned[: match.start()] + cleaned[match.end() :]).strip(" .:;-–")
    rest = _LEAD_IN.sub("", rest)  # "Therefore, the answer is: Verdict: Yes"
    if len(rest.split()) <= 2:  # the line only stated the verdict: it moves to the top
        lines = _without_lead_in(lines[:index]) + lines[index + 1 :]
    elif not cleaned[match.end() :].strip(" .!"):
        # "... in certain populations. The verdict is: Yes": the last sentence only stated
        # the verdict, which moves to the top; the sentences before it stay.
        start = max((0, *(cut for cut in sentence_starts(cleaned) if cut <= match.start())))
        if len(_LEAD_IN.sub("", cleaned[start : match.start()].strip(" .:;-–")).split()) <= 2:
            line = lines[index]
            kept = line[: _in_line(line, start)].rstrip().rstrip("*_").rstrip()
            lines = [*lines[:index], kept, *lines[index + 1 :]]
    return verdict, "\n".join(lines).strip()


_QUOTES = {'"': '"', "\u201c": "\u201d"}


def _without_lead_in(lines: list[str]) -> list[str]:
    """``lines`` without a last sentence that only led in to the verdict line removed after it.

    "Therefore, the answer to the question "Does X help?" is:" would end the answer in
    mid-air once its verdict moved to the top. Only a short (at most 40 words) last sentence
    ending in a colon goes; a question mark inside quotes does not end a sentence.
    """
    last = max((i for i, line in enumerate(lines) if line.strip()), default=None)
    if last is None or not lines[last].rstrip().endswith(":"):
        return lines
    line = lines[last].rstrip()
    start, closing = 0, None
    for i, char in enumerate(line[:-1]):
        if closing is not None:
            closing = None if char == closing else closing
        elif char in _QUOTES:
            closing = _QUOTES[char]
        elif char in ".!?" and line[i + 1] == " ":
            start = i + 1
    if len(line[start:].split()) > 40:
        return lines
    kept = line[:start].rstrip()
    return [*lines[:last], *([kept] if kept else [])]


def reasoned_verdict(answer: str) -> tuple[Verdict | None, str]:
    """The verdict only when it comes after the reasoning, and the text without it.

    A verdict the model opened with ("Yes. The evidence shows that X does not ...") was
    committed before the evidence was read back, which is where a small model says yes to
    nearly everything: it is dropped from the text and not trusted (``None``), so the caller
    asks which way the written reasoning concludes (:func:`medlit.checks.verdict.read_verdict`).

    Returns:
        ``(verdict, text)`` as :func:`split_verdict` for a verdict stated after some
        reasoning; ``(None, text without the opening verdict)`` otherwise.
    """
    lines = _label_joined(answer.splitlines())
    found = _find_verdict(lines)
    if found is None:
        return None, answer
    index, verdict, match = found
    first = next(i for i, line in enumerate(lines) if _clean(line))
    # After some reasoning: on a later line, or after sentences of the first ("It helps
    # [PMID:1]. Verdict: No.", a one-line answer, whose reasoning must not go with it).
    if index > first or len(_clean(lines[index])[: match.start()].split()) >= 3:
        # The opening word goes too: "Yes. Trials found no effect" under "Verdict: No".
        verdict, text = _without_verdict_line(lines, index, verdict, match)
        lines = text.splitlines()
        top = next((i for i, line in enumerate(lines) if _clean(line)), None)
        opening = _VERDICT_LINE.match(_clean(lines[top])) if top is not None else None
        if top is None or opening is None:
            return verdict, text
        return verdict, _without_opening(lines, top, opening)
    return None, _without_opening(lines, index, match)


def _without_opening(lines: list[str], index: int, match: re.Match[str]) -> str:
    """The text without the verdict word line ``index`` opens with."""
    line = lines[index]
    rest = line[_in_line(line, match.end()) :].lstrip(" .,:;!-–—*_")
    first_word = rest.split(maxsplit=1)[0] if rest else ""
    # "Yes, double balloon ...", "Yes, liquid-based ..." ("mRNA" stays)
    if first_word.replace("-", "").isalpha() and first_word.islower():
        rest = rest[0].upper() + rest[1:]
    lines = [*lines[:index], *([rest] if rest else []), *lines[index + 1 :]]
    return "\n".join(lines).strip()


def verdict_first(verdict: Verdict, text: str) -> str:
    """The answer with its verdict as the opening line (``Verdict: Yes``, then the reasoning)."""
    return f"Verdict: {verdict.capitalize()}\n\n{text.strip()}"


_MARKUP = frozenset("*_#>`")


def _clean(line: str) -> str:
    """``line`` without Markdown markup (emphasis, headings, quotes), for reading a verdict."""
    return "".join(c for c in line if c not in _MARKUP).strip()


def _in_line(line: str, position: int) -> int:
    """Where in ``line`` the character at ``position`` of :func:`_clean` ``(line)`` is (the
    end of the line for the cleaned text's end). What is kept of a line is cut from the line
    itself: "p>0.05" and "size>2 cm" keep their signs."""
    kept = [i for i, c in enumerate(line) if c not in _MARKUP]
    text = "".join(line[i] for i in kept)
    kept = kept[len(text) - len(text.lstrip()) :]
    return kept[position] if position < len(kept) else len(line)
