"""When does an answer say that no retrieved article mentions what the question asks about?

:func:`medlit.words.unmentioned.unmentioned_terms` names the question's subject terms that no
retrieved article says; the answer then says so first, and a yes/no verdict is "uncertain".
This measures it on the 500 expert-labelled PubMedQA questions of
``../shared/data/pubmedqa/pqal_dev.json`` (one article each; its title is the question):

- **own article**: each question against its own article (title, abstract, MeSH). A term
  flagged here is a false alarm.
- **own abstract, no title**: against its abstract and MeSH terms alone, as a question worded
  apart from its article's title would be: an upper bound on false alarms from wording.
- **answering article missing**: against the three other articles sharing the most of its
  subject words (the nearest misses a search returns when the one article that answers is not
  found). A flag here is what the check exists for.

For the last case it also runs the evidence digest (the no-LLM answer) over those three
articles, without and with the check, and counts its yes/no verdicts and how many equal the
question's label: verdicts read from articles about something else.

Usage::

    python benchmarks/unmentioned_terms.py [--data ../shared/data/pubmedqa/pqal_dev.json]

Last line: ``own_flagged=... untitled_flagged=... missing_flagged=... verdicts_without=...
verdicts_with=...``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_verdicts import DEFAULT_DATA, nearest_others, records_as_evidence
from medlit.digest import build_evidence_digest
from medlit.types import Article, Evidence
from medlit.words.grounding import word_stems
from medlit.words.unmentioned import unmentioned_terms
from pubmedqa_cases import add_half, both_halves, show_examples

NEAREST = 3


def _untitled(article: Article) -> Article:
    return article.model_copy(update={"title": ""})


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_half(parser)
    parser.add_argument("--show", type=int, default=8, help="Examples shown per case.")
    args = parser.parse_args(argv)
    loaded = records_as_evidence(args.data, args.half)
    if loaded is None:
        return 1
    records, evidence, articles = loaded
    said = {pmid: word_stems(a.everything_said.lower()) for pmid, a in articles.items()}

    flagged: Counter[str] = Counter()
    shown: dict[str, list[str]] = {"own": [], "untitled": [], "missing": []}
    verdicts = {"without": Counter[str](), "with": Counter[str]()}
    for pmid, record in records.items():
        question, truth = str(record["QUESTION"]), str(record["final_decision"])
        others = nearest_others(question, pmid, said, NEAREST)
        cases = {
            "own": [articles[pmid]],
            "untitled": [_untitled(articles[pmid])],
            "missing": [articles[p] for p in others],
        }
        for case, given in cases.items():
            terms = unmentioned_terms(question, given)
            if terms:
                flagged[case] += 1
                if len(shown[case]) < args.show:
                    shown[case].append(f"{terms} | {question}")
        near: list[Evidence] = [item for p in others for item in evidence[p]]
        missing = unmentioned_terms(question, cases["missing"])
        for way, unmentioned in (("without", []), ("with", missing)):
            verdict = build_evidence_digest(question, near, unmentioned=unmentioned).verdict
            if verdict in ("yes", "no"):
                verdicts[way]["given"] += 1
                verdicts[way]["right"] += verdict == truth

    n = len(records)
    rows = [
        ("own article (title, abstract, MeSH)", flagged["own"]),
        ("own abstract and MeSH, no title", flagged["untitled"]),
        (f"answering article missing ({NEAREST} nearest others)", flagged["missing"]),
    ]
    print(f"{'questions whose answer names an unmentioned term':<56} {n} questions")
    for label, count in rows:
        print(f"  {label:<54} {count:>4} ({count / n:.1%})")
    print("digest verdicts (yes/no) over the 3 nearest others, label equal:")
    for way in ("without", "with"):
        given, right = verdicts[way]["given"], verdicts[way]["right"]
        print(f"  {way + ' the check':<54} {given:>4} given, {right} equal to the label")
    show_examples(shown)
    print(
        f"own_flagged={flagged['own']} untitled_flagged={flagged['untitled']} "
        f"missing_flagged={flagged['missing']} verdicts_without={verdicts['without']['given']} "
        f"verdicts_with={verdicts['with']['given']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
