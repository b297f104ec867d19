"""MEDLINE text records (efetch ``rettype=medline``, PubMed's "save as MEDLINE") as Articles.

A record is a block of ``TAG - value`` lines (tags are up to four characters, padded to four,
then ``- ``); a value continues on following lines indented by six spaces; records are separated
by blank lines. Structured abstracts keep their labels inline (``BACKGROUND: ... RESULTS: ...``)
and are split back into sections.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from medlit.errors import SourceResponseError
from medlit.types import AbstractSection, Article, SourceName

__all__ = ["iter_medline_records", "parse_medline", "record_to_article"]

_LINE = re.compile(r"^([A-Z][A-Z0-9 ]{1,3})- ?(.*)$")
_YEAR = re.compile(r"\b(1[6-9]\d\d|20\d\d)\b")
# A label: capitals (and a few joiners) then a colon, at the start or after a sentence end.
_LABEL = re.compile(r"(?:^|(?<=[.!?)\]]\s))([A-Z][A-Z /&,-]{2,40}):\s")


def _not_medline(number: int, line: str) -> str:
    # Text is quoted so the user sees the culprit; a binary file's bytes are never echoed.
    sample = line[:60]
    if all(ch.isprintable() for ch in sample) and "\ufffd" not in sample:
        return f"line {number} is not a MEDLINE line: {sample!r}"
    return f"line {number} is not a MEDLINE line (binary data: not PubMed XML or MEDLINE text)"


def iter_medline_records(lines: Iterable[str]) -> Iterator[dict[str, list[str]]]:
    """Records as ``{tag: [values...]}`` (continuation lines joined to their value)."""
    record: dict[str, list[str]] = {}
    last_tag: str | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            if record:
                yield record
            record, last_tag = {}, None
            continue
        if line.startswith("      ") and last_tag is not None:
            record[last_tag][-1] += " " + line.strip()
            continue
        match = _LINE.match(line)
        if match is None:
            raise SourceResponseError(_not_medline(number, line), source="local")
        last_tag = match.group(1).strip()
        record.setdefault(last_tag, []).append(match.group(2).strip())
    if record:
        yield record


def _split_abstract(text: str) -> list[AbstractSection]:
    if not text:
        return []
    if not _LABEL.match(text):
        return [AbstractSection(text=text)]
    pieces = _LABEL.split(text)
    sections = []
    for i in range(1, len(pieces) - 1, 2):
        body = pieces[i + 1].strip()
        if body:
            sections.append(AbstractSection(label=pieces[i].strip(), text=body))
    return sections


def _tagged_id(values: list[str], kind: str) -> str | None:
    for value in values:
        if value.endswith(f"[{kind}]"):
            return value[: -len(kind) - 2].strip()
    return None


def record_to_article(record: dict[str, list[str]], *, source: SourceName = "local") -> Article:
    """One MEDLINE record (as from :func:`iter_medline_records`) as an :class:`Article`."""

    def first(tag: str) -> str | None:
        values = record.get(tag)
        return values[0] if values else None

    pmid = first("PMID")
    if not pmid:
        raise SourceResponseError("MEDLINE record without PMID", source=source)
    date = first("DP")
    year_match = _YEAR.search(date or "")
    doi = _tagged_id(record.get("AID", []), "doi") or _tagged_id(record.get("LID", []), "doi")
    return Article(
        pmid=pmid,
        doi=doi.lower() if doi else None,
        pmcid=first("PMC"),
        title=first("TI") or first("BTI") or "",
        abstract=_split_abstract(first("AB") or ""),
        authors=record.get("AU", []) or record.get("CN", []),
        journal=first("JT") or first("TA"),
        pub_date=date,
        year=int(year_match.group(1)) if year_match else None,
        publication_types=record.get("PT", []),
        mesh_terms=[m.split("/")[0].lstrip("*") for m in record.get("MH", [])],
        keywords=record.get("OT", []),
        language=first("LA"),
        source=source,
        is_book="BTI" in record and "TI" not in record,
    )


def parse_medline(text: str, *, source: SourceName = "local") -> list[Article]:
    """Every record of a MEDLINE text document.

    Raises:
        SourceResponseError: a line that is not MEDLINE, or a record without a PMID.
    """
    return [record_to_article(r, source=source) for r in iter_medline_records(text.splitlines())]
