"""A cited sentence about something else: how often does the check take it out, and wrongly?

The check ``off-question`` takes out a citation when neither the
sentence nor the cited article names any subject term of the question. Over the 500
expert-labelled PubMedQA questions of ``../shared/data/pubmedqa``:

- **own sentences**: every sentence of each abstract, cited to its article with the title
  left out (as a question worded apart from its article's title would find it), held to the
  article's question. A sentence taken out is a false alarm: its article answers the question.
- **nearest other's conclusion**: each conclusion sentence of the article sharing the most of
  the question's subject words (the near miss a search returns beside the answer), cited to
  that article, held to the question. Taken out is what the check is for; kept means the
  sentence or that article names a subject of the question (often rightly: a study of the same
  drug for another use).

Usage::

    python benchmarks/off_question.py [--data ../shared/data/pubmedqa]

Last line: ``own_sentences=... own_dropped=... other_sentences=... other_dropped=...``.
"""

from __future__ import annotations

from collections import Counter

from medlit.digest import conclusion_sentences
from medlit.text import split_sentences
from medlit.words.grounding import word_stems
from medlit.words.topics import anchor_terms
from pubmedqa_cases import both_halves, cases, check_warnings, show_examples


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=8)
    if loaded is None:
        return 1
    args, records, articles = loaded
    said = {pmid: word_stems(a.everything_said.lower()) for pmid, a in articles.items()}
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {"own taken out": [], "other kept": [], "other taken out": []}
    for pmid, record in records.items():
        if pmid not in articles:
            continue
        question = str(record["QUESTION"])
        own = articles[pmid].model_copy(update={"title": ""})
        for section in own.abstract:
            for sentence in split_sentences(section.text):
                warnings = check_warnings(
                    "off-question", f"{sentence} [PMID:{pmid}]", {pmid: own}, question
                )
                counts["own"] += 1
                counts["own_dropped"] += bool(warnings)
                if warnings and len(shown["own taken out"]) < args.show:
                    shown["own taken out"].append(f"{sentence[:90]} | {question}")
        anchors = set().union(*map(word_stems, anchor_terms(question)))  # one word at a time
        other = min((p for p in articles if p != pmid), key=lambda p: (-len(anchors & said[p]), p))
        for sentence in conclusion_sentences(articles[other]):
            cited = {other: articles[other]}
            warnings = check_warnings("off-question", f"{sentence} [PMID:{other}]", cited, question)
            counts["other"] += 1
            counts["other_dropped"] += bool(warnings)
            kind = "other taken out" if warnings else "other kept"
            if len(shown[kind]) < args.show:
                shown[kind].append(f"{sentence[:90]} | {question}")

    print(f"{'cited sentence':<42} {'sentences':>10} {'taken out':>10}")
    rows = (("own abstract, title left out", "own"), ("nearest other's conclusion", "other"))
    for label, key in rows:
        total, dropped = counts[key], counts[f"{key}_dropped"]
        print(f"{label:<42} {total:>10} {dropped:>10} ({dropped / max(total, 1):.1%})")
    show_examples(shown)
    print(
        f"own_sentences={counts['own']} own_dropped={counts['own_dropped']} "
        f"other_sentences={counts['other']} other_dropped={counts['other_dropped']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
