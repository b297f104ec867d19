"""A report's references for reference managers (Zotero, EndNote, Mendeley): RIS, BibTeX and
CSL-JSON.

Only the articles the report cites are exported (its numbered references, all of them
articles the job actually retrieved), in reference-number order, with what is known of each:
PMID, DOI, title, journal, year and authors. Authors come as PubMed gives them ("Smith JA"):
the initials become the given name; a collective name ("ESPRIT Study Group") stays whole.

::

    text = export_job(job, "ris")      # or "bibtex", "csl-json"
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from medlit.errors import ResearchError, ValidationError
from medlit.research.models import JobStatus, Reference, ResearchJob

__all__ = [
    "EXPORT_FORMATS",
    "ExportFormat",
    "ExportRecord",
    "export_job",
    "records_of",
    "to_bibtex",
    "to_csl_json",
    "to_ris",
]

ExportFormat = Literal["ris", "bibtex", "csl-json", "csv"]
EXPORT_FORMATS: dict[str, tuple[str, str]] = {
    "ris": ("application/x-research-info-systems", "ris"),
    "csv": ("text/csv", "csv"),
    "bibtex": ("application/x-bibtex", "bib"),
    "csl-json": ("application/vnd.citationstyles.csl+json", "json"),
}
"""Each format's media type and file extension."""

_INITIALS = re.compile(r"^[A-Z]{1,4}$")


@dataclass
class ExportRecord:
    """One reference, as the exports need it."""

    number: int
    title: str
    pmid: str | None = None
    doi: str | None = None
    journal: str | None = None
    year: int | None = None
    authors: list[str] = field(default_factory=list)
    url: str | None = None


def split_author(name: str) -> tuple[str, str] | None:
    """("Smith", "JA") of "Smith JA"; None for a collective name (kept whole)."""
    family, _, given = name.strip().rpartition(" ")
    if family and _INITIALS.match(given):
        return family, given
    return None


def records_of(job: ResearchJob) -> list[ExportRecord]:
    """The records of a job's report references (authors from the articles retrieved).

    Raises:
        ResearchError: the job has no report yet.
    """
    if job.report is None or job.status is not JobStatus.COMPLETED:
        raise ResearchError(
            f"research job {job.id} has no report to export yet (status {job.status.value})"
        )
    return [_record(ref, job) for ref in job.report.references]


def _record(ref: Reference, job: ResearchJob) -> ExportRecord:
    article = job.articles.get(ref.article_key)
    url = ref.url
    if ref.pmid and not url:
        url = f"https://pubmed.ncbi.nlm.nih.gov/{ref.pmid}/"
    return ExportRecord(
        number=ref.number,
        title=ref.title,
        pmid=ref.pmid,
        doi=ref.doi or (article.doi if article else None),
        journal=ref.journal or (article.journal if article else None),
        year=ref.year or (article.year if article else None),
        authors=list(article.authors) if article else [],
        url=url,
    )


def export_job(job: ResearchJob, fmt: str) -> str:
    """The job's references in ``fmt`` (``ris``, ``bibtex`` or ``csl-json``), or its
    evidence table (``csv``: a row per included study, each cell's text and quote).

    Raises:
        ValidationError: an unknown format.
        ResearchError: the job has no report yet.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValidationError(f"unknown export format {fmt!r}; use ris, bibtex, csl-json or csv")
    records = records_of(job)  # a job without its report has no table either
    if fmt == "csv":
        from medlit.research.evidence_table import rows_to_csv

        return rows_to_csv(job.evidence_table)
    if fmt == "ris":
        return to_ris(records)
    if fmt == "bibtex":
        return to_bibtex(records)
    return to_csl_json(records)


# -- RIS ---------------------------------------------------------------------------------------


def _ris_value(text: str) -> str:
    # A tag's value is one line: a newline inside it would start a bogus tag.
    return " ".join(text.split())


def to_ris(records: list[ExportRecord]) -> str:
    """RIS: one ``TY  - JOUR`` ... ``ER  - `` block per record (CRLF line ends, as the
    format's specification and EndNote expect)."""
    lines: list[str] = []
    for r in records:
        tags: list[tuple[str, str]] = [("TY", "JOUR"), ("ID", f"ref{r.number}")]
        tags += [("AU", _ris_author(a)) for a in r.authors if a.strip()]
        tags.append(("TI", r.title))
        if r.journal:
            tags += [("T2", r.journal), ("JO", r.journal)]
        if r.year:
            tags.append(("PY", str(r.year)))
        if r.doi:
            tags.append(("DO", r.doi))
        if r.pmid:
            tags.append(("AN", f"PMID:{r.pmid}"))
        if r.url:
            tags.append(("UR", r.url))
        lines += [f"{tag}  - {_ris_value(value)}" for tag, value in tags if _ris_value(value)]
        lines += ["ER  - ", ""]
    return "\r\n".join(lines)


def _ris_author(name: str) -> str:
    parts = split_author(name)
    return f"{parts[0]}, {parts[1]}" if parts else name


# -- BibTeX ------------------------------------------------------------------------------------

_BIBTEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _bib(text: str) -> str:
    """A field value safe inside braces: LaTeX specials escaped, braces balanced."""
    return "".join(_BIBTEX_SPECIAL.get(ch, ch) for ch in " ".join(text.split()))


def _bib_key(r: ExportRecord) -> str:
    if r.pmid and r.pmid.isdigit():
        return f"pmid{r.pmid}"
    return f"medlit{r.number}"


def to_bibtex(records: list[ExportRecord]) -> str:
    """BibTeX: one ``@article`` per record, keyed ``pmid<PMID>`` (``medlit<n>`` without one)."""
    entries: list[str] = []
    for r in records:
        fields: list[tuple[str, str]] = []
        if r.authors:
            fields.append(("author", " and ".join(_bib_author(a) for a in r.authors)))
        fields.append(("title", "{" + _bib(r.title) + "}"))  # keep the title's capitals
        if r.journal:
            fields.append(("journal", _bib(r.journal)))
        if r.year:
            fields.append(("year", str(r.year)))
        if r.doi:
            fields.append(("doi", _bib(r.doi)))
        if r.pmid:
            fields += [("pmid", _bib(r.pmid)), ("eprint", _bib(r.pmid)),
                       ("eprinttype", "pubmed")]  # fmt: skip
        if r.url:
            fields.append(("url", r.url.replace("{", "%7B").replace("}", "%7D")))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@article{{{_bib_key(r)},\n{body}\n}}\n")
    return "\n".join(entries)


def _bib_author(name: str) -> str:
    parts = split_author(name)
    if parts is None:
        return "{" + _bib(name) + "}"  # a collective name: one unit, not split into names
    family, given = parts
    return f"{_bib(family)}, {'. '.join(given)}."


# -- CSL-JSON ----------------------------------------------------------------------------------


def to_csl_json(records: list[ExportRecord]) -> str:
    """CSL-JSON: the array of items citation processors (and Zotero, Mendeley) read."""
    items: list[dict[str, object]] = []
    for r in records:
        item: dict[str, object] = {
            "id": f"pmid{r.pmid}" if r.pmid else f"medlit{r.number}",
            "type": "article-journal",
            "title": r.title,
        }
        if r.authors:
            item["author"] = [_csl_author(a) for a in r.authors]
        if r.journal:
            item["container-title"] = r.journal
        if r.year:
            item["issued"] = {"date-parts": [[r.year]]}
        if r.doi:
            item["DOI"] = r.doi
        if r.pmid:
            item["PMID"] = r.pmid
        if r.url:
            item["URL"] = r.url
        items.append(item)
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def _csl_author(name: str) -> dict[str, str]:
    parts = split_author(name)
    if parts is None:
        return {"literal": name}
    return {"family": parts[0], "given": parts[1]}
