"""Abbreviations spelled out as the cited articles define them."""

from __future__ import annotations

from medlit.checks import extract_pmids
from medlit.types import AbstractSection, Article
from medlit.words.defined_terms import article_definitions
from medlit.words.defined_terms import spell_out as spell_out_cited


def _article(pmid: str, text: str) -> Article:
    return Article(pmid=pmid, title=f"Trial {pmid}", abstract=[AbstractSection(text=text)])


def spell_out(text: str, articles: dict[str, Article]) -> str:
    """As an answer's check calls it: with the articles the text cites."""
    return spell_out_cited(text, [articles[p] for p in extract_pmids(text) if p in articles])


ARTICLES = {
    "1": _article(
        "1",
        "Peripheral venous thrombophlebitis (PVT) is common. Re-siting cannulae reduced PVT; "
        "the odds ratio (OR) was 0.2.",
    ),
    "2": _article("2", "Portal vein thrombosis (PVT) follows splenectomy."),
    "3": _article("3", "Major depressive disorder (MDD) in midlife."),
    "4": _article("4", "Women of the Study of Women's Health Across the Nation (SWAN)."),
}


def test_the_first_use_is_spelled_out_as_the_cited_article_defines_it() -> None:
    text = "PVT fell with re-siting [PMID:1]. PVT occurred on day 3 [PMID:1]."
    assert spell_out(text, ARTICLES) == (
        "Peripheral venous thrombophlebitis (PVT) fell with re-siting [PMID:1]. PVT occurred on "
        "day 3 [PMID:1]."
    )
    mid = "Re-siting reduced PVT, OR 0.2 [PMID:1]."
    assert spell_out(mid, ARTICLES) == (
        "Re-siting reduced peripheral venous thrombophlebitis (PVT), OR 0.2 [PMID:1]."
    )  # a statistic every reader knows stays short
    assert article_definitions(ARTICLES["1"])["PVT"] == "Peripheral venous thrombophlebitis"
    # A name keeps its capitals.
    assert spell_out("In SWAN, MDD was common [PMID:4].", ARTICLES) == (
        "In Study of Women's Health Across the Nation (SWAN), MDD was common [PMID:4]."
    )


def test_only_a_definition_the_cited_articles_agree_on_is_used() -> None:
    for text in (
        "PVT fell [PMID:1]. PVT rose [PMID:2].",  # thrombophlebitis or thrombosis?
        "PVT fell [PMID:3].",  # the article cited does not define it (PMID 1 is not cited)
        "Phlebitis (PVT) fell [PMID:1].",  # the answer defines it itself
        "PVT fell.",  # nothing cited
    ):
        assert spell_out(text, ARTICLES) == text


def test_a_long_form_the_text_says_before_the_abbreviation_is_where_it_is_defined() -> None:
    # A local model's answer said "fibromyalgia", then "FM" in another sentence: the reader
    # was left to connect them.
    text = "Peripheral venous thrombophlebitis fell; PVT rose [PMID:1]."
    assert spell_out(text, ARTICLES) == (
        "Peripheral venous thrombophlebitis (PVT) fell; PVT rose [PMID:1]."
    )
    # Said after the abbreviation's first use: the first use is spelled out.
    later = "PVT rose [PMID:1]. Peripheral venous thrombophlebitis fell [PMID:1]."
    assert spell_out(later, ARTICLES) == (
        "Peripheral venous thrombophlebitis (PVT) rose [PMID:1]. Peripheral venous "
        "thrombophlebitis fell [PMID:1]."
    )


def test_an_abbreviation_opening_with_one_lower_case_letter_is_spelled_out() -> None:
    articles = {
        "10": _article("10", "Fibromyalgia (FM) in primary Sjögren's syndrome (pSS) was rare; "
                       "the reOSCE (revised objective structured clinical examination) too."),
    }  # fmt: skip
    assert spell_out("In pSS, FM was rare; reOSCE too [PMID:10].", articles) == (
        "In primary Sjögren's syndrome (pSS), fibromyalgia (FM) was rare; reOSCE too [PMID:10]."
    )


def test_a_long_form_written_after_the_abbreviation_is_found() -> None:
    # PubMedQA's 12855939 (the package reads only "long form (AAI)").
    aai = _article(
        "5",
        "The AAI (Ankle/Arm blood pressure Index) was measured in 200 patients; an HbA1c "
        "(at baseline) and an LDL (mg/dL) were recorded. GPs (general practitioners) saw them.",
    )
    assert article_definitions(aai) == {
        "AAI": "Ankle/Arm blood pressure Index",
        "GPs": "general practitioners",
    }  # not "at baseline" (its letters are not HbA1c's) nor "mg/dL" (one word)
    assert spell_out("A low AAI predicted events [PMID:5].", {"5": aai}) == (
        "A low Ankle/Arm blood pressure Index (AAI) predicted events [PMID:5]."
    )


def test_a_long_form_is_written_as_the_abstract_writes_it_mid_sentence() -> None:
    articles = {
        "6": _article("6", "Parkinson's disease (PD) is common. PD progresses."),  # an eponym
        "7": _article("7", "Patients in Los Angeles (LA) were followed. LA is large."),
        "8": _article("8", "Multiple sclerosis (MS) was studied; multiple sclerosis recurs."),
        "9": _article("9", "Tuberculosis (TB) was treated."),
    }
    assert spell_out("PD was slower [PMID:6].", articles) == (
        "Parkinson's disease (PD) was slower [PMID:6]."
    )
    assert spell_out("Care in LA improved [PMID:7].", articles) == (
        "Care in Los Angeles (LA) improved [PMID:7]."
    )
    assert spell_out("Relapse of MS fell [PMID:8]. Of TB too [PMID:9].", articles) == (
        "Relapse of multiple sclerosis (MS) fell [PMID:8]. Of tuberculosis (TB) too [PMID:9]."
    )


def test_reading_definitions_leaves_the_root_logger_as_it_was() -> None:
    # The abbreviations package calls logging.basicConfig(level=INFO) when imported: httpx's
    # "HTTP Request: POST ..." lines then appeared under a research job's progress.
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from medlit.words.defined_terms import article_definitions\n"
        "from medlit.types import AbstractSection, Article\n"
        "a = Article(pmid='1', title='T', abstract=[AbstractSection(text='Major depressive "
        "disorder (MDD) is common.')])\n"
        "assert article_definitions(a) == {'MDD': 'Major depressive disorder'}\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), root.level)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["0", str(30)]  # no handler added; WARNING, Python's default
