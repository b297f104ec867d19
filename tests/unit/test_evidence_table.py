"""The evidence table's rows from the article's structure, the draft certainty, and the CSV,
on the PubMedQA articles of ../shared/data (skipped where it is absent) and small cases."""

from __future__ import annotations

import json
import re

import pytest

from medlit.checks.claims import quote_in_article, quote_passage
from medlit.research.certainty import draft_certainty
from medlit.research.evidence_table import design_of, rows_from_csv, rows_to_csv, structure_row
from medlit.research.models import Cell, ConflictingClaim, Discrepancy, EvidenceRow
from medlit.types import AbstractSection, Article, Citation, FullText, FullTextSection, Passage
from medlit.words.frame import read_frame
from tests.conftest import shared_data_path


@pytest.fixture(scope="module")
def pubmedqa() -> list[tuple[Article, str]]:
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    labels = shared_data_path("pubmedqa", "pqal_dev.json")
    from medlit.sources.pubmed_xml import parse_pubmed_xml

    records = json.loads(labels.read_text())
    articles = parse_pubmed_xml(xml.read_bytes())[:150]
    return [(a, records[a.pmid]["QUESTION"]) for a in articles if a.pmid in records]


def test_every_filled_cell_quotes_its_article_verbatim(
    pubmedqa: list[tuple[Article, str]],
) -> None:
    rows = [structure_row(article, read_frame(question)) for article, question in pubmedqa]
    assert len(rows) == len(pubmedqa)
    filled = 0
    for (article, _), row in zip(pubmedqa, rows, strict=True):
        assert row.pmid == article.pmid
        for cell in row.cells().values():
            if cell is not None:
                filled += 1
                assert quote_in_article(cell.quote, article), (article.pmid, cell.quote)
        if row.n is not None:
            # The whole number as the sentence groups it ("12,537" or "12 537"), not a part.
            assert row.population is not None
            ungrouped = re.sub(r"(?<=\d)[,\u2009\u202f ](?=\d{3}\b)", "", row.population.quote)
            assert re.search(rf"(?<![\d.]){row.n}(?![\d.])", ungrouped), row.population.quote
        if row.design_quote is not None:
            assert quote_in_article(row.design_quote, article, min_words=1)
    assert filled >= len(rows) // 2  # a sentence with N or an effect in most abstracts


def test_designs_agree_with_what_the_article_carries(
    pubmedqa: list[tuple[Article, str]],
) -> None:
    for article, _ in pubmedqa:
        design, source, _ = design_of(article)
        mesh = " ".join(article.mesh_terms).lower()
        if source == "MeSH terms":
            word = {"cohort": ("cohort", "prospective", "retrospective", "longitudinal"),
                    "case-control": ("case-control",), "cross-sectional": ("cross-sectional",),
                    "RCT": ("randomized controlled",),
                    "systematic review/meta-analysis": ("meta-analysis", "systematic review"),
                    "guideline": ("guideline", "consensus"),
                    "case series/report": ("case report", "case series")}[design]  # fmt: skip
            assert any(w in mesh for w in word), (article.pmid, design, mesh)


def _article(types: list[str], methods: str = "We studied 50 patients.") -> Article:
    return Article(
        pmid="1",
        title="Aspirin and stroke",
        publication_types=types,
        abstract=[AbstractSection(label="METHODS", category="METHODS", text=methods)],
    )


def test_publication_types_decide_the_design_first() -> None:
    cohort_text = "This retrospective cohort study enrolled 50 patients."
    assert design_of(_article(["Randomized Controlled Trial"], cohort_text))[:2] == (
        "RCT", "publication types"
    )  # fmt: skip
    assert design_of(_article(["Meta-Analysis"]))[0] == "systematic review/meta-analysis"
    assert design_of(_article(["Case Reports"]))[0] == "case series/report"
    assert design_of(_article(["Practice Guideline"]))[0] == "guideline"
    design, source, quote = design_of(_article(["Journal Article"], cohort_text))
    assert (design, source, quote) == ("cohort", "abstract", cohort_text)
    assert design_of(_article(["Journal Article"]))[:2] == ("other", "none")


def _row(pmid: str, design: str, n: int | None, direction: str = "supports") -> EvidenceRow:
    population = Cell(text=f"{n} adults", quote=f"{n} adults") if n else None
    return EvidenceRow(pmid=pmid, article_key=f"pmid:{pmid}", title="Aspirin and stroke",
                       design=design, n=n, population=population,
                       direction=direction)  # type: ignore[arg-type]  # fmt: skip


def test_certainty_starts_from_designs_and_moves_down_with_reasons() -> None:
    question = read_frame("Does aspirin prevent stroke?")
    trials = [_row(str(i), "RCT", 500) for i in range(1, 4)]
    assert draft_certainty(trials, [], question).level == "high"

    few = draft_certainty(trials[:1], [], question)
    assert few.level == "moderate" and [m.domain for m in few.moves] == ["imprecision"]

    observational = [_row(str(i), "cohort", 500) for i in range(1, 4)]
    assert draft_certainty(observational, [], question).start == "low"

    sides = [ConflictingClaim(claim="more", sources=[Citation(pmid="1", title="a")]),
             ConflictingClaim(claim="less", sources=[Citation(pmid="2", title="b")])]  # fmt: skip
    conflict = Discrepancy(topic="bleeding", claims=sides, sub_question_id="q1")
    mixed = draft_certainty(trials, [conflict], question)
    move = next(m for m in mixed.moves if m.domain == "inconsistency")
    assert move.rows == ["1", "2"] and mixed.level == "moderate"
    assert mixed.draft and "confirm" in mixed.label

    elsewhere = [_row("1", "RCT", 500), _row("2", "RCT", 500), _row("3", "RCT", 500)]
    elsewhere[0].population = Cell(text="500 children with asthma", quote="x")
    elsewhere[0].title = "Montelukast in asthma"
    indirect = draft_certainty(elsewhere, [], question)
    assert [m.rows for m in indirect.moves if m.domain == "indirectness"] == [["1"]]


def test_csv_round_trips_quotes_commas_and_newlines() -> None:
    row = _row("7", "RCT", 120)
    row.effect = Cell(text='HR 0.78, "95% CI" 0.66-0.92', quote="line one,\nline two")
    text = rows_to_csv([row, _row("8", "other", None, "unclear")])
    again = rows_from_csv(text)
    assert rows_to_csv(again) == text
    assert again[0].effect == row.effect and again[0].n == 120 and again[1].population is None


def test_a_count_of_trials_is_no_number_of_participants() -> None:
    from medlit.research.evidence_table import structure_row

    article = Article(
        pmid="9",
        title="Aspirin and stroke: a meta-analysis",
        publication_types=["Meta-Analysis"],
        abstract=[AbstractSection(label="RESULTS", category="RESULTS",
                                  text="Across 12 trials aspirin reduced stroke (RR 0.80, "
                                  "95% CI 0.72-0.89).")],
    )  # fmt: skip
    row = structure_row(article, read_frame("Does aspirin prevent stroke?"))
    assert row.population is not None and row.n is None
    assert row.effect is not None and "RR 0.80" in row.effect.text
    people = article.model_copy(
        update={
            "abstract": [
                AbstractSection(
                    label="METHODS",
                    category="METHODS",
                    text="We randomised 1,204 adults to aspirin.",
                )
            ]
        }
    )
    assert structure_row(people, read_frame("Does aspirin prevent stroke?")).n == 1204


def _trial_with_body() -> Article:
    return Article(
        pmid="11",
        title="Aspirin and recurrent stroke: a randomised trial",
        publication_types=["Randomized Controlled Trial"],
        abstract=[
            AbstractSection(label="METHODS", category="METHODS",
                            text="We randomised 900 adults after a first stroke."),
            AbstractSection(label="RESULTS", category="RESULTS",
                            text="Aspirin reduced recurrent stroke (HR 0.80, 95% CI 0.70-0.92)."),
        ],
        full_text=FullText(pmcid="PMC11", sections=[
            FullTextSection(label="Introduction",
                            text="Earlier trials in older patients found a HR of 0.5 (95% CI "
                            "0.3-0.8) in patients over 75 years."),
            FullTextSection(label="Results",
                            text="In patients over 75 years aspirin reduced recurrent stroke "
                            "less (HR 0.91, 95% CI 0.74-1.12)."),
            FullTextSection(label="Results", kind="table",
                            text="Table 2 Recurrent stroke by age.\nOver 75 | 0.91 (0.74-1.12)"),
        ]),
    )  # fmt: skip


def test_a_cell_says_whether_its_quote_is_the_abstract_s_or_the_full_text_s() -> None:
    article = _trial_with_body()
    overall = structure_row(article, read_frame("Does aspirin prevent recurrent stroke?"))
    # Nothing asked beyond the title's subject: the abstract's first effect, marked as its.
    assert overall.effect is not None and "HR 0.80" in overall.effect.quote
    assert overall.effect.section == "RESULTS" and not overall.effect.from_full_text
    assert overall.population is not None and overall.population.section == "METHODS"
    # A subgroup only the body reports: its Results sentence (not the introduction's).
    older = structure_row(
        article, read_frame("Does aspirin prevent recurrent stroke in patients over 75?")
    )
    assert older.effect is not None and "HR 0.91" in older.effect.quote
    assert older.effect.section == "Results" and older.effect.from_full_text
    # Without the body, the same question gets the abstract's effect: today's row.
    abstract_only = article.model_copy(update={"full_text": None})
    same = structure_row(
        abstract_only, read_frame("Does aspirin prevent recurrent stroke in patients over 75?")
    )
    assert same.effect == overall.effect


def test_quote_passage_prefers_the_abstract_and_knows_the_body() -> None:
    article = _trial_with_body()
    abstract = quote_passage("aspirin reduced recurrent stroke (HR 0.80", article)
    assert abstract is not None and abstract.section == "RESULTS" and not abstract.from_full_text
    table = quote_passage("Over 75 | 0.91 (0.74–1.12)", article)  # typographic dash
    assert table is not None and table.section == "Results" and table.from_full_text
    assert quote_passage("Aspirin and recurrent stroke", article) == Passage(
        section=None, text=article.title
    )
    assert quote_passage("aspirin doubled recurrent stroke", article) is None
    # The introduction is the article's text too (where a quote is), though no cell rests on
    # it: the checks read only what reports the study (Article.as_read).
    intro = quote_passage("Earlier trials in older patients", article)
    assert intro is not None and intro.section == "Introduction"
    assert structure_row(article, read_frame("x")).dropped == {}


@pytest.mark.parametrize(
    ("sentence", "n"),
    [
        ("We followed 337 802 women, of whom 1878 developed cancer.", 337802),
        ("We followed 12\u2009300 adults for ten years.", 12300),
        ("We enrolled 1,204 patients.", 1204),
        ("In 2005 120 patients were enrolled.", 120),
    ],
)
def test_the_number_studied_reads_thousands_grouped_by_spaces(sentence: str, n: int) -> None:
    article = Article(
        pmid="12",
        title="A cohort",
        abstract=[AbstractSection(label="METHODS", category="METHODS", text=sentence)],
    )
    assert structure_row(article, read_frame("Does x cause y?")).n == n


def _concluding(*sentences: str) -> Article:
    return Article(
        pmid="7",
        title="Concept mapping in nursing education",
        abstract=[
            AbstractSection(label="RESULTS", category="RESULTS", text="Scores rose."),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=" ".join(sentences)),
        ],
    )


def test_a_row_opposes_the_change_its_conclusion_states_the_other_way() -> None:
    from medlit.research.evidence_table import conclusion_direction

    article = _concluding(
        "Concept mapping improved learning outcomes of nursing students.",
        "It could be recommended as a teaching strategy.",
    )
    asked = "Does concept mapping improve learning outcomes of nursing students?"
    turned = "Does concept mapping impair learning outcomes of nursing students?"
    assert conclusion_direction(read_frame(asked), article)[0] == "supports"
    # The turned question: the stated change opposes it, whatever "recommended" reads.
    direction, sentence = conclusion_direction(read_frame(turned), article)
    assert direction == "opposes"
    assert sentence == "Concept mapping improved learning outcomes of nursing students."
    # A conclusion stating the change asked somewhere is read as before.
    both = _concluding(
        "Concept mapping impaired recall in the first week.",
        "Concept mapping improved learning outcomes of nursing students.",
    )
    assert conclusion_direction(read_frame(turned), both)[0] != "opposes"
