"""The evidence table: one row per included study, every filled cell tied to a verbatim quote.

A row has the study's design (from its PubMed publication types, then its MeSH terms, then
what its abstract says), the population with its size, the intervention or exposure, the
comparator, the outcomes, the effect as the article states it, and the direction relative to
the question. Every filled cell is ``{text, quote}``: the quote occurs verbatim in that article
and the cell's text passes :func:`~medlit.research.researcher.check_claim` against it, the check
any research claim passes. A cell without such a quote stays empty: never guessed.

When the job has read the article's open-access full text, the pieces of its body that report
the study (methods, results, tables: :meth:`~medlit.types.Article.as_read`) are the article's
too: a cell may rest on a Results passage or a table row the abstract lacks, and it then says
so (``section``, ``from_full_text``) in the JSON, the CSV and the Markdown. Without a full text
every row is what the abstract gives.

Without an LLM the cells come from the article's structure: the design, the sentence giving the
number studied, the first result sentence stating an effect with its numbers (with a full
text, the result sentence that says most of what the question asks beyond the article's
subject), and the conclusion (read for its direction). With one, one JSON call per study
proposes every cell with its quote (one repair by the client); each cell is then checked the
same way, and a reply that is no valid row empties that row's model cells, never the job.
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Collection, Sequence
from typing import Any

from pydantic import BaseModel, Field, create_model

from medlit.checks import check_claim, quote_passage, refuse_unknown
from medlit.errors import LLMConfigError, LLMError
from medlit.log import get_logger
from medlit.research.models import (
    ALL_CELLS,
    CELLS,
    COLUMNS,
    DESIGNS,
    DIRECTED,
    MORE_CELLS,
    Cell,
    Design,
    Direction,
    EvidenceRow,
)
from medlit.research.pointing import (
    OUT_OF_RANGE,
    Numbered,
    numbered_sentences,
    pointed_quote,
    render_numbered,
)
from medlit.research.prompts import ResearchLLM, Task, messages, require_in_schema
from medlit.text import split_sentences
from medlit.types import AbstractSection, Article, FullTextSection
from medlit.words import cue
from medlit.words.conclusions import conclusion_sentences
from medlit.words.frame import QuestionFrame
from medlit.words.stance import change_said, content_terms, sentence_stance

__all__ = [
    "CELLS",
    "CSV_COLUMNS",
    "DESIGNS",
    "Cell",
    "EvidenceRow",
    "build_evidence_table",
    "conclusion_direction",
    "design_of",
    "render_table",
    "rows_from_csv",
    "rows_to_csv",
]

log = get_logger("research.evidence_table")

# -- design ------------------------------------------------------------------------------------

_BY_TYPE: list[tuple[Design, re.Pattern[str]]] = [
    ("systematic review/meta-analysis", re.compile(r"meta-analysis|systematic review", re.I)),
    ("guideline", re.compile(r"guideline|consensus development conference", re.I)),
    ("RCT", re.compile(r"randomi[sz]ed controlled trial", re.I)),
    ("case-control", re.compile(r"case-control", re.I)),
    ("cross-sectional", re.compile(r"cross-sectional", re.I)),
    ("cohort", re.compile(r"cohort|prospective stud|retrospective stud|longitudinal", re.I)),
    ("case series/report", re.compile(r"case reports?|case series", re.I)),
]
# The abstract's own words for its design (stated, not inferred).
_BY_TEXT: list[tuple[Design, re.Pattern[str]]] = [
    ("systematic review/meta-analysis",
     re.compile(r"\b(?:systematic(?:ally)? review\w*|meta-?analys[ie]s)\b", re.I)),
    ("RCT", re.compile(r"\brandomi[sz]ed\b[^.]{0,40}\b(?:trial|study)\b|\brandomi[sz]ed\b", re.I)),
    ("case-control", re.compile(r"\bcase[- ]control\b", re.I)),
    ("cross-sectional", re.compile(r"\bcross[- ]sectional\b", re.I)),
    ("cohort", re.compile(r"\b(?:cohort|prospective(?:ly)?|retrospective(?:ly)?)\b", re.I)),
    ("case series/report", re.compile(r"\bcase (?:series|report)\b|\bwe (?:report|describe) a\b",
                                      re.I)),
    ("guideline", re.compile(r"\b(?:guideline|recommendations?)\b", re.I)),
]  # fmt: skip


def design_of(article: Article) -> tuple[Design, str, str | None]:
    """(design, where it is from, the abstract's quote when from the abstract).

    Publication types decide first (PubMed's indexers read the full text); then MeSH terms
    ("Cohort Studies", "Cross-Sectional Studies"); then a sentence of the title or abstract that
    names the design. "Observational Study" alone names no design of the list: the text may.
    """
    for design, pattern in _BY_TYPE:
        if any(pattern.search(t) for t in article.publication_types):
            return design, "publication types", None
    for design, pattern in _BY_TYPE:
        if any(pattern.search(t) for t in article.mesh_terms):
            return design, "MeSH terms", None
    # The title and the methods say the study's own design; a background names others'.
    unstructured = len(article.abstract) == 1 and not article.abstract[0].label
    texts = [article.title, *(s.text for s in article.abstract if s.is_methods or unstructured)]
    for design, pattern in _BY_TEXT:
        for text in texts:
            for sentence in split_sentences(text):
                if pattern.search(sentence) and not sentence.rstrip().endswith("?"):
                    return design, "abstract", sentence
    return "other", "none", None


# -- cells from the article's structure ----------------------------------------------------------

# Thousands are grouped with commas or with spaces ("337 802 women", thin spaces too).
_N = re.compile(
    r"\b(?:n\s*=\s*(\d[\d,]*)|(\d{1,3}(?:[,\u2009\u202f ]\d{3})+|\d+)\s+"
    r"(?:consecutive\s+|eligible\s+)?"
    r"(?:patients|participants|subjects|adults|children|women|men|individuals|people|infants|"
    r"neonates|cases|persons|volunteers|pregnancies|mothers|students|residents|trials|studies|"
    r"RCTs))\b",
    re.I,
)
# An effect as articles state one: a ratio or difference with its numbers, a CI, a p value.
_EFFECT = re.compile(
    r"\b(?:[HOR]R|RR|OR|HR|MD|SMD|WMD|IRR|AUC)\b\s*[=:,(]?\s*-?\d|95\s?%\s?CI|\bCI\b|"
    r"\bp\s*[<=>≤]\s*0?\.\d|\bconfidence interval",
    re.I,
)
_NULL = cue("negation.null_result")


def _n_sentence(article: Article) -> tuple[int, str] | None:
    """The first non-result sentence stating how many were studied (else any), with N."""
    ordered = sorted(article.abstract, key=lambda s: s.is_result)
    for section in ordered:
        for sentence in split_sentences(section.text):
            match = _N.search(sentence)
            if match is not None:
                number = int(re.sub(r"[,\u2009\u202f ]", "", match.group(1) or match.group(2)))
                if 0 < number < 100_000_000:
                    # "12 trials" counts studies, not participants: the row's N stays unknown.
                    studies = re.search(r"(?:trials|studies|RCTs)\b", match.group(0), re.I)
                    return (0 if studies else number), sentence
    return None


def _effect_sentences(sections: Sequence[AbstractSection | FullTextSection]) -> list[str]:
    """The sentences of the result sections stating an effect with its numbers, in order."""
    return [
        sentence
        for section in sections
        if section.is_result
        for sentence in split_sentences(section.text)
        if _EFFECT.search(sentence)
    ]


def _effect_sentence(article: Article, question: str) -> str | None:
    """The abstract's first result sentence stating an effect; with a full text read, the
    result sentence (the abstract's, then the body's paragraphs) that says most of what the
    question asks beyond the article's subject (the question's words its title lacks: a
    subgroup, a dose, an outcome), the abstract's first on a tie."""
    candidates = _effect_sentences(article.abstract)
    if article.full_text is None:
        return candidates[0] if candidates else None
    body = [s for s in article.full_text.sections if s.kind == "text"]
    candidates += _effect_sentences(body)
    if not candidates:
        return None
    asked = _terms(question) - _terms(article.title)
    return max(candidates, key=lambda sentence: len(_terms(sentence) & asked))


def _terms(text: str) -> set[str]:
    """The content words of ``text`` (stemmed) and its whole numbers (an age, a dose)."""
    return content_terms(text) | set(re.findall(r"(?<![\d.])\d+(?![\d.])", text))


def conclusion_direction(frame: QuestionFrame, article: Article) -> tuple[Direction, str | None]:
    """Which way the conclusion points on the question ``frame`` reads, from its sentences
    (the first that points). Under a question asking a change ("does X worsen Y?"), a
    conclusion that states the opposite change and nowhere the one asked opposes it
    (:func:`medlit.words.stance.change_said`), whatever else its sentences read."""
    question = frame.question
    sentences = conclusion_sentences(article)
    if frame.direction is not None:
        said = [change_said(sentence, question) for sentence in sentences]
        if "opposite" in said and "asked" not in said:
            return "opposes", sentences[said.index("opposite")]
    for sentence in sentences:
        stance = sentence_stance(sentence, question)
        if stance == "yes":
            return "supports", sentence
        if stance == "no":
            return ("no difference" if _NULL.search(sentence) else "opposes"), sentence
    return "unclear", None


def _checked(
    name: str,
    text: str,
    quote: str,
    article: Article,
    question: str,
    dropped: dict[str, str],
    disabled: Collection[str] = (),
) -> Cell | None:
    """The cell if its quote is the article's, verbatim, and says its text (the ``claim``
    checks but those ``disabled``); else None (the reason kept in ``dropped``). With a full
    text read, its pieces that report the study (:meth:`Article.as_read`) are the article's
    too; the cell says which passage holds the quote (the abstract's first). With
    ``claim-quote`` turned off, a cell whose quote the article does not hold is kept
    unquoted (``quote`` None), and shown so."""
    text, quote = " ".join(text.split()), " ".join(quote.split())
    if not text or not quote:
        return None
    read = article.as_read()
    checked = check_claim(text, quote, read, question, disabled)
    if checked.reason is not None:
        dropped[name] = checked.reason
        return None
    if checked.quote is None:  # only with claim-quote off: kept, said to be unquoted
        return Cell(text=text, quote=None)
    passage = quote_passage(checked.quote, article)
    if passage is None:  # the checks hold it verbatim: a passage holds it (fail closed)
        dropped[name] = "quote_not_in_article"
        return None
    return Cell(
        text=text,
        quote=checked.quote,
        section=passage.section,
        from_full_text=passage.from_full_text,
    )


def structure_row(
    article: Article, frame: QuestionFrame, disabled: Collection[str] = (), kind: str = "effect"
) -> EvidenceRow:
    """A row filled from what the article carries (no LLM; ``disabled``: ids of checks not
    to run), in the columns of a ``kind`` question (``frame``'s): the population with its
    number, the result sentence stating an effect (the effect, the measure of a risk, the
    sensitivity of a test, the estimate of a frequency) and, but for frequency, definition
    and list questions, the conclusion's direction."""
    question = frame.question
    columns = COLUMNS[kind]
    design, source, design_quote = design_of(article)
    row = EvidenceRow(
        pmid=article.pmid,
        article_key=article.key,
        title=article.title,
        year=article.year,
        design=design,
        design_from=source,
        design_quote=design_quote,
    )
    counted = _n_sentence(article)
    if counted is None and article.full_text is not None:  # the body's methods may say it
        counted = _n_sentence(article.as_read())
    if counted is not None and "population" in columns:
        number, sentence = counted
        row.population = _checked(
            "population", sentence, sentence, article, question, row.dropped, disabled
        )
        row.n = number if row.population is not None and number else None
    effect = _effect_sentence(article, question)
    main = next((c for c in _RESULT_CELLS if c in columns), None)
    if effect is not None and main is not None:
        cell = _checked(main, effect, effect, article, question, row.dropped, disabled)
        setattr(row, main, cell)
    if kind in DIRECTED:
        row.direction, row.direction_quote = conclusion_direction(frame, article)
    else:
        row.direction = "not applicable"
    return row


#: The cells a result sentence stating an effect fills, the first a question type uses.
_RESULT_CELLS = ("effect", "measure", "sensitivity", "estimate")


# -- cells from the LLM --------------------------------------------------------------------------

#: What each column asks of a study, in the row prompt.
COLUMN_HELP = {
    "population": "who was studied, with how many",
    "intervention": "the treatment or exposure studied",
    "comparator": "what it was compared with",
    "outcomes": "what was measured",
    "effect": "the result that answers the research question, with its numbers as written",
    "exposure": "the risk factor or exposure studied",
    "measure": "the association as written: odds ratio, hazard ratio or relative risk with its "
    "confidence interval",
    "index_test": "the test whose accuracy was studied",
    "reference_standard": "what the test was compared with (the reference standard)",
    "sensitivity": "the test's sensitivity as written",
    "specificity": "the test's specificity as written",
    "estimate": "how common it is: the prevalence or incidence as written",
    "answer": "what the article says that answers the question (a disease, drug, gene, "
    "definition or mechanism)",
}

ROW_SYSTEM = """medlit research: evidence-row
You fill one row of an evidence table for one study. The article is shown as numbered
sentences. For each column give {{"sentences": [numbers of the one or two sentences that say
it], "text": "a short entry"}}, or null when no sentence says it. Columns: {columns}.
Reply with JSON only: {example}. Never guess: null is better than a cell no sentence says."""


#: What introduces the full text's passages in an evidence-row prompt.
FULL_TEXT_HEADING = "Full text (results, tables, methods; quote from it verbatim too):"


def full_text_passages(article: Article, max_chars: int, *, tables_only: bool = False) -> str:
    """The pieces of the article's full text an evidence row may quote, one a block headed by
    its section ("Results:", "Results (table):"): the results' paragraphs, then their tables
    and figures, then the other pieces that report the study (methods), at most ``max_chars``
    in all (only the tables and figures with ``tables_only``); "" with no full text."""
    if article.full_text is None:
        return ""
    pieces = [
        p
        for p in article.full_text.sections
        if p.reports_study and not (tables_only and p.kind == "text")
    ]
    ordered = sorted(pieces, key=lambda p: (not p.is_result, p.kind != "text"))
    blocks = [f"{p.label}{'' if p.kind == 'text' else f' ({p.kind})'}: {p.text}" for p in ordered]
    return "\n".join(blocks)[:max_chars]


class _ProposedCell(BaseModel):
    model_config = require_in_schema("sentences", "text")

    sentences: list[int] = Field(default_factory=list, json_schema_extra={"minItems": 1})
    text: str = ""
    quote: str = ""


class RowReply(BaseModel):
    """What the model proposes for one row on an effect question (every cell optional)."""

    population: _ProposedCell | None = None
    intervention: _ProposedCell | None = None
    comparator: _ProposedCell | None = None
    outcomes: _ProposedCell | None = None
    effect: _ProposedCell | None = None
    n: int | None = None


@functools.cache
def row_reply(kind: str) -> type[BaseModel]:
    """The reply schema of a row on a ``kind`` question: its columns, each optional, and
    ``n`` where the population is one of them."""
    if kind == "effect":
        return RowReply
    fields: dict[str, Any] = {name: (_ProposedCell | None, None) for name in COLUMNS[kind]}
    if "population" in COLUMNS[kind]:
        fields["n"] = (int | None, None)
    model: type[BaseModel] = create_model(f"RowReply_{kind}", **fields)
    return model


def row_prompt(kind: str) -> str:
    """The row prompt of a ``kind`` question: its columns and what each asks."""
    columns = COLUMNS[kind]
    example = ", ".join(f'"{c}": {{"sentences": [3], "text": "..."}}' for c in columns)
    if "population" in columns:
        example += ', "n": null'
    described = "; ".join(f"{c}: {COLUMN_HELP[c]}" for c in columns)
    return ROW_SYSTEM.format(columns=described, example="{" + example + "}")


def _proposed_cell(
    name: str,
    proposed: _ProposedCell,
    row: EvidenceRow,
    article: Article,
    question: str,
    sentences: Sequence[Numbered],
    disabled: Collection[str],
) -> Cell | None:
    """A cell the model pointed at (or quoted), checked: its short entry where the checks
    hold it to the sentences, else the sentences themselves; None (reason in ``row.dropped``)
    when it points past the article's sentences or nothing holds."""
    if not proposed.sentences:
        return _checked(name, proposed.text, proposed.quote, article, question, row.dropped,
                        disabled)  # fmt: skip
    quote = pointed_quote(proposed.sentences, sentences)
    if quote is None:
        row.dropped[name] = OUT_OF_RANGE
        return None
    text = proposed.text.strip() or quote
    cell = _checked(name, text, quote, article, question, row.dropped, disabled)
    if cell is None and text != quote:  # the entry did not hold: the sentence itself
        cell = _checked(name, quote, quote, article, question, {}, disabled)
        if cell is not None:
            row.dropped.pop(name, None)
    if cell is not None:
        row.sentences[name] = sorted(set(proposed.sentences))
    return cell


async def llm_row(
    article: Article,
    frame: QuestionFrame,
    llm: ResearchLLM,
    *,
    max_chars: int = 6000,
    disabled: Collection[str] = (),
    kind: str = "effect",
) -> EvidenceRow:
    """A row whose cells (the columns of a ``kind`` question) the model pointed at and the
    checks (but those ``disabled``) kept; the structure's row (with the reason) when the reply
    is no valid row.

    Raises:
        LLMConfigError: no model for ``extract_facts``.
    """
    row = structure_row(article, frame, disabled, kind)
    question = frame.question
    sentences = numbered_sentences(article, max_chars=max_chars)
    user = (
        f"Research question: {question}\n\nArticle PMID: {article.pmid or 'none'}\n"
        f"Sentences of the article:\n{render_numbered(sentences)}"
    )
    # The body's paragraphs are numbered above; its tables and figures follow as they are.
    tables = full_text_passages(article, max_chars, tables_only=True)
    if tables:
        user += f"\n\n{FULL_TEXT_HEADING}\n{tables}"
    try:
        reply = await llm.complete_json(
            Task.EXTRACT, messages(row_prompt(kind), user), row_reply(kind)
        )
    except LLMConfigError:
        raise
    except LLMError as exc:  # this row keeps what the structure gives; the job goes on
        log.warning("evidence_row_unwritten", pmid=article.pmid, error=str(exc)[:200])
        row.dropped["llm"] = f"no valid reply: {type(exc).__name__}"
        return row
    row.filled_by = "llm"
    for name in COLUMNS[kind]:
        proposed = getattr(reply, name, None)
        if proposed is None:
            continue
        cell = _proposed_cell(name, proposed, row, article, question, sentences, disabled)
        if cell is not None:
            setattr(row, name, cell)
    n = getattr(reply, "n", None)
    if n is not None and row.population is not None:
        # The number must be the quoted population sentence's own.
        said = {
            int(re.sub(r"[,\u2009\u202f ]", "", m))
            for m in re.findall(
                r"\d{1,3}(?:[,\u2009\u202f ]\d{3})+|\d[\d,]*", row.population.quote or ""
            )
        }
        row.n = n if n in said else row.n
    return row


async def build_evidence_table(
    articles: Sequence[Article],
    frame: QuestionFrame,
    llm: ResearchLLM | None,
    disabled: Collection[str] = (),
    kind: str | None = None,
) -> list[EvidenceRow]:
    """One row per article (the included studies), in their order, in the columns of the
    question's type (``kind``; the ``frame``'s when None; ``disabled``: ids of checks not to
    run; an unknown one is a ValueError)."""
    refuse_unknown(disabled)
    kind = kind or frame.kind
    use_llm = llm is not None and llm.is_configured(Task.EXTRACT)
    rows = []
    for article in articles:
        if use_llm and llm is not None:
            rows.append(await llm_row(article, frame, llm, disabled=disabled, kind=kind))
        else:
            rows.append(structure_row(article, frame, disabled, kind))
    return rows


# -- rendering and CSV ---------------------------------------------------------------------------


#: What the table shows in place of a cell's quote when it has none (kept with
#: ``claim-quote`` turned off).
NO_QUOTE = "no quote found"


def _md(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _cell_text(row: EvidenceRow, name: str) -> str:
    """A cell as the Markdown table shows it: its text, then its quote (or that it has none)
    and where a full-text quote is; "" for an empty cell."""
    cell: Cell | None = getattr(row, name)
    if cell is None:
        return ""
    if cell.quote is None:
        text = f"{cell.text} — ({NO_QUOTE})"
    elif cell.text == cell.quote:
        text = cell.text
    else:
        text = f'{cell.text} — "{cell.quote}"'
    if cell.from_full_text:  # where a reader finds it: not in the abstract
        text += f" (full text, {cell.section})" if cell.section else " (full text)"
    if name == "population" and row.n is not None:
        text = f"N = {row.n}: {text}"
    return _md(text)


#: Column headings as the table shows them.
HEADINGS = {
    "population": "Population (N)",
    "index_test": "Index test",
    "reference_standard": "Reference standard",
    "measure": "Measure (OR/HR/RR)",
}


def heading(name: str) -> str:
    """A column's heading ("index_test" -> "Index test")."""
    return HEADINGS.get(name, name.replace("_", " ").capitalize())


def render_table(
    rows: Sequence[EvidenceRow],
    numbers: dict[str, int] | None = None,
    columns: Sequence[str] = CELLS,
) -> list[str]:
    """The evidence table as Markdown lines (each cell's quote follows it in quotes), in
    ``columns`` (the question type's)."""
    out = ["## Evidence table", ""]
    if not rows:
        return [*out, "No study was included.", ""]
    columns = tuple(columns) or CELLS
    directed = any(row.direction != "not applicable" for row in rows)
    head = ["Study", "Design", *(heading(c) for c in columns)]
    head += ["Direction"] if directed else []
    out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        ref = (numbers or {}).get(row.article_key)
        study = f"[{ref}] " if ref else ""
        study += f"PMID {row.pmid}" if row.pmid else row.title[:60]
        if row.year:
            study += f" ({row.year})"
        cells = [_cell_text(row, name) for name in columns]
        cells += [row.direction] if directed else []
        out.append("| " + " | ".join([_md(study), row.design, *cells]) + " |")
    footer = (
        "Every filled cell quotes its article verbatim and passed the claim check; a quote "
        "from the article's full text says so, with its section; an empty cell is one no "
        "quote supported."
    )
    if any(c is not None and c.quote is None for row in rows for c in row.cells().values()):
        footer = (
            f"A cell marked ({NO_QUOTE}) was kept with the quote check (claim-quote) turned "
            "off: the article holds no quote for it, so it is the model's reading alone. "
            + footer.replace("Every filled cell", "Every other filled cell").replace(
                "the claim check;", "the claim checks in force;"
            )
        )
    out += ["", footer, ""]
    return out


CSV_COLUMNS = (
    "pmid", "article_key", "title", "year", "design", "design_from", "n",
    *(f"{name}{part}" for name in CELLS for part in ("", "_quote")),
    "direction", "direction_quote",
    # Where each quote is (added last: readers of the earlier columns are unaffected).
    *(f"{name}{part}" for name in CELLS for part in ("_section", "_from_full_text")),
    # The other question types' cells (added last too).
    *(f"{name}{part}" for name in MORE_CELLS
      for part in ("", "_quote", "_section", "_from_full_text")),
)  # fmt: skip


def rows_to_csv(rows: Sequence[EvidenceRow]) -> str:
    """The table as CSV (RFC 4180; one column for each cell's text and one for its quote)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        record: dict[str, object] = {
            "pmid": row.pmid or "",
            "article_key": row.article_key,
            "title": row.title,
            "year": row.year if row.year is not None else "",
            "design": row.design,
            "design_from": row.design_from,
            "n": row.n if row.n is not None else "",
            "direction": row.direction,
            "direction_quote": row.direction_quote or "",
        }
        for name, cell in row.cells().items():
            record[name] = cell.text if cell is not None else ""
            record[f"{name}_quote"] = (cell.quote or "") if cell is not None else ""
            record[f"{name}_section"] = (cell.section or "") if cell is not None else ""
            full = cell is not None and cell.from_full_text
            record[f"{name}_from_full_text"] = "" if cell is None else str(full).lower()
        writer.writerow(record)
    return out.getvalue()


def rows_from_csv(text: str) -> list[EvidenceRow]:
    """Rows read back from :func:`rows_to_csv`'s CSV (the round trip keeps every cell)."""
    rows = []
    for record in csv.DictReader(io.StringIO(text)):
        cells = {
            name: Cell(
                text=record.get(name) or "",
                quote=record.get(f"{name}_quote") or None,  # a text with no quote: unquoted
                # a CSV from before these columns: the quote's place is not known
                section=record.get(f"{name}_section") or None,
                from_full_text=record.get(f"{name}_from_full_text") == "true",
            )
            for name in ALL_CELLS
            if record.get(name) or record.get(f"{name}_quote")
        }
        rows.append(
            EvidenceRow(
                pmid=record["pmid"] or None,
                article_key=record["article_key"],
                title=record["title"],
                year=int(record["year"]) if record["year"] else None,
                design=record["design"],
                design_from=record["design_from"],
                n=int(record["n"]) if record["n"] else None,
                direction=record["direction"],
                direction_quote=record["direction_quote"] or None,
                **cells,
            )
        )
    return rows
