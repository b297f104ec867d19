"""Article sentences cited in the loose forms models write: how many do the checks drop?

A real local model wrote "([PMID:18852857], 36206626, and 11878590)": the two bare PMIDs were
read as numbers the article does not give, and the sentence was dropped. Over the abstracts of
the 500 PubMedQA articles of ``../shared``, each abstract sentence that holds a number is
written as an answer citing its own article and the next two of the half (all three
retrieved), in each form:

- ``checked``: ``[PMID:a][PMID:b][PMID:c]``, as the checks write a citation;
- ``continued``: ``([PMID:a], b, and c)``, the bare ids continuing a list;
- ``listed``: ``(PMIDs a, b and c)``;
- ``bare``: ``(a, b, c)``, bare ids of articles retrieved for the answer;

and checked by :func:`medlit.checks.answer.check_answer` with every check on. A sentence
dropped is a false drop: it is its article's own. A loose form should drop no more sentences
than the checked form does.

Usage::

    python benchmarks/loose_citations.py [--data ../shared/data/pubmedqa] [--half check]

Last line: ``sentences=...`` and ``<form>_dropped=...`` per form, and ``<form>_by_<check>=...``
for the checks that dropped them.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from medlit.checks import check_answer
from medlit.text import split_sentences
from medlit.types import Article
from pubmedqa_cases import both_halves, cases

FORMS = {
    "checked": lambda a, b, c: f" [PMID:{a}][PMID:{b}][PMID:{c}]",
    "continued": lambda a, b, c: f" ([PMID:{a}], {b}, and {c})",
    "listed": lambda a, b, c: f" (PMIDs {a}, {b} and {c})",
    "bare": lambda a, b, c: f" ({a}, {b}, {c})",
}
_DIGIT = re.compile(r"\d")


async def _verdict(question: str, text: str) -> None:
    return None


async def dropped(question: str, sentence: str, cited: list[Article]) -> dict[str, list[str]]:
    """Per form, the checks that dropped ``sentence`` cited to ``cited`` (none: it stood)."""
    articles = {a.pmid: a for a in cited if a.pmid}
    body = sentence.rstrip().rstrip(".")
    out: dict[str, list[str]] = {}
    for form, write in FORMS.items():
        answer = await check_answer(
            question,
            body + write(*articles) + ".",
            None,
            articles,
            cited[0],
            is_yes_no=False,
            read_verdict=_verdict,
            nothing_supported="Nothing the evidence supports is left.",
        )
        out[form] = [f.check for f in answer.findings if f.action == "drop"]
    return out


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=5)
    if loaded is None:
        return 1
    args, records, articles = loaded
    order = sorted(p for p in records if p in articles)
    counts: Counter[str] = Counter()
    shown: list[str] = []

    async def run() -> None:
        for i, pmid in enumerate(order):
            cited = [articles[order[(i + k) % len(order)]] for k in range(3)]
            question = records[pmid]["QUESTION"]
            for section in articles[pmid].abstract:
                for sentence in split_sentences(section.text):
                    if not _DIGIT.search(sentence):
                        continue
                    counts["sentences"] += 1
                    for form, checks in (await dropped(question, sentence, cited)).items():
                        if checks:
                            counts[f"{form}_dropped"] += 1
                            counts.update(f"{form}_by_{c}" for c in dict.fromkeys(checks))
                            if form != "checked" and len(shown) < args.show:
                                shown.append(f"{form} {pmid} {checks}: {sentence[:100]}")

    asyncio.run(run())
    print(f"{counts['sentences']} abstract sentences with a number ({args.half} half)")
    for form in FORMS:
        print(f"  {form:10} dropped {counts[f'{form}_dropped']}")
    for line in shown:
        print(f"  e.g. {line}")
    figures = {"sentences": counts["sentences"]}
    figures.update({f"{form}_dropped": counts[f"{form}_dropped"] for form in FORMS})
    figures.update({k: v for k, v in sorted(counts.items()) if "_by_" in k})
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
