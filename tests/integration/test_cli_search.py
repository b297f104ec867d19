"""medlit search and medlit corpus through the real CLI (CliRunner), against the fakes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlit.cli import app
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.fixtures import sample_articles
from tests.fakes.pubmed_render import articles_to_xml

runner = CliRunner()


@pytest.fixture
def fake(make_fake_eutils: Callable[..., FakeEutils]) -> FakeEutils:
    return make_fake_eutils(articles=sample_articles(), rate_limit=None)


def _env(fake: FakeEutils) -> dict[str, str]:
    return {
        "MEDLIT_PUBMED_BASE_URL": fake.base_url,
        "MEDLIT_PUBMED_BACKOFF_BASE_S": "0.01",
        "MEDLIT_PUBMED_TIMEOUT_S": "2",
    }


def test_search_json(fake: FakeEutils) -> None:
    result = runner.invoke(
        app, ["search", "aspirin", "--json", "--source", "pubmed"], env=_env(fake)
    )
    assert result.exit_code == 0, result.output
    articles = json.loads(result.stdout)
    assert [a["pmid"] for a in articles] == ["30000006", "30000001"]
    first = articles[1]
    for key in (
        "pmid",
        "title",
        "year",
        "journal",
        "publication_types",
        "abstract",
        "doi",
        "pmcid",
        "authors",
        "source",
    ):
        assert key in first
    assert first["abstract"].startswith("BACKGROUND: ") and first["year"] == 2019


def test_a_query_typed_without_quotes_is_the_same_query(fake: FakeEutils) -> None:
    pmids = []
    for words in (["aspirin stroke"], ["aspirin", "stroke"]):
        result = runner.invoke(
            app, ["search", *words, "--json", "--source", "pubmed"], env=_env(fake)
        )
        assert result.exit_code == 0, result.output
        pmids.append([a["pmid"] for a in json.loads(result.stdout)])
    assert pmids[0] == pmids[1] and pmids[0]


def test_search_table_limit_sort_and_years(fake: FakeEutils) -> None:
    result = runner.invoke(
        app,
        [
            "search",
            "aspirin OR statins",
            "-n",
            "2",
            "--sort",
            "pub_date",
            "--from-year",
            "2011",
            "--to-year",
            "2020",
        ],
        env={**_env(fake), "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "30000001" in result.stdout and "RCT" in result.stdout
    assert "30000006" not in result.stdout  # 2010: outside the range
    params = fake.requests("esearch")[0].params
    assert params["retmax"] == "2" and params["sort"] == "pub_date"


def test_every_source_failing_is_an_error_not_an_empty_list(fake: FakeEutils) -> None:
    fake.enqueue(Fault.status(500), times=10)
    env = {**_env(fake), "MEDLIT_PUBMED_MAX_RETRIES": "1"}
    result = runner.invoke(app, ["search", "aspirin", "--json"], env=env)
    assert result.exit_code == 5
    assert result.stdout == ""
    # The search ran and failed: one line that says so, with the source's own words.
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: the search failed, no source answered: pubmed: server error")
    assert line.endswith("after 2 tries")


def test_one_source_failing_is_a_warning_and_the_others_still_answer(
    fake: FakeEutils, fake_europepmc: FakeEuropePMC
) -> None:
    fake.enqueue(Fault.status(500), times=10)
    env = {
        **_env(fake),
        "MEDLIT_PUBMED_MAX_RETRIES": "1",
        "MEDLIT_EUROPEPMC_BASE_URL": fake_europepmc.base_url,
    }
    result = runner.invoke(
        app, ["search", "aspirin", "--json", "--source", "pubmed,europepmc"], env=env
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout), "Europe PMC's results are missing"
    assert "warning: pubmed error" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", ""], "the query is empty"),
        (["search", "x" * 2000 + "y"], "the limit is 2000"),
        (["search", "x", "--source", "scopus"], "unknown source 'scopus'"),
        (["search", "x", "--from-year", "2020", "--to-year", "2000"], "reversed"),
        (["search", "x", "--sort", "cited"], "unknown sort"),
        (["search", "x", "--limit", "0"], "the number of results must be at least 1 (got 0)"),
        (["search", "x", "--limit", "99999"], "the number of results must be at most 10000"),
    ],
)
def test_bad_input_exits_2_with_one_line(fake: FakeEutils, args: list[str], message: str) -> None:
    result = runner.invoke(app, args, env=_env(fake))
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert fake.history == []  # nothing sent


def test_corpus_add_stats_and_local_search(tmp_path: Path) -> None:
    good = tmp_path / "good.xml"
    good.write_bytes(articles_to_xml(sample_articles()))
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"<PubmedArticleSet><PubmedArticle>")
    result = runner.invoke(app, ["corpus", "add", str(broken), str(good), str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "added 6, updated 0, skipped 0 (2 of 3 files failed)" in result.stdout
    assert "broken.xml" in result.stderr and "no such file" in result.stderr
    again = runner.invoke(app, ["corpus", "add", str(good), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["skipped"] == 6
    stats = runner.invoke(app, ["corpus", "stats", "--json"])
    assert json.loads(stats.stdout)["articles"] == 6
    found = runner.invoke(app, ["search", "vitamin fracture", "--source", "local", "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)[0]["pmid"] == "30000004"


def test_corpus_add_sample_lets_a_newcomer_search_offline() -> None:
    from medlit.cli.corpus import sample_corpus_path

    path = sample_corpus_path()
    assert path.is_file() and path.stat().st_size < 200_000  # shipped inside the package
    added = runner.invoke(app, ["corpus", "add", "--sample", "--json"])
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["added"] == 60
    stats = runner.invoke(app, ["corpus", "stats", "--json"])
    assert json.loads(stats.stdout)["articles"] == 60
    found = runner.invoke(app, ["search", "statins atrial fibrillation", "-s", "local", "--json"])
    assert found.exit_code == 0, found.output
    assert "21881325" in [a["pmid"] for a in json.loads(found.stdout)]  # PubMedQA's own
    nothing = runner.invoke(app, ["corpus", "add"])
    assert nothing.exit_code == 2
    assert "give the files to add, or --sample" in nothing.stderr
