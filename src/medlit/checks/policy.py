"""What the findings decide about an answer: the note put first, the verdict, and whether the
evidence digest answers instead. Pure functions of the findings and a few facts measured on
the checked text; no reading, no model, no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from medlit.checks.findings import Finding
from medlit.text import either_of
from medlit.types import VerdictCause

__all__ = [
    "EDITS",
    "TOGETHER",
    "WITHHOLDING_NOTES",
    "Decision",
    "Facts",
    "after_verdict",
    "check_cause",
    "decide",
    "note_data",
    "verdict_after",
    "warnings_of",
]

#: The actions that change (or tell of) the answer's text: their messages are the warnings.
EDITS = frozenset({"drop", "uncite", "cite", "rewrite", "warn"})

#: The key of a finding's ``data`` holding the line that tells of all the findings of its check
#: with its message at once, ``{n}`` standing for how many ("{n} sentences were left out: ...").
TOGETHER = "together"

Fallback = Literal["unsupported", "best-article-lost", "against-articles"]


@dataclass(frozen=True)
class Facts:
    """What the policy needs besides the findings, measured on the checked answer."""

    kept: frozenset[str]  # PMIDs the checked text cites
    best_pmid: str | None  # the best-matching article's
    best_names_question: bool  # it has a PMID and mentions every subject term of the question
    best_says_unaddressed: bool  # it says every word the uncited conclusions left unaddressed
    states_only_otherwise: bool  # the text states only the answer opposite to the verdict
    is_yes_no: bool
    verdict_given: bool  # the model wrote a verdict line after its reasoning
    # a statement is left that cites an article about the question's subject and names what
    # it asks about (:func:`medlit.checks.answering.answering_statements`)
    answered: bool = False


@dataclass(frozen=True)
class Decision:
    """Before the verdict checks: the digest instead, or the note first and the verdict."""

    fallback: Fallback | None = None
    note: str = ""
    blank: bool = False  # the checked text is not shown (uncited prose would read as answer)
    verdict: Literal["keep", "uncertain", "reread"] = "keep"
    on_question: bool = False  # the best article names all the question asks about
    cause: VerdictCause | None = None  # why the verdict is made Uncertain, when it is
    # a word of the question went unaddressed, but a cited statement left answers it: the
    # verdict follows what is left (:func:`medlit.checks.answering.followed_verdict`)
    follows: bool = False


def warnings_of(findings: Sequence[Finding]) -> list[str]:
    """What the reader is told was left out or changed, in the order of the checks: each
    finding's message, but the findings of one check with the same message and a
    :data:`TOGETHER` line are told once, where the first is, by that line when there are
    several ("2 sentences were left out: ...")."""
    told = [f for f in findings if f.action in EDITS and f.message]
    counts = Counter((f.check, f.message) for f in told if TOGETHER in f.data)
    lines: list[str] = []
    done: set[tuple[str, str]] = set()
    for finding in told:
        key = (finding.check, finding.message)
        if key not in counts:
            lines.append(finding.message)
        elif key not in done:
            done.add(key)
            together = str(finding.data[TOGETHER])
            lines.append(together.replace("{n}", str(counts[key])) if counts[key] > 1 else key[1])
    return lines


def note_data(findings: Sequence[Finding], check: str, key: str) -> Any:
    """What the note of ``check`` holds under ``key`` (empty when it found nothing)."""
    for finding in findings:
        if finding.check == check and finding.action == "note":
            return finding.data.get(key)
    return []


def _note(findings: Sequence[Finding], check: str) -> str:
    return next((f.message for f in findings if f.check == check and f.action == "note"), "")


def decide(findings: Sequence[Finding], facts: Facts, nothing_supported: str) -> Decision:
    """The decision before the verdict checks run (``nothing_supported``: the note when no
    statement citing evidence is left)."""
    warned = bool(warnings_of(findings))
    missing = note_data(findings, "left-unanswered", "missing")
    unspoken = note_data(findings, "unaddressed-words", "words")
    unnamed = note_data(findings, "unmentioned-terms", "terms")
    firm = any(note_data(findings, check, key) for check, key in _FIRM_NOTES)
    # A word of the question unaddressed: the verdict follows what is left when a statement
    # left answers the question, else it is withheld.
    unheld = any(note_data(findings, check, key) for check, key in _UNHELD_NOTES) or unnamed
    noted = firm or any(note_data(findings, check, key) for check, key in _UNHELD_NOTES)
    on_question = facts.best_names_question and not (missing or unnamed)
    if on_question and warned and not facts.kept:
        return Decision(fallback="unsupported", on_question=on_question)
    lost = facts.best_pmid not in facts.kept and facts.best_says_unaddressed
    if on_question and unspoken and lost:
        return Decision(fallback="best-article-lost", on_question=on_question)
    note, blank = _first_note(findings, warned and not facts.kept, nothing_supported)
    if missing and not facts.kept:
        blank = True
    verdict: Literal["keep", "uncertain", "reread"] = "keep"
    cause = None
    follows = False
    if facts.is_yes_no:
        if firm or (unheld and not facts.answered) or (warned and not facts.kept):
            verdict = "uncertain"
            cause = _uncertain_cause(findings, noted or bool(unnamed))
        elif unheld or not facts.verdict_given or warned or facts.states_only_otherwise:
            verdict, follows = "reread", bool(unheld)
    return Decision(None, note, blank, verdict, on_question, cause, follows)


#: The notes that withhold a verdict whatever is left: nothing cited answers the question as
#: asked (its subject named otherwise, its population or its subject unspoken of).
_FIRM_NOTES = (
    ("left-unanswered", "missing"),
    ("populations-unspoken", "words"),
    ("cited-off-subject", "subject"),
)
#: The notes that withhold it unless a statement left answers the question: a word of the
#: question only sentences left out used.
_UNHELD_NOTES = (("unaddressed-words", "words"), ("untold-subjects", "words"))

#: The notes that withhold a verdict, in the order :func:`decide` reads them, with the key of
#: what each found.
WITHHOLDING_NOTES = (
    ("left-unanswered", "missing"),
    ("unaddressed-words", "words"),
    ("untold-subjects", "words"),
    ("populations-unspoken", "words"),
    ("cited-off-subject", "subject"),
    ("unmentioned-terms", "terms"),
)


def check_cause(finding: Finding) -> VerdictCause:
    """The verdict withheld because of ``finding``: its check, its sentence, its message."""
    detail = finding.message or f"the check {finding.check} found {finding.action}"
    return VerdictCause(
        kind="check", check=finding.check, sentence=finding.text.strip() or None, detail=detail
    )


def _uncertain_cause(findings: Sequence[Finding], noted: bool) -> VerdictCause:
    """Why :func:`decide` made the verdict Uncertain: the first note that withholds it, else
    the first sentence (or citation) a check took out, which left nothing citing evidence."""
    if noted:
        for check, key in WITHHOLDING_NOTES:
            for finding in findings:
                if finding.check == check and finding.action == "note" and finding.data.get(key):
                    return check_cause(finding)
    for finding in findings:
        if finding.action in EDITS and finding.message:
            cause = check_cause(finding)
            return cause.model_copy(
                update={"detail": f"{cause.detail} (nothing citing evidence was left)"}
            )
    # decide() reaches here only with a note or an edit: fail closed all the same.
    return VerdictCause(kind="check", detail="the checks left nothing citing evidence")


def _first_note(
    findings: Sequence[Finding], nothing_left: bool, nothing_supported: str
) -> tuple[str, bool]:
    """The note put first, and whether the text goes (nothing citing evidence is left)."""
    if note := _note(findings, "left-unanswered"):
        return note, False
    if nothing_left:
        unnamed = note_data(findings, "unmentioned-terms", "terms")
        if unnamed:
            mentions = f"None of the retrieved articles mentions {either_of(unnamed)}."
            return f"{mentions} {nothing_supported}", True
        return nothing_supported, True
    for check in (
        "unaddressed-words",
        "untold-subjects",
        "cited-off-subject",
        "populations-unspoken",
    ):
        if note := _note(findings, check):
            return note, False
    return _note(findings, "unmentioned-terms"), False


def verdict_after(verdict: str | None, findings: Sequence[Finding]) -> str | None:
    """The verdict once the ``flip_verdict`` findings are taken in order."""
    for finding in findings:
        if finding.action == "flip_verdict":
            verdict = finding.data["to"]
    return verdict


def after_verdict(
    findings: Sequence[Finding],
    decision: Decision,
    best_pmid: str | None,
    left: frozenset[str],
    left_about_question: bool,
) -> tuple[Fallback | None, bool]:
    """After the verdict checks: the digest instead (when a sentence stated against its
    articles went and nothing citing evidence, or only articles on something else, is left),
    and whether the verdict turns Uncertain (it does when such a sentence went)."""
    against = [f for f in findings if f.check == "against-conclusions" and f.action in EDITS]
    if not against:
        return None, False
    if not left:
        return "against-articles", False
    if decision.on_question and best_pmid not in left and not left_about_question:
        return "best-article-lost", False
    return None, True
