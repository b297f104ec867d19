"""RIS, BibTeX and CSL-JSON exports of a report's references, parsed back by independent
readers (rispy, bibtexparser, json), with hostile titles and names."""

from __future__ import annotations

import json

import bibtexparser
import pytest
import rispy

from medlit.errors import ResearchError, ValidationError
from medlit.research.exports import export_job, split_author
from medlit.research.models import JobStatus, NarrativeReport, Reference, ResearchJob
from medlit.types import Article

TITLE = "Aspirin {50%} & clopidogrel_x: $cost #1 ~ ^ \\ in\nstroke\r\nTY  - FAKE"


def _job() -> ResearchJob:
    articles = {
        "pmid:1": Article(pmid="1", doi="10.1/a_b", title=TITLE, journal="J & Stroke",
                          year=2020, authors=["van der Berg JA", "ESPRIT Study Group", "Ng K"]),
        "doi:10.2/x": Article(doi="10.2/x", title="No PMID here", year=None, authors=[]),
    }  # fmt: skip
    refs = [
        Reference(number=1, article_key="pmid:1", pmid="1", doi="10.1/a_b", title=TITLE,
                  journal="J & Stroke", year=2020),
        Reference(number=2, article_key="doi:10.2/x", doi="10.2/x", title="No PMID here"),
    ]  # fmt: skip
    report = NarrativeReport(title="t", question="q", executive_summary="s", references=refs)
    return ResearchJob(question="q", status=JobStatus.COMPLETED, report=report,
                       articles=articles)  # fmt: skip


def test_ris_one_record_per_reference_with_single_line_values() -> None:
    text = export_job(_job(), "ris")
    records = rispy.loads(text)
    assert len(records) == 2
    first, second = records
    assert first["type_of_reference"] == "JOUR"
    assert first["title"] == " ".join(TITLE.split())  # the newline cannot start a fake tag
    assert first["authors"] == ["van der Berg, JA", "ESPRIT Study Group", "Ng, K"]
    assert first["doi"] == "10.1/a_b" and first["year"] == "2020"
    assert first["accession_number"] == "PMID:1"
    assert first["urls"] == ["https://pubmed.ncbi.nlm.nih.gov/1/"]
    assert "authors" not in second and "doi" in second
    assert text.count("\r\nER  - ") == 2


def test_bibtex_escapes_latex_specials_and_keeps_groups_whole() -> None:
    library = bibtexparser.parse_string(export_job(_job(), "bibtex"))
    assert not library.failed_blocks
    assert [e.key for e in library.entries] == ["pmid1", "medlit2"]
    fields = library.entries[0].fields_dict
    assert fields["author"].value == "van der Berg, J. A. and {ESPRIT Study Group} and Ng, K."
    title = fields["title"].value
    for special in ("\\{50\\%\\}", "\\&", "clopidogrel\\_x", "\\$cost", "\\#1",
                    "\\textasciitilde{}", "\\textasciicircum{}", "\\textbackslash{}"):  # fmt: skip
        assert special in title
    assert "\n" not in title
    assert fields["journal"].value == "J \\& Stroke"
    assert fields["doi"].value == "10.1/a\\_b"


def test_csl_json_is_valid_with_names_split() -> None:
    items = json.loads(export_job(_job(), "csl-json"))
    assert items[0]["title"] == TITLE  # JSON carries any text as it is
    assert items[0]["author"] == [
        {"family": "van der Berg", "given": "JA"},
        {"literal": "ESPRIT Study Group"},
        {"family": "Ng", "given": "K"},
    ]
    assert items[0]["issued"] == {"date-parts": [[2020]]} and items[0]["PMID"] == "1"
    assert items[1]["id"] == "medlit2" and "PMID" not in items[1]


def test_unknown_format_and_unfinished_job_are_refused() -> None:
    with pytest.raises(ValidationError):
        export_job(_job(), "endnote-xml")
    with pytest.raises(ResearchError, match="no report"):
        export_job(ResearchJob(question="q"), "ris")


@pytest.mark.parametrize(
    ("name", "parts"),
    [("Smith J", ("Smith", "J")), ("Smith", None), ("WHO Group", None),
     ("de Souza MC", ("de Souza", "MC"))],
)  # fmt: skip
def test_split_author(name: str, parts: tuple[str, str] | None) -> None:
    assert split_author(name) == parts


def test_cli_export(settings: object, monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from medlit.cli import app
    from medlit.config import Settings
    from medlit.research.runtime import open_job_store

    assert isinstance(settings, Settings) and isinstance(tmp_path, Path)
    jobs, db = open_job_store(settings)
    try:
        job = _job()
        jobs.insert(job)
        pending = ResearchJob(question="later")
        jobs.insert(pending)
    finally:
        db.close()
    monkeypatch.setenv("MEDLIT_HOME", str(settings.home))
    runner = CliRunner()
    result = runner.invoke(app, ["research", "export", job.id, "--format", "csl-json"])
    assert result.exit_code == 0, result.output
    assert [item["id"] for item in json.loads(result.stdout)] == ["pmid1", "medlit2"]
    out = tmp_path / "refs.ris"
    result = runner.invoke(app, ["research", "export", job.id[:5], "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(rispy.loads(out.read_text(encoding="utf-8"))) == 2
    assert "\r\n" in out.read_bytes().decode()
    refused = runner.invoke(app, ["research", "export", pending.id])
    assert refused.exit_code == 8 and "no report" in refused.stderr
    unknown = runner.invoke(app, ["research", "export", job.id, "--format", "xml"])
    assert unknown.exit_code == 2


@pytest.mark.parametrize("fmt", ["ris", "bibtex", "csl-json"])
def test_cli_export_of_a_report_without_references_is_refused(
    settings: object, monkeypatch: pytest.MonkeyPatch, tmp_path: object, fmt: str
) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from medlit.cli import app
    from medlit.config import Settings
    from medlit.research.runtime import open_job_store

    assert isinstance(settings, Settings) and isinstance(tmp_path, Path)
    report = NarrativeReport(title="t", question="q", executive_summary="s", references=[])
    job = ResearchJob(question="q", status=JobStatus.COMPLETED, report=report)
    jobs, db = open_job_store(settings)
    try:
        jobs.insert(job)
    finally:
        db.close()
    monkeypatch.setenv("MEDLIT_HOME", str(settings.home))
    out = tmp_path / "refs.out"
    result = CliRunner().invoke(
        app, ["research", "export", job.id, "--format", fmt, "--out", str(out)]
    )
    assert result.exit_code == 4
    assert result.stdout == "" and not out.exists()
    assert result.stderr.strip().splitlines() == [
        f"error: job {job.id} has no references to export: its report cites no article "
        "(nothing written)"
    ]
