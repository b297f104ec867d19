"""A number given for the opposite group: how often does the check catch it, and wrongly?

:func:`medlit.checks.swapped_groups.swapped_group` reads each number of a cited sentence with the
words just before it; "longer" where every sentence of the article giving that number says
"shorter" is a swap. Over the abstracts of the 500 PubMedQA articles of ``../shared``:

- **own sentences**: every abstract sentence held to its article without that sentence (the
  other sentences giving its numbers, often in other words, as an answer restates them). A
  sentence flagged here is a false alarm, or two sentences of the abstract that disagree.
- **swapped**: every abstract sentence with a word of a pair of opposites just before one of
  its numbers, that word turned to the other ("shorter" to "longer"), held to its article.
  Caught is what the check is for.

Usage::

    python benchmarks/swapped_groups.py [--data ../shared/data/pubmedqa]

Last line: ``sentences=... own_flagged=... swapped=... caught=...``.
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks.swapped_groups import (
    OPPOSITE,
    named_groups,
    numbers_with_words,
    swapped_group,
    swapped_named_group,
)
from medlit.text import split_sentences
from medlit.types import Article
from pubmedqa_cases import both_halves, cases, show_examples, without_sentence


def _swapped(sentence: str) -> str | None:
    """``sentence`` with the first opposite word before one of its numbers turned to its pair."""
    for windows in numbers_with_words(sentence).values():
        for words in windows:
            for word in sorted(words):
                other = OPPOSITE.get(word)
                if other and other not in words:
                    pattern = re.compile(rf"\b{word}\b", re.I)
                    return pattern.sub(other, sentence, count=1)
    return None


def _named(
    pmid: str, article: Article, counts: Counter[str], shown: dict[str, list[str]], show: int
) -> None:
    """The groups named by words (:func:`swapped_named_group`) in ``article``'s sentences:
    each sentence held to its abstract and to the rest of it, and with the word naming its
    first group turned to its pair, held to its abstract (which says the sentence as written,
    as an article says what the model paraphrased)."""
    for section in article.abstract:
        for sentence in split_sentences(section.text):
            if swapped_named_group(sentence, article):
                counts["named_own"] += 1
            if swapped_named_group(sentence, without_sentence(article, sentence)):
                counts["named_rest"] += 1
                if len(shown["named group, own flagged"]) < show:
                    shown["named group, own flagged"].append(f"{pmid}: {sentence[:110]}")
            groups = named_groups(sentence)
            if not groups:
                continue
            word = groups[0][0]
            swapped = re.sub(rf"\b{word}\b", OPPOSITE[word], sentence, count=1, flags=re.I)
            counts["named"] += 1
            if swapped_named_group(swapped, article):
                counts["named_caught"] += 1
            elif len(shown["named group swapped, missed"]) < show:
                shown["named group swapped, missed"].append(f"{pmid}: {swapped[:110]}")


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=8)
    if loaded is None:
        return 1
    args, records, articles = loaded
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {
        "own flagged": [],
        "swapped, missed": [],
        "named group, own flagged": [],
        "named group swapped, missed": [],
    }
    for pmid in records:
        article = articles.get(pmid)
        if article is None:
            continue
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                counts["sentences"] += 1
                if swapped_group(sentence, without_sentence(article, sentence)):
                    counts["own_flagged"] += 1
                    if len(shown["own flagged"]) < args.show:
                        shown["own flagged"].append(f"{pmid}: {sentence[:110]}")
                swapped = _swapped(sentence)
                if swapped is None:
                    continue
                counts["swapped"] += 1
                if swapped_group(swapped, article):
                    counts["caught"] += 1
                elif len(shown["swapped, missed"]) < args.show:
                    shown["swapped, missed"].append(f"{pmid}: {swapped[:110]}")
        _named(pmid, article, counts, shown, args.show)
    print(f"{'case':<46} {'sentences':>10} {'flagged':>8}")
    rows = (
        ("own, held to the rest of its abstract", counts["sentences"], counts["own_flagged"]),
        ("an opposite word before a number swapped", counts["swapped"], counts["caught"]),
        ("named group: own, held to its abstract", counts["sentences"], counts["named_own"]),
        ("named group: own, held to the rest of it", counts["sentences"], counts["named_rest"]),
        ("named group: its word swapped", counts["named"], counts["named_caught"]),
    )
    for label, total, flagged in rows:
        print(f"{label:<46} {total:>10} {flagged:>8}")
    show_examples(shown)
    print(
        f"sentences={counts['sentences']} own_flagged={counts['own_flagged']} "
        f"swapped={counts['swapped']} caught={counts['caught']} "
        f"named_own_flagged={counts['named_own']} named_rest_flagged={counts['named_rest']} "
        f"named={counts['named']} named_caught={counts['named_caught']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
