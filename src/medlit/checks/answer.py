"""A model's answer held to its evidence: the registry's checks run in order, their findings
applied, and the policy's decision on the note, the verdict and the digest fallback.

::

    answer ─► citations enforced ─► Draft ─► cite, sentence, note checks (findings, applied)
          ─► policy.decide ─► verdict (kept, Uncertain, or read again) ─► verdict checks
          ─► policy.after_verdict ─► note + answer + verdict, or the digest instead
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field, replace

from medlit.checks.answer_wording import opening_connective
from medlit.checks.answering import (
    VOCABULARY_NOTES,
    answering_statements,
    asks_unheld_change,
    followed_verdict,
    outcome_unmentioned,
    title_matched_verdict,
)
from medlit.checks.apply import apply
from medlit.checks.citations import Verdict, enforce_citations, extract_pmids, verdict_first
from medlit.checks.context import CheckContext
from medlit.checks.contradicted import concludes, states_only_otherwise
from medlit.checks.draft import Draft
from medlit.checks.findings import Finding
from medlit.checks.policy import (
    EDITS,
    WITHHOLDING_NOTES,
    Decision,
    Facts,
    Fallback,
    after_verdict,
    check_cause,
    decide,
    note_data,
    verdict_after,
    warnings_of,
)
from medlit.checks.registry import Stage, enabled
from medlit.checks.unsupported import says_all
from medlit.embeddings.base import Embedder
from medlit.log import get_logger
from medlit.types import Article, VerdictCause
from medlit.words.conclusions import about_question
from medlit.words.frame import QuestionFrame
from medlit.words.unmentioned import unmentioned_terms

__all__ = ["CheckedAnswer", "ReadVerdict", "check_answer"]

log = get_logger("agent")

#: Reads the verdict of a checked answer: (question, text) -> yes, no, uncertain or None.
ReadVerdict = Callable[[str, str], Awaitable[Verdict | None]]


@dataclass
class CheckedAnswer:
    """The answer after its checks, or why the digest answers instead (``fallback``)."""

    text: str
    verdict: Verdict | None
    cited: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    fallback: Fallback | None = None
    cause: VerdictCause | None = None  # why the verdict is Uncertain (None unless it is)

    @property
    def warnings(self) -> list[str]:
        """What the reader is told was left out or changed."""
        return warnings_of(self.findings)


#: The notes that withhold a verdict whatever an article's title asks: every withholding note
#: but those of words alone (what is cited speaks of another population, or names what the
#: question asks otherwise than its article; a note added later is one of them until shown not).
_FIRM_ALWAYS = tuple(
    (check, key) for check, key in WITHHOLDING_NOTES if check not in VOCABULARY_NOTES
)


def _words_alone(decision: Decision, findings: list[Finding]) -> bool:
    """Whether ``decision`` withholds the verdict for the question's words alone (a note of
    :data:`~medlit.checks.answering.VOCABULARY_NOTES`), with something cited still shown."""
    return (
        decision.verdict == "uncertain"
        and not decision.blank
        and decision.cause is not None
        and decision.cause.check in VOCABULARY_NOTES
        and not any(note_data(findings, check, key) for check, key in _FIRM_ALWAYS)
    )


async def _earned(
    ctx: CheckContext,
    decision: Decision,
    findings: list[Finding],
    embedder: Embedder | None,
    read_verdict: ReadVerdict,
) -> Decision:
    """``decision`` with its verdict kept when it withheld it for words alone
    (:func:`_words_alone`) and an article still cited asks the question itself
    (:func:`~medlit.checks.answering.title_matched_verdict`): the verdict is then its
    conclusion's, which the model's own verdict (its line, else its reading of what is left)
    must be. Unchanged without an ``embedder``."""
    if embedder is None or not _words_alone(decision, findings):
        return decision

    async def model_verdict() -> Verdict | None:
        if ctx.verdict is not None:
            return ctx.verdict
        return await read_verdict(ctx.question, ctx.draft.text)

    earned = await title_matched_verdict(
        ctx.frame, ctx.question, ctx.draft.text, ctx.articles, embedder, model_verdict
    )
    if earned is None:
        return decision
    ctx.verdict, pmid = earned
    log.info("verdict_title_matched", verdict=ctx.verdict, pmid=pmid)
    # The note that withheld it said the question's words are not the articles': the reader
    # is told what the verdict rests on instead.
    title = ctx.articles[pmid].title.strip()
    note = f"The verdict rests on “{title}” [PMID:{pmid}], which asks the question in other words."
    return replace(decision, verdict="keep", cause=None, follows=False, note=note)


def _run(ctx: CheckContext, stage: Stage, disabled: Collection[str]) -> list[Finding]:
    """Run the enabled checks of ``stage`` in order, each on the answer the ones before left."""
    found: list[Finding] = []
    for check in enabled(stage, disabled):
        findings = list(check.run(ctx))
        ctx.draft = apply(ctx.draft, findings)
        ctx.verdict = verdict_after(ctx.verdict, findings)  # type: ignore[assignment]
        found += findings
    return found


def _model_cause(detail: str) -> VerdictCause:
    return VerdictCause(kind="model", detail=detail)


def _after_flips(cause: VerdictCause | None, findings: list[Finding]) -> VerdictCause | None:
    """The cause once the ``flip_verdict`` findings are taken in order (as
    :func:`verdict_after` takes them): a flip to Uncertain is its check's doing."""
    for finding in findings:
        if finding.action == "flip_verdict":
            cause = check_cause(finding) if finding.data["to"] == "uncertain" else None
    return cause


def _facts(
    ctx: CheckContext,
    findings: list[Finding],
    best: Article,
    is_yes_no: bool,
    given: bool,
    embedder: Embedder | None,
) -> Facts:
    kept = frozenset(extract_pmids(ctx.draft.text))
    unspoken = note_data(findings, "unaddressed-words", "words")
    otherwise = (
        is_yes_no
        and ctx.verdict is not None
        and states_only_otherwise(ctx.draft.text, ctx.verdict, ctx.question)
    )
    return Facts(
        kept=kept,
        best_pmid=best.pmid,
        best_names_question=bool(best.pmid)
        and not unmentioned_terms(ctx.question, [best], ctx.frame),
        best_says_unaddressed=bool(unspoken) and says_all(best, unspoken),
        states_only_otherwise=otherwise,
        is_yes_no=is_yes_no,
        verdict_given=given,
        answered=is_yes_no
        and not asks_unheld_change(ctx.frame, _unheld_words(findings))
        and not outcome_unmentioned(ctx.frame, note_data(findings, "unmentioned-terms", "terms"))
        and bool(answering_statements(ctx.frame, ctx.draft, ctx.articles, embedder)),
    )


def _unheld_words(findings: list[Finding]) -> list[str]:
    """The words of the question the notes say went unaddressed or unmentioned."""
    return [
        *note_data(findings, "unaddressed-words", "words"),
        *note_data(findings, "untold-subjects", "words"),
        *note_data(findings, "unmentioned-terms", "terms"),
    ]


async def _settle_verdict(
    ctx: CheckContext,
    decision: Decision,
    read_verdict: ReadVerdict,
    given: bool,
    cause: VerdictCause | None,
    embedder: Embedder | None = None,
) -> VerdictCause | None:
    """Settle the verdict as ``decision`` says; the cause of an Uncertain one after it."""
    if decision.blank:
        ctx.draft = Draft.parse("")  # uncited prose would read as the answer
    if decision.verdict == "uncertain":
        ctx.verdict = "uncertain"
        return decision.cause
    if decision.verdict == "reread" and decision.follows:
        # A word of the question went unaddressed: the verdict follows the cited statements
        # left that answer the question.
        verdict, follow_cause = await followed_verdict(
            ctx.frame,
            ctx.draft,
            ctx.articles,
            ctx.question,
            lambda: read_verdict(ctx.question, ctx.draft.text),
            embedder,
        )
        ctx.verdict = verdict
        return follow_cause
    if decision.verdict == "reread":
        # Never a default nor an opening guess, nor a verdict line against every answer the
        # text states: ask which way the checked text goes.
        log.info("verdict_reread" if given else "no_verdict_line", mode="llm")
        ctx.verdict = await read_verdict(ctx.question, ctx.draft.text)
        if ctx.verdict in ("yes", "no") and states_only_otherwise(
            ctx.draft.text, ctx.verdict, ctx.question
        ):
            # Still against them: it gives way when every article the text cites concludes,
            # by rule, what they state (two readers agreeing against the model).
            other: Verdict = "no" if ctx.verdict == "yes" else "yes"
            cited = {p for p in extract_pmids(ctx.draft.text) if p in ctx.articles}
            if cited and all(concludes(ctx.articles[p], ctx.question) == other for p in cited):
                ctx.verdict = other
                return None
        return _model_cause("the model read its checked answer as uncertain")
    return cause


def _finished(ctx: CheckContext, note: str, disabled: Collection[str]) -> str:
    """The note, then the answer (its first statement may have gone since: an opening
    connective left without its antecedent is taken out), the verdict first."""
    if "opening-connective" not in disabled:
        ctx.draft = apply(ctx.draft, opening_connective(ctx))
    body = ctx.draft.text
    text = f"{note}\n\n{body.strip()}" if note and body.strip() else note or body
    return verdict_first(ctx.verdict, text) if ctx.verdict is not None else text


def _against_conclusions(judged: list[Finding]) -> Finding:
    """The against-conclusions edit that made the verdict Uncertain."""
    return next(f for f in judged if f.check == "against-conclusions" and f.action in EDITS)


def _after_judged(
    ctx: CheckContext, judged: list[Finding], decision: Decision, best: Article
) -> tuple[Fallback | None, bool]:
    """:func:`~medlit.checks.policy.after_verdict` on what the verdict checks left."""
    left = frozenset(extract_pmids(ctx.draft.text))
    on = about_question(ctx.question)
    left_about = any(on(ctx.articles[p]) for p in left if p in ctx.articles)
    return after_verdict(judged, decision, best.pmid, left, left_about)


async def check_answer(
    question: str,
    text: str,
    verdict: Verdict | None,
    articles: Mapping[str, Article],
    best: Article,
    *,
    is_yes_no: bool,
    read_verdict: ReadVerdict,
    nothing_supported: str,
    disabled: Collection[str] = (),
    frame: QuestionFrame | None = None,
    embedder: Embedder | None = None,
) -> CheckedAnswer:
    """``text`` (the model's answer, its verdict line taken off) held to ``articles``.

    Args:
        question: the standalone question; ``text``: the answer.
        verdict: the verdict line the model wrote after its reasoning, if any.
        articles: the retrieved articles by PMID; ``best`` the best-matching one.
        is_yes_no: whether it asks yes or no; ``read_verdict`` reads a checked text's verdict.
        nothing_supported: the note when nothing citing evidence is left; ``disabled``: ids of
            checks not to run; ``frame``: the question's frame, as the ask read it; ``embedder``:
            titles' and near names' (:func:`_earned`, :func:`~medlit.checks.answering.names_near`).
    """
    check = enforce_citations(text, articles)
    draft = Draft.parse(check.text)
    ctx = CheckContext(question, articles, draft, verdict, frame=frame, embedder=embedder)
    said_uncertain = verdict == "uncertain"
    cause = _model_cause("the model's verdict line said uncertain") if said_uncertain else None
    findings = _run(ctx, "cite", disabled)
    attributed = ctx.data.get("uncited-attribution", [])
    if attributed:
        log.info("citations_attributed", pmids=attributed)
        check.cited.extend(p for p in attributed if p not in check.cited)
    findings += _run(ctx, "sentence", disabled) + _run(ctx, "note", disabled)
    cause = _after_flips(cause, findings)
    facts = _facts(ctx, findings, best, is_yes_no, verdict is not None, embedder)
    decision = decide(findings, facts, nothing_supported)
    answer = CheckedAnswer(ctx.draft.text, ctx.verdict, check.cited, check.removed, findings)
    if decision.fallback is not None:
        answer.fallback = decision.fallback
        return answer
    decision = await _earned(ctx, decision, findings, embedder, read_verdict)
    cause = await _settle_verdict(ctx, decision, read_verdict, verdict is not None, cause, embedder)
    judged = _run(ctx, "verdict", disabled)
    cause = _after_flips(cause, judged)
    answer.findings = findings = findings + judged
    fallback, uncertain = _after_judged(ctx, judged, decision, best)
    answer.verdict = ctx.verdict
    if fallback is not None:
        answer.fallback = fallback
        return answer
    if uncertain:
        ctx.verdict, cause = "uncertain", check_cause(_against_conclusions(judged))
    answer.text = _finished(ctx, decision.note, disabled)
    answer.verdict = ctx.verdict
    answer.cause = cause if ctx.verdict == "uncertain" else None
    answer.cited = [p for p in check.cited if p in set(extract_pmids(answer.text))]
    return answer
