"""What a study set out to test, stated as what it found: how often is it caught, and wrongly?

:func:`medlit.checks.stated_aims.stated_aim` holds a cited sentence to the aim sentences of its
article ("The purpose of this study was to explore whether ..."). Over the abstracts of the 500
PubMedQA articles of ``../shared``:

- **findings**: every result and conclusion sentence, cited to its own article (as the model
  quotes a finding), and to its article without that sentence (the worst case: a paraphrase
  whose words the aim says more of than any other sentence left). Flagged is a false alarm.
- **aims as findings**: every aim sentence with its framing cut off ("The aim of this study
  was to assess if BD correlates with outcomes" reads "BD correlates with outcomes"), cited to
  its own article. One whose article's conclusion answers it yes is rightly let through (what
  the study set out to show, it found); of the others, caught is what the check is for, and
  one the results say in as many words is rightly let through too.

Usage::

    python benchmarks/stated_aims.py [--data ../shared/data/pubmedqa]

Last line: ``findings=... own_flagged=... without_flagged=... aims=... confirmed=... caught=...``.
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks.contradicted import concludes
from medlit.checks.stated_aims import aim_sentences, stated_aim
from medlit.text import split_sentences
from pubmedqa_cases import both_halves, cases, show_examples, without_sentence

# The framing an aim sentence opens with, up to what it asks: "... to explore whether", else
# "... to evaluate the".
_ASKS = re.compile(r"^.*?\b(?:whether|if)\s+", re.I)
_FRAMING = re.compile(
    r"^.*?\bto (?:determine|assess|evaluate|investigate|examine|explore|compare|test|clarify"
    r"|establish|analy[sz]e|ascertain)\w*(?: the)?\s+",
    re.I,
)


def as_finding(aim: str) -> str | None:
    """``aim`` with its framing cut off, or None when it has none to cut."""
    cut = _ASKS.sub("", aim, count=1)
    if cut == aim:
        cut = _FRAMING.sub("", aim, count=1)
    if cut == aim or len(cut.split()) < 4:
        return None
    return cut[0].upper() + cut[1:]


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=8)
    if loaded is None:
        return 1
    args, records, articles = loaded
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {
        "finding flagged (own article)": [],
        "finding flagged (without it)": [],
        "aim as finding, missed": [],
    }

    def show(case: str, line: str) -> None:
        if len(shown[case]) < args.show:
            shown[case].append(line)

    for pmid in records:
        article = articles.get(pmid)
        if article is None:
            continue
        for section in article.abstract:
            if not section.is_result:
                continue
            for sentence in split_sentences(section.text):
                counts["findings"] += 1
                cited = f"{sentence} [PMID:{pmid}]"
                if stated_aim(cited, article):
                    counts["own_flagged"] += 1
                    show("finding flagged (own article)", f"{pmid}: {sentence[:110]}")
                if stated_aim(cited, without_sentence(article, sentence)):
                    counts["without_flagged"] += 1
                    show("finding flagged (without it)", f"{pmid}: {sentence[:110]}")
        for aim in aim_sentences(article):
            finding = as_finding(aim)
            if finding is None:
                continue
            counts["aims"] += 1
            if concludes(article, aim) == "yes":
                counts["confirmed"] += 1  # what it set out to show, it found: let through
            elif stated_aim(f"{finding} [PMID:{pmid}]", article):
                counts["caught"] += 1
            else:
                show("aim as finding, missed", f"{pmid}: {finding[:110]}")

    rows = [
        ("result and conclusion sentences", counts["findings"]),
        ("  flagged, cited to their own article", counts["own_flagged"]),
        ("  flagged, cited to it without them", counts["without_flagged"]),
        ("aim sentences said as findings", counts["aims"]),
        ("  the conclusion answers the aim yes (let through)", counts["confirmed"]),
        ("  caught, of the others", counts["caught"]),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>6}")
    show_examples(shown)
    print(
        f"findings={counts['findings']} own_flagged={counts['own_flagged']} "
        f"without_flagged={counts['without_flagged']} aims={counts['aims']} "
        f"confirmed={counts['confirmed']} caught={counts['caught']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
