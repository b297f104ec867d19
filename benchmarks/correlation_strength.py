"""A correlation called strong with a weak coefficient: how often do abstracts themselves say so?

:func:`medlit.checks.correlation_strength.overstated` takes "strong" (high, excellent, close,
robust, good, substantial) out of a cited sentence whose coefficients are all under 0.5. Over
the abstracts of the 500 PubMedQA articles of ``../shared``:

- **own**: every abstract sentence calling a correlation, association or agreement strong and
  giving a coefficient, read as if an answer cited it. Flagged is where the authors' own word
  would be taken out (their "strong" for a coefficient under 0.5).
- **weakened**: the same sentences with every coefficient scaled to a fifth (a strong
  correlation said of a weak one). Caught is what the check is for.

Usage::

    python benchmarks/correlation_strength.py [--data ../shared/data/pubmedqa]

Last line: ``sentences=... named_strong=... own_flagged=... weakened_caught=...``.
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks.correlation_strength import STRENGTH_WORDS, overstated
from medlit.text import split_sentences
from pubmedqa_cases import both_halves, cases, show_examples

_DECIMAL = re.compile(r"(?<![\d.])0?\.(\d+)\b")


def weakened(sentence: str) -> str:
    """``sentence`` with each decimal under 1 divided by five."""
    return _DECIMAL.sub(lambda m: f"{float('0.' + m.group(1)) / 5:.2f}", sentence)


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=8)
    if loaded is None:
        return 1
    args, records, articles = loaded
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {"own flagged": [], "weakened, missed": []}
    for pmid in records:
        article = articles.get(pmid)
        if article is None:
            continue
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                counts["sentences"] += 1
                if not STRENGTH_WORDS.search(sentence) or not _DECIMAL.search(sentence):
                    continue
                counts["named_strong"] += 1
                if overstated(sentence):
                    counts["own_flagged"] += 1
                    if len(shown["own flagged"]) < args.show:
                        shown["own flagged"].append(f"{pmid}: {sentence[:110]}")
                elif overstated(weakened(sentence)):
                    counts["weakened_caught"] += 1
                elif len(shown["weakened, missed"]) < args.show:
                    shown["weakened, missed"].append(f"{pmid}: {weakened(sentence)[:110]}")
    rows = (
        ("abstract sentences", counts["sentences"]),
        ("  calling a correlation strong, with a decimal", counts["named_strong"]),
        ("  flagged as written", counts["own_flagged"]),
        ("  coefficients weakened, caught", counts["weakened_caught"]),
    )
    for label, value in rows:
        print(f"{label:<50} {value:>6}")
    show_examples(shown)
    print(
        f"sentences={counts['sentences']} named_strong={counts['named_strong']} "
        f"own_flagged={counts['own_flagged']} weakened_caught={counts['weakened_caught']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
