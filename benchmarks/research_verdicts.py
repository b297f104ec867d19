"""How right is a research report's verdict line, and does it say yes to a turned question?

A research report on a yes/no question opens with a verdict from its evidence table's rows
(:func:`medlit.research.answer.answer_line`): each row's direction is read from its article's
conclusion (:func:`medlit.research.evidence_table.conclusion_direction`). Here each PubMedQA
PQA-L yes/no question (``../shared/data/pubmedqa/pqal_dev.json``) gets the rows a search would
give it: its own article and the :data:`NEAREST` records saying most of its words
(``digest_verdicts.nearest_others``, as ``turned_questions.py``), those about the question
(:func:`medlit.words.conclusions.about_question`), each with the design its publication types
give, and the articles by key, as the job holds them (the line counts a row only where its
article speaks of the question's subject and outcome, and caveats populations). The verdict
line is read as yes, no or uncertain and judged against the expert label (a yes or no on a
"maybe" is wrong). The turned questions of ``turned_questions.py`` whose experts said yes are
asked too: a "yes" to one is wrong (``turned_yes``).

Usage::

    python benchmarks/research_verdicts.py [--data ../shared/data/pubmedqa/pqal_dev.json]

``off_subject``: yes or no lines citing a study that does not speak of the question's subject
and outcome (a conclusion about another question counted). Another version's line on the
same questions: run it with ``PYTHONPATH`` on that version's ``src``. Last line:
``given=... precision=... off_subject=... turned_yes=...`` (per half with ``--half both``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from digest_verdicts import DEFAULT_DATA, nearest_others
from medlit.research.answer import answer_line
from medlit.research.evidence_table import design_of
from medlit.research.models import EvidenceRow
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.types import Article
from medlit.words.conclusions import about_question
from medlit.words.frame import read_frame
from medlit.words.grounding import word_stems
from medlit.words.search_plan import speaks_of
from pubmedqa_cases import add_half, both_halves, in_half
from turned_questions import contrast_set

try:
    from medlit.research.evidence_table import conclusion_direction
except ImportError:  # the code before it was named
    from medlit.research.evidence_table import (  # type: ignore[attr-defined,no-redef]
        _direction as conclusion_direction,
    )

NEAREST = 4


def _direction(question: str, article: Article) -> str:
    """The row's direction, by the code measured (its frame-taking form, or the older one)."""
    import inspect

    first = next(iter(inspect.signature(conclusion_direction).parameters))
    asked: Any = read_frame(question) if first == "frame" else question
    return conclusion_direction(asked, article)[0]


def verdict(question: str, articles: list[Article]) -> tuple[str | None, bool]:
    """The verdict the report's line gives (yes, no, uncertain), None when it gives none; and
    whether a yes or no cites a study that does not speak of the question's subject and
    outcome as its frame reads them (:func:`medlit.words.search_plan.speaks_of`)."""
    on = about_question(question)
    rows = [
        EvidenceRow(
            pmid=a.pmid,
            article_key=a.key,
            design=design_of(a)[0],
            direction=_direction(question, a),
        )
        for a in articles
        if on(a)
    ]
    numbers = {row.article_key: n for n, row in enumerate(rows, start=1)}
    held = {a.key: a for a in articles}  # as the job holds them: what each row's study says
    frame = read_frame(question)
    line = answer_line(rows, frame, numbers, held).lower()
    keys = {n: key for key, n in numbers.items()}
    cited = [held[keys[int(n)]] for n in re.findall(r"\[(\d+)\]", line) if int(n) in keys]
    for word in ("yes", "no", "uncertain"):
        if line.startswith(f"**verdict:** {word}"):
            off = word != "uncertain" and not all(
                speaks_of(frame, a.everything_said) for a in cited
            )
            return word, off
    return None, False


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_half(parser)
    args = parser.parse_args(argv)
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    if not (args.data.exists() and xml.exists()):
        print(f"skipped: {args.data} or {xml} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    every: dict[str, Any] = json.loads(args.data.read_text())
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    said = {p: word_stems(f"{r['QUESTION']} {' '.join(r['CONTEXTS'])}") for p, r in every.items()}
    mine = in_half(every, args.half)

    def asked(question: str, pmid: str) -> tuple[str | None, bool]:
        near = [pmid, *nearest_others(question, pmid, said, NEAREST)]
        return verdict(question, [articles[p] for p in near if p in articles])

    given = right = questions = off_subject = 0
    for pmid, record in sorted(mine.items()):
        question = str(record["QUESTION"])
        if not read_frame(question).yes_no:
            continue
        questions += 1
        said_here, off = asked(question, pmid)
        off_subject += off
        if said_here in ("yes", "no"):
            given += 1
            right += said_here == record["final_decision"]
    turned = [row for row in contrast_set(mine) if row[1] == "yes"]
    turned_yes = sum(asked(turn, pmid)[0] == "yes" for pmid, _, _, turn, _ in turned)
    precision = right / given if given else 0.0
    print(
        f"{'questions':>9} {'given':>6} {'right':>6} {'precision':>10} {'off_subject':>12} "
        f"{'turned_yes':>11}"
    )
    print(
        f"{questions:>9} {given:>6} {right:>6} {precision:>10.3f} {off_subject:>12} "
        f"{turned_yes:>7}/{len(turned)}"
    )
    print(
        f"given={given} precision={precision:.3f} off_subject={off_subject} "
        f"turned_yes={turned_yes} turned={len(turned)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
