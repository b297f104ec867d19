"""A number said as a change where its article gives it as a level: how often caught, and wrongly?

:func:`medlit.checks.level_changes.level_change_in` reads each percentage of a cited sentence as a
change ("reduced by 4.2%", "a 30% reduction") or a level ("was 4.2%", "4.2% of patients"), and
flags it when every percentage of the article giving that number is the other. Over the abstracts
of the PubMedQA articles of ``../shared``:

- **own sentences**: every abstract sentence held to its article, and to its article without
  that sentence (the other sentences giving its numbers, often in other words, as an answer
  restates them). A sentence flagged here is a false alarm.
- **level said as a change**: every abstract sentence with a level percentage after "was",
  "were", "is" or "are" rewritten as a change ("was 4.2%" to "was reduced by 4.2%"), or a
  "N% of" made "N% more of", or "(N%" made "(a N% rise", held to its article.
- **change said as a level**: every abstract sentence with "by N%" rewritten "to N%",
  "a N% reduction" (increase, ...) rewritten "a rate of N%", or "was N% lower" (higher, ...)
  rewritten "was N%", held to its article.

Caught is what the check is for; an article that gives the same number elsewhere as the other
kind leaves the rewrite uncaught, as it should.

Usage::

    python benchmarks/level_changes.py [--data ../shared/data/pubmedqa] [--half tune|check|both]

Last line: ``sentences=... own_flagged=... rest_flagged=... to_change=... to_change_caught=...
to_level=... to_level_caught=...``.
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks.level_changes import level_change_in
from medlit.text import split_sentences
from medlit.types import Article
from pubmedqa_cases import both_halves, cases, show_examples, without_sentence

_PERCENT = r"\d+(?:\.\d+)?\s?%"
_AS_CHANGE = (
    (re.compile(rf"\b(was|were|is|are) ({_PERCENT})(?!\s*(?:of|CI|confidence)\b)", re.I),
     r"\1 reduced by \2"),
    (re.compile(rf"(?<![\w.,])({_PERCENT}) of\b", re.I), r"\1 more of"),
    (re.compile(rf"\(({_PERCENT})(?!\s*(?:of|CI|confidence)\b)", re.I), r"(a \1 rise"),
)  # fmt: skip
_CHANGE_NOUNS = "reduction|decrease|increase|decline|drop|rise|improvement"
_AS_LEVEL = (
    (re.compile(rf"\bby ({_PERCENT})", re.I), r"to \1"),
    (re.compile(rf"(?:\ban? )?({_PERCENT}) (?:relative )?(?:{_CHANGE_NOUNS})\b", re.I),
     r"a rate of \1"),
    (re.compile(rf"\b(was|were|is|are) ({_PERCENT}) (?:lower|higher|less|more|greater)\b", re.I),
     r"\1 \2"),
)  # fmt: skip


def _rewritten(sentence: str, rewrites: tuple[tuple[re.Pattern[str], str], ...]) -> str | None:
    """``sentence`` with its first place a rewrite fits rewritten, or None."""
    for pattern, replacement in rewrites:
        if pattern.search(sentence):
            return pattern.sub(replacement, sentence, count=1)
    return None


def _one(
    pmid: str,
    article: Article,
    sentence: str,
    counts: Counter[str],
    shown: dict[str, list[str]],
    show: int,
) -> None:
    """One abstract sentence held to its article and the rest of it, and rewritten each way."""
    counts["sentences"] += 1
    counts["own_flagged"] += bool(level_change_in(sentence, article))
    if level_change_in(sentence, without_sentence(article, sentence)):
        counts["rest_flagged"] += 1
        if len(shown["own flagged (rest of abstract)"]) < show:
            shown["own flagged (rest of abstract)"].append(f"{pmid}: {sentence[:120]}")
    for name, rewrites, label in (
        ("to_change", _AS_CHANGE, "level said as a change, missed"),
        ("to_level", _AS_LEVEL, "change said as a level, missed"),
    ):
        altered = _rewritten(sentence, rewrites)
        if altered is None:
            continue
        counts[name] += 1
        if level_change_in(altered, article):
            counts[f"{name}_caught"] += 1
        elif len(shown[label]) < show:
            shown[label].append(f"{pmid}: {altered[:120]}")


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=8)
    if loaded is None:
        return 1
    args, records, articles = loaded
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {
        "own flagged (rest of abstract)": [],
        "level said as a change, missed": [],
        "change said as a level, missed": [],
    }
    for pmid in records:
        article = articles.get(pmid)
        if article is None:
            continue
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                _one(pmid, article, sentence, counts, shown, args.show)
    print(f"{'case':<46} {'sentences':>10} {'flagged':>8}")
    rows = (
        ("own, held to its abstract", counts["sentences"], counts["own_flagged"]),
        ("own, held to the rest of its abstract", counts["sentences"], counts["rest_flagged"]),
        ("a level rewritten as a change", counts["to_change"], counts["to_change_caught"]),
        ("a change rewritten as a level", counts["to_level"], counts["to_level_caught"]),
    )
    for label, total, flagged in rows:
        print(f"{label:<46} {total:>10} {flagged:>8}")
    show_examples(shown)
    print(
        " ".join(
            f"{name}={counts[name]}"
            for name in (
                "sentences", "own_flagged", "rest_flagged", "to_change", "to_change_caught",
                "to_level", "to_level_caught",
            )
        )
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
