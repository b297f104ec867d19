"""What the PubMedQA benchmarks of the answer checks share (not a benchmark itself).

The labelled questions with their articles, a title question said as a statement, and the
examples of each outcome a benchmark prints under its table.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.text import split_sentences
from medlit.types import AbstractSection, Article

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/pubmedqa"
_ASKING = re.compile(
    r"^(?:does|do|did|is|are|was|were|can|could|should|will|has|have)\s+", re.IGNORECASE
)


def labelled(data: Path) -> tuple[dict[str, Any], dict[str, Article]] | None:
    """PubMedQA's expert-labelled records (``pqal_dev.json``, by PMID) and their articles
    (``pqal_dev_pubmed.xml``), or None (after saying so) when ``data`` lacks them."""
    labels, xml = data / "pqal_dev.json", data / "pqal_dev_pubmed.xml"
    if not (labels.exists() and xml.exists()):
        print(f"no data at {data}: see ../shared/data/README.md")
        return None
    records = json.loads(labels.read_text())
    return records, {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}


def cases(
    doc: str | None, argv: list[str] | None, *, show: int | None = None
) -> tuple[argparse.Namespace, dict[str, Any], dict[str, Article]] | None:
    """A benchmark's arguments (described by the first paragraph of its module ``doc``:
    ``--data``, and ``--show`` with ``show`` as its default when given), and the labelled
    records and their articles (:func:`labelled`), logging quieted to errors; None when the
    data is absent."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    if show is not None:
        parser.add_argument("--show", type=int, default=show, help="Examples shown per case.")
    args = parser.parse_args(argv)
    data = labelled(args.data)
    if data is None:
        return None
    configure_logging("error")
    return args, *data


def statement(question: str) -> str:
    """``question`` said as a statement (its last part after a colon, without the asking
    verb and the question mark): crude, but with the question's words."""
    asked = _ASKING.sub("", question.split(":")[-1].strip()).rstrip("?").strip()
    return asked[:1].upper() + asked[1:]


def titles_said_back(
    records: dict[str, Any], articles: dict[str, Article]
) -> Iterator[tuple[str, str, Article, list[tuple[str, str]]]]:
    """Each labelled article whose title is a question: its PMID, label, the article, and its
    title said back as each answer: ("yes", the title as a :func:`statement`), ("no", "There
    is no evidence that" before it)."""
    for pmid, record in records.items():
        article = articles.get(pmid)
        if article is None or not article.title.strip().endswith("?"):
            continue
        yes = statement(article.title)
        no = f"There is no evidence that {yes[0].lower()}{yes[1:]}"
        yield pmid, record["final_decision"], article, [("yes", yes), ("no", no)]


def without_sentence(article: Article, sentence: str) -> Article:
    """``article`` with ``sentence`` taken out of its abstract: a sentence held to the rest of
    its article, as a paraphrase whose words the article does not repeat."""
    sections = [
        AbstractSection(
            label=s.label,
            category=s.category,
            text=" ".join(x for x in split_sentences(s.text) if x != sentence),
        )
        for s in article.abstract
    ]
    return article.model_copy(update={"abstract": sections})


def show_examples(shown: dict[str, list[str]]) -> None:
    """Print the examples of each outcome that has any, under its name."""
    for kind, examples in shown.items():
        if examples:
            print(f"\n{kind}:")
            for line in examples:
                print(f"  {line}")
