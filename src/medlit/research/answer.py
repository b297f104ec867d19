"""The answer first: the executive summary opens with what the evidence table's quotes give.

For a list, factoid or definition question (and any question that is not yes/no) the summary
opens with the answer items its rows hold (the ``answer`` cell, else the type's result cell),
each cited; for a yes/no question with the verdict the rows' directions give, cited. Only rows
whose article is one of the report's references and backs a verified fact count: nothing is
said without a citation, and a report that draws no conclusion gets no answer line. A row
counts toward the verdict only where its article speaks of the question's subject and outcome
as its frame reads them (:func:`medlit.words.search_plan.speaks_of`), as the digest's
conclusions do: a conclusion about another drug, site or disease is set aside, and the line
says which when every study read is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from medlit.checks import unspoken_in
from medlit.research.models import COLUMNS, EvidenceRow, NarrativeReport, VerifiedFact
from medlit.research.synthesizer import citation_key
from medlit.text import either_of
from medlit.types import Article
from medlit.words.frame import QuestionFrame
from medlit.words.search_plan import speaks_of
from medlit.words.stance import SourceStance, Stance, decide_verdict

__all__ = ["ANSWER_HEAD", "VERDICT_HEAD", "answer_first", "answer_line", "verdict_of"]

ANSWER_HEAD = "**Answer from the articles' own sentences:**"
VERDICT_HEAD = "**Verdict:**"
#: Answer items shown at most.
MAX_ITEMS = 5


def _cited(rows: Sequence[EvidenceRow], numbers: dict[str, int]) -> list[tuple[int, EvidenceRow]]:
    return [(numbers[r.article_key], r) for r in rows if r.article_key in numbers]


def _items(rows: list[tuple[int, EvidenceRow]], kind: str) -> list[str]:
    names = ["answer", *(c for c in COLUMNS[kind] if c != "population")]
    items: list[str] = []
    for number, row in rows:
        cell = next((c for n in names if (c := getattr(row, n)) is not None), None)
        if cell is None:
            continue
        text = " ".join(cell.text.split()).rstrip(".")
        shown = f'"{text}"' if cell.quote is not None and text == cell.quote.rstrip(".") else text
        items.append(f"{shown} [{number}]")
    return items[:MAX_ITEMS]


#: A row's direction as the stance of its study's conclusion (:func:`decide_verdict`).
_STANCE: dict[str, Stance] = {"supports": "yes", "opposes": "no", "no difference": "no"}
#: The designs that alone may decide a verdict, as a systematic review or RCT does the
#: digest's (:func:`medlit.words.stance.decide_verdict`).
_STRONG = frozenset({"systematic review/meta-analysis", "RCT"})


def _cite(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in sorted(set(numbers)))


def _not_about(frame: QuestionFrame, read: Sequence[Article]) -> str:
    """What none of ``read`` speaks of: ``frame``'s subject, or its subject and outcome
    together (the digest's words for it); "the question's subject" when the frame read none
    (then only a study not at hand is set aside)."""
    if not frame.subject:
        return "the question's subject"
    if not frame.outcome or not any(
        speaks_of(frame, a.everything_said, ("subject",)) for a in read
    ):
        return frame.subject
    return f"{frame.subject} and {frame.outcome} together"


def _about_question(
    rows: list[tuple[int, EvidenceRow]], frame: QuestionFrame, articles: Mapping[str, Article]
) -> list[tuple[int, EvidenceRow]]:
    """The rows whose article (in ``articles``, by key) speaks of ``frame``'s subject and
    outcome; a row whose article is not at hand cannot be shown to: it is set aside."""
    return [
        (n, r)
        for n, r in rows
        if r.article_key in articles and speaks_of(frame, articles[r.article_key].everything_said)
    ]


def _verdict(
    rows: list[tuple[int, EvidenceRow]], frame: QuestionFrame, articles: Mapping[str, Article]
) -> str:
    """The verdict line: yes or no only by the digest's policy (two studies agreeing, or one
    systematic review or RCT, none against; right in 26 of 28 such verdicts on the unseen
    half of PubMedQA, where one study's reading was right in 0.79), else uncertain, with the
    way the rows lean said to be no verdict. Only rows whose study (its ``articles``, by key)
    speaks of the question's subject and outcome count (:func:`_about_question`); none of them:
    uncertain, naming the studies set aside and what they do not speak of. A yes or no whose
    studies none speaks of a population the question names is uncertain, as the digest's is
    (the checks' :func:`unspoken_in`)."""
    about = _about_question(rows, frame, articles)
    if not about:
        read = [articles[r.article_key] for _, r in rows if r.article_key in articles]
        return (
            f"{VERDICT_HEAD} Uncertain: none of the studies read {_cite([n for n, _ in rows])} "
            f"speaks of {_not_about(frame, read)}, so their conclusions are set aside."
        )
    rows = about
    sources = [
        SourceStance(
            key=str(n), stance=_STANCE.get(r.direction, "uncertain"), strong=r.design in _STRONG
        )
        for n, r in rows
    ]
    verdict, _ = decide_verdict(frame.question, sources)
    yes = [n for n, r in rows if r.direction == "supports"]
    no = [n for n, r in rows if r.direction in {"opposes", "no difference"}]
    if verdict in ("yes", "no"):
        behind = yes if verdict == "yes" else no
        read = [
            articles[r.article_key] for n, r in rows if n in behind and r.article_key in articles
        ]
        unspoken = either_of(unspoken_in(frame, read)) if read else ""
        if unspoken:
            return (
                f"{VERDICT_HEAD} Uncertain: none of the studies read {_cite(behind)} speaks of "
                f"{unspoken}: what they found may not hold for {unspoken}."
            )
    if verdict == "yes":
        return f"{VERDICT_HEAD} Yes, as the conclusions of the studies read say {_cite(yes)}."
    if verdict == "no":
        return f"{VERDICT_HEAD} No, as the conclusions of the studies read say {_cite(no)}."
    if yes and no:
        return (
            f"{VERDICT_HEAD} Uncertain: the studies point different ways (yes {_cite(yes)}; "
            f"no {_cite(no)})."
        )
    if yes or no:
        way, cited = ("yes", yes) if yes else ("no", no)
        return (
            f"{VERDICT_HEAD} Uncertain: too little evidence to say; the studies read lean {way} "
            f"{_cite(cited)}, which is not a verdict."
        )
    return f"{VERDICT_HEAD} Uncertain: no study read concludes either way."


def answer_line(
    rows: Sequence[EvidenceRow],
    frame: QuestionFrame,
    numbers: dict[str, int],
    articles: Mapping[str, Article],
) -> str:
    """The summary's first line for ``frame``'s question, from ``rows`` cited by ``numbers``
    (article key -> reference number; ``articles`` by key, for the subject, outcome and
    population the verdict must be about); "" when no cited row answers."""
    cited = _cited(rows, numbers)
    if not cited:
        return ""
    if frame.yes_no and frame.kind not in {"list", "definition"}:
        return _verdict(cited, frame, articles)
    items = _items(cited, frame.kind)
    return f"{ANSWER_HEAD} " + "; ".join(items) + "." if items else ""


def answer_first(
    report: NarrativeReport,
    rows: Sequence[EvidenceRow],
    frame: QuestionFrame,
    facts: Sequence[VerifiedFact],
    articles: Mapping[str, Article],
) -> str:
    """The report's executive summary opening with :func:`answer_line` from the rows whose
    article backs one of ``facts`` (once: a summary that already opens with one has it
    replaced)."""
    summary = report.executive_summary.strip()
    if not report.answered:
        return summary
    if summary.startswith((ANSWER_HEAD, VERDICT_HEAD)):
        summary = summary.partition("\n\n")[2].strip()
    backed = {citation_key(source) for fact in facts for source in fact.sources}
    numbers = {r.article_key: r.number for r in report.references if r.article_key in backed}
    lead = answer_line(rows, frame, numbers, articles)
    return f"{lead}\n\n{summary}".strip() if lead else summary


def verdict_of(summary: str) -> str | None:
    """The verdict a report's summary opens with (:func:`answer_first`): "Yes", "No" or
    "Uncertain"; None when it opens with none (not a yes-or-no question, or not answered)."""
    text = summary.strip()
    if not text.startswith(VERDICT_HEAD):
        return None
    word = text.removeprefix(VERDICT_HEAD).split(maxsplit=1)
    return word[0].strip(".,:;") if word else None
