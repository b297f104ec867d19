"""A research finding that says its article's title question as the answer: kept, and rightly?

::

    python benchmarks/restated_claims.py [--data ../shared/data/pubmedqa] [--show 3]

The extraction step of a research job (:mod:`medlit.research.researcher`) asks the model for
findings, each with a verbatim quote; a small model often writes the finding in the words of
the article's title ("Passive smoking during childhood is associated with increased risk of
long-term work disability"), over a result that says it in the abstract's words ("exposed to
ETS at home during childhood had increased risk of sick leave"). Over the PubMedQA articles
whose title is a question, each title is said back two ways, as in ``restated_titles.py``:

- **as yes**: the title as a statement;
- **as no**: "There is no evidence that" before it;

and held, as the researcher holds a finding (:func:`medlit.checks.claim_check.check_claim`,
under the title as the sub-question), to each sentence of the article's results and
conclusions as its quote. Counted per article: whether the claim is kept over at least one of
them (what a model quoting any result sentence could get through). A claim kept is right when
the article's label (``final_decision``) is that answer, wrong when it is the other one (a
``maybe`` is counted apart).

Last line: ``titles=... yes_kept_right=... yes_kept_wrong=... no_kept_right=...
no_kept_wrong=...``.
"""

from __future__ import annotations

from collections import Counter

from medlit.checks import check_claim
from medlit.text import split_sentences
from pubmedqa_cases import both_halves, cases, show_examples, titles_said_back


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=3)
    if loaded is None:
        return 1
    args, records, articles = loaded
    counts: Counter[tuple[str, str, bool]] = Counter()
    shown: dict[str, list[str]] = {"kept, label the other answer": [], "kept, label agrees": []}
    titles = 0
    for pmid, label, article, said_back in titles_said_back(records, articles):
        titles += 1
        quotes = [
            sentence
            for section in article.abstract
            if section.is_result
            for sentence in split_sentences(section.text)
        ]
        for said, claim in said_back:
            kept = next(
                (
                    checked.quote
                    for q in quotes
                    if (checked := check_claim(claim, q, article, article.title)).reason is None
                ),
                None,
            )
            counts[(said, label, kept is not None)] += 1
            if kept is not None and label != "maybe":
                kind = "kept, label agrees" if label == said else "kept, label the other answer"
                if len(shown[kind]) < args.show:
                    shown[kind].append(f"{pmid} ({label}) {claim!r} over {kept[:150]!r}")
    print(f"PubMedQA articles whose title is a question: {titles}\n")
    print(f"{'said as':<9} {'label':<7} {'kept':>6} {'dropped':>8}")
    for said in ("yes", "no"):
        for label in ("yes", "no", "maybe"):
            held, dropped = counts[(said, label, True)], counts[(said, label, False)]
            print(f"{said:<9} {label:<7} {held:>6} {dropped:>8}")
    show_examples(shown)
    print(
        f"titles={titles} yes_kept_right={counts[('yes', 'yes', True)]} "
        f"yes_kept_wrong={counts[('yes', 'no', True)]} "
        f"no_kept_right={counts[('no', 'no', True)]} "
        f"no_kept_wrong={counts[('no', 'yes', True)]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
