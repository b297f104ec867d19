"""What the PubMedQA benchmarks of the answer checks share (not a benchmark itself).

The labelled questions with their articles, a title question said as a statement, and the
examples of each outcome a benchmark prints under its table.

The 500 ``pqal_dev`` records are split once, by a hash of the PMID, into a *tune* half and a
*check* half (:func:`half_of`): a rule may be written from tune-half cases only, and every
benchmark reports both halves (``--half tune|check|both``, default both; :func:`both_halves`),
the check half telling how a rule does on articles it was not written from.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from medlit.checks import REGISTRY
from medlit.checks.context import CheckContext
from medlit.checks.draft import Draft
from medlit.checks.policy import warnings_of
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.text import split_sentences
from medlit.types import AbstractSection, Article

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/pubmedqa"
_ASKING = re.compile(
    r"^(?:does|do|did|is|are|was|were|can|could|should|will|has|have)\s+", re.IGNORECASE
)


HALVES = ("tune", "check")


def check_warnings(
    check: str,
    text: str,
    articles: Mapping[str, Article],
    question: str = "",
    verdict: Any = None,
) -> list[str]:
    """What check ``check`` of the registry tells the reader of ``text``, run as the check
    node runs it (``verdict``: the answer's, for the verdict checks)."""
    ctx = CheckContext(question, articles, Draft.parse(text), verdict)
    return warnings_of(list(REGISTRY[check].run(ctx)))


def half_of(pmid: str) -> str:
    """The fixed half of ``pqal_dev`` an article is in: ``tune`` when the first byte of the
    SHA-256 of its PMID is even, else ``check`` (250 and 250 give or take; never reshuffled)."""
    return HALVES[hashlib.sha256(pmid.encode()).digest()[0] % 2]


def in_half(by_pmid: Mapping[str, Any], half: str) -> dict[str, Any]:
    """The entries of ``by_pmid`` (records or articles, keyed by PMID) in ``half`` ("both":
    all of them)."""
    return {k: v for k, v in by_pmid.items() if half == "both" or half_of(k) == half}


def add_half(parser: argparse.ArgumentParser) -> None:
    """The ``--half`` option: which half of ``pqal_dev`` to measure."""
    parser.add_argument(
        "--half",
        choices=(*HALVES, "both"),
        default="both",
        help="Half of pqal_dev measured (by a hash of the PMID): tune (rules are written from "
        "its cases), check (never written from), or both, one after the other (default).",
    )


def _figures(line: str) -> list[tuple[str, str]]:
    return [tuple(part.split("=", 1)) for part in line.split() if "=" in part]  # type: ignore[misc]


def both_halves(main: Callable[[list[str] | None], int]) -> Callable[[list[str] | None], int]:
    """``main`` run on each half in turn when ``--half`` is ``both`` (or not given): each
    half's output, then a last line of every figure suffixed ``_tune`` and ``_check``."""

    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        args = list(sys.argv[1:] if argv is None else argv)
        chosen = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--half"), "both")
        if chosen != "both":
            return main(args)
        rest = [a for i, a in enumerate(args) if a != "--half" and args[i - 1 : i] != ["--half"]]
        code, lasts = 0, []
        for half in HALVES:
            print(f"=== the {half} half of pqal_dev ===")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main([*rest, "--half", half]) or code
            text = out.getvalue()
            print(text.rstrip("\n") + "\n")
            lasts.append((half, text.strip().splitlines()[-1] if text.strip() else ""))
        print(
            " ".join(
                f"{name}_{half}={value}" for half, line in lasts for name, value in _figures(line)
            )
        )
        return code

    return run


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
    ``--data``, ``--half``, and ``--show`` with ``show`` as its default when given), and the
    labelled records and their articles of that half (:func:`labelled`, :func:`in_half`),
    logging quieted to errors; None when the data is absent."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_half(parser)
    if show is not None:
        parser.add_argument("--show", type=int, default=show, help="Examples shown per case.")
    args = parser.parse_args(argv)
    data = labelled(args.data)
    if data is None:
        return None
    configure_logging("error")
    records, articles = data
    return args, in_half(records, args.half), in_half(articles, args.half)


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
