"""A title question said back as the finding: how often does the check take it out, and rightly?

A cited sentence that says its article's title question as an answer loses that citation when
the article's conclusion answers the title the other way
(the check ``restated-titles``). Over the PubMedQA articles of
``../shared/data/pubmedqa`` whose title is a question, each title is said back two ways, cited
to its article:

- **as yes**: the title as a statement ("Does pretreatment with statins improve clinical
  outcome after stroke?" -> "Pretreatment with statins improve clinical outcome after
  stroke", crude but with the title's words), what the local model writes;
- **as no**: "There is no evidence that" before it.

A sentence taken out is right when the article's label (``final_decision``) is the other
answer, wrong when it is the same one (a ``maybe`` is counted apart).

Usage::

    python benchmarks/restated_titles.py [--data ../shared/data/pubmedqa]

Last line: ``titles=... yes_taken_right=... yes_taken_wrong=... no_taken_right=...
no_taken_wrong=...``.
"""

from __future__ import annotations

from collections import Counter

from pubmedqa_cases import both_halves, cases, check_warnings, titles_said_back


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv)
    if loaded is None:
        return 1
    _, records, articles = loaded
    counts: Counter[tuple[str, str, bool]] = Counter()
    titles = 0
    for pmid, label, article, said_back in titles_said_back(records, articles):
        titles += 1
        for said, sentence in said_back:
            warnings = check_warnings(
                "restated-titles", f"{sentence} [PMID:{pmid}].", {pmid: article}
            )
            counts[(said, label, bool(warnings))] += 1
    print(f"PubMedQA articles whose title is a question: {titles}\n")
    print(f"{'said as':<9} {'label':<7} {'taken out':>10} {'kept':>6}")
    for said in ("yes", "no"):
        for label in ("yes", "no", "maybe"):
            taken, kept = counts[(said, label, True)], counts[(said, label, False)]
            print(f"{said:<9} {label:<7} {taken:>10} {kept:>6}")
    print(
        f"titles={titles} yes_taken_right={counts[('yes', 'no', True)]} "
        f"yes_taken_wrong={counts[('yes', 'yes', True)]} "
        f"no_taken_right={counts[('no', 'yes', True)]} "
        f"no_taken_wrong={counts[('no', 'no', True)]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
