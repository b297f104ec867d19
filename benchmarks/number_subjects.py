"""A number cited for what its article gives it for: partial restatements kept, swaps caught?

``unsourced-numbers`` leaves out a sentence that cites an article for a number the article
gives for another of its subjects. Over the abstracts of the 500 PubMedQA articles of
``../shared``, each abstract sentence that gives two numbers or more (those the check reads)
is written twice as an answer citing its own article, and read by
:func:`medlit.checks.cited_numbers.unsourced_in`:

- ``partial``: the sentence up to the words that give its first number (a model giving one arm
  of a trial and leaving out the others), after "In the study of <the title's subjects the
  sentence does not name>," (a model naming the trial, the drug or the disease the article is
  about). It is true: left out, it is a false drop.
- ``swapped``: the whole sentence with one of the article's subjects it names (a title word
  rare in English) put as another subject of the title it does not name. Its numbers are
  given for the wrong subject: kept, it is a swap missed.

Usage::

    python benchmarks/number_subjects.py [--data ../shared/data/pubmedqa] [--half check]

Run it with ``PYTHONPATH`` on another checkout's ``src`` to measure that code. Last line:
``sentences=... partial_dropped=... swapped=... swapped_caught=...``.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from medlit.checks.cited_numbers import numbers_in, unsourced_in
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.word_rarity import MIN_LETTERS, zipf
from pubmedqa_cases import both_halves, cases

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?!\d)")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")
#: A title word rarer than this in English is a subject of its article (as the check reads).
_SUBJECT_ZIPF = 4.0


def _subjects(text: str) -> list[str]:
    seen = dict.fromkeys(
        w for w in _WORD.findall(text) if len(w) >= MIN_LETTERS and zipf(w.lower()) < _SUBJECT_ZIPF
    )
    return list(seen)


def _checked_numbers(sentence: str) -> list[re.Match[str]]:
    return [
        m
        for m in _NUMBER.finditer(sentence)
        if float(m.group()) >= 10 or "." in m.group()
        if not (1900 <= float(m.group()) <= 2099 and "." not in m.group())
    ]


def partial(sentence: str, article: Article) -> str | None:
    """The sentence to the words giving its first number, after the title's subjects it does
    not name (None when it names them all)."""
    found = _checked_numbers(sentence)
    if len(found) < 2:
        return None
    cut = found[1].start()
    lowered = sentence.lower()
    context = [w for w in _subjects(article.title) if w.lower() not in lowered]
    if not context:
        return None
    return f"In the study of {' '.join(context)}, {sentence[:cut].rstrip()}"


def swapped(sentence: str, article: Article) -> str | None:
    """The sentence with a subject of the title it names put as one it does not name."""
    if len(_checked_numbers(sentence)) < 2:
        return None
    lowered = sentence.lower()
    named = [w for w in _subjects(article.title) if w.lower() in lowered]
    other = [w for w in _subjects(article.title) if w.lower() not in lowered]
    if not named or not other:
        return None
    return re.sub(rf"\b{re.escape(named[0])}\b", other[0], sentence, flags=re.I)


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=4)
    if loaded is None:
        return 1
    args, _records, articles = loaded
    counts: Counter[str] = Counter()
    shown: list[str] = []
    for pmid, article in sorted(articles.items()):
        wrong_in = unsourced_in({pmid: article})
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                written = partial(sentence, article)
                if written is None:
                    continue
                counts["sentences"] += 1
                if wrong_in(f"{written} [PMID:{pmid}]."):
                    counts["partial_dropped"] += 1
                    if len(shown) < args.show:
                        shown.append(f"partial {pmid}: {written[:140]}")
                swap = swapped(sentence, article)
                if swap is None or not numbers_in(swap):
                    continue
                counts["swapped"] += 1
                if wrong_in(f"{swap.rstrip('.')} [PMID:{pmid}]."):
                    counts["swapped_caught"] += 1
    print(f"{counts['sentences']} abstract sentences giving two numbers or more ({args.half} half)")
    print(f"  partial restatements left out   {counts['partial_dropped']}")
    print(f"  swapped subjects caught         {counts['swapped_caught']} of {counts['swapped']}")
    for line in shown:
        print(f"  e.g. {line}")
    figures = ("sentences", "partial_dropped", "swapped", "swapped_caught")
    print(" ".join(f"{k}={counts[k]}" for k in figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
