"""The checks of an answer, each a small unit the registry runs (:mod:`medlit.checks.registry`).

Each unit reads the answer in its :class:`~medlit.checks.context.CheckContext` and returns
findings; none edits the text (:func:`medlit.checks.apply.apply` does). Its docstring's first
paragraph says what kind of error it catches, and is what ``docs/checks.md`` lists.
"""

from __future__ import annotations

from medlit.checks.answer_wording import without_opening_connective
from medlit.checks.apply import apply
from medlit.checks.attribution import attributer, cited
from medlit.checks.borrowed_terms import borrowed_rewriter
from medlit.checks.citation_names import Misattribution, log_misattributed, misattributions_in
from medlit.checks.citations import citation_only_changes, citation_only_text, remove_citations
from medlit.checks.cited_authors import wrong_authors_rewriter
from medlit.checks.cited_designs import wrong_designs_rewriter
from medlit.checks.cited_numbers import unsourced_in
from medlit.checks.cited_subjects import unsaid_reader
from medlit.checks.cited_years import cited_years, years_taken_out
from medlit.checks.context import (
    CheckContext,
    cited_findings,
    edit_action,
    sentence_findings,
)
from medlit.checks.correlation_strength import overstated_rewriter
from medlit.checks.declare import check
from medlit.checks.draft import Draft
from medlit.checks.findings import Action, Finding
from medlit.checks.inferences import inferences_rewriter
from medlit.checks.level_changes import level_changes_in
from medlit.checks.off_question import borrowed_support_rewriter, off_question_in
from medlit.checks.policy import TOGETHER, warnings_of
from medlit.checks.question_remarks import without_question_remark
from medlit.checks.restated_titles import restated_in
from medlit.checks.reversed_findings import reversed_in
from medlit.checks.stated_aims import aims_in
from medlit.checks.swapped_groups import swapped_groups_in
from medlit.checks.swapped_subjects import swapped_subjects_in
from medlit.checks.unsupported import UnheldReader, Unsupported, unsupported_line
from medlit.log import get_logger
from medlit.text import all_of

__all__ = [
    "aims_as_findings",
    "borrowed_support",
    "borrowed_terms",
    "citation_only",
    "level_changes",
    "misattributed_names",
    "off_question",
    "opening_connective",
    "overstated_correlations",
    "restated_titles",
    "reversed_findings",
    "swapped_groups",
    "swapped_subjects",
    "uncited_attribution",
    "unsaid_subjects",
    "unsourced_numbers",
    "unsupported_conclusions",
    "unsupported_inferences",
    "wrong_authors",
    "wrong_designs",
    "wrong_years",
]

log = get_logger("agent.cited_years")


def _logged(findings: list[Finding], event: str) -> list[Finding]:
    """``findings``, logged as ``event`` (with how many) when there are any."""
    if findings:
        get_logger("agent").warning(event, removals=len(findings))
    return findings


@check("uncited-attribution", "cite")
def uncited_attribution(ctx: CheckContext) -> list[Finding]:
    """A sentence that cites nothing but states what one retrieved article found.

    It gets that article's citation (its content words must be mostly that article's), so
    that the checks after it hold the sentence to the article it came from.
    """

    attribute = attributer(ctx.articles)
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        if "".join(ctx.draft.lines[sentence.line]).strip().lower().startswith("verdict:"):
            continue
        pmid = attribute(sentence.text)
        if pmid is not None:
            replacement = cited(sentence.text, pmid)
            findings.append(
                Finding(
                    "uncited-attribution", "cite", "", (pmid,), sentence.index, sentence.text,
                    replacement,
                )
            )  # fmt: skip
    ctx.data["uncited-attribution"] = list(dict.fromkeys(p for f in findings for p in f.pmids))
    return findings


@check("citation-only", "cite")
def citation_only(ctx: CheckContext) -> list[Finding]:
    """A sentence that only points at citations ("This is supported by [PMID:2].").

    Its citations move to the statement before it, which is what they were cited for, so
    that every later check holds them to that statement.
    """
    draft = ctx.draft
    changes = citation_only_changes(draft.lines)
    if not changes:
        return []
    after = citation_only_text(draft.lines, changes)
    at = {(s.line, s.index - _first_of_line(draft, s.line)): s for s in draft.sentences}
    by_index = {at[key].index: new for key, new in changes.items()}
    if draft.edited(by_index) != after:  # blank lines closed up: the whole answer changes
        return [Finding("citation-only", "rewrite", replacement=after)]
    findings = []
    for index in sorted(by_index):
        sentence = draft.sentences[index]
        action, pmids = edit_action(sentence.text, by_index[index])
        replacement = by_index[index] if action in ("cite", "rewrite") else None
        findings.append(
            Finding("citation-only", action, "", pmids, index, sentence.text, replacement)  # type: ignore[arg-type]
        )
    return findings


def _first_of_line(draft: Draft, line: int) -> int:
    """The index of the first sentence of ``line`` in ``draft``."""
    return sum(len(pieces) for pieces in draft.lines[:line])


@check("misattributed-names", "sentence")
def misattributed_names(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that names only otherwise what the sentence names (vitamin C
    where the sentence says vitamin D, type 1 where it says type 2)."""

    wrong_in = misattributions_in(ctx.articles)
    findings: list[Finding] = []
    found: list[Misattribution] = []
    for sentence in ctx.draft.sentences:
        wrong = wrong_in(sentence.text)
        if not wrong:
            continue
        found += wrong
        kept = remove_citations(sentence.text, [m.pmid for m in wrong])
        action, pmids = edit_action(sentence.text, kept)
        findings += [
            Finding(
                "misattributed-names", action, m.warning(), pmids, sentence.index, sentence.text,  # type: ignore[arg-type]
                data={TOGETHER: m.together()},
            )
            for m in wrong
        ]  # fmt: skip
    ctx.data["misattributed-names"] = found
    log_misattributed(found)
    return findings


@check("unsourced-numbers", "sentence")
def unsourced_numbers(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that does not give a number the sentence gives, or gives it
    for the other group."""
    return _logged(
        cited_findings("unsourced-numbers", ctx, unsourced_in(ctx.articles)),
        "answer_numbers_unsourced",
    )


@check("swapped-groups", "sentence")
def swapped_groups(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that says the group the sentence names goes the other way
    ("longer" where the article says "shorter")."""
    return _logged(
        cited_findings("swapped-groups", ctx, swapped_groups_in(ctx.articles)),
        "answer_groups_swapped",
    )


@check("level-changes", "sentence")
def level_changes(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that gives a number of the sentence only as a level where the
    sentence says it as a change ("reduced ... by 4.2%" where the article's prevalence was
    4.2%), or only as a change where the sentence says it as a level."""
    return _logged(
        cited_findings("level-changes", ctx, level_changes_in(ctx.articles)),
        "answer_level_changes",
    )


@check("swapped-subjects", "sentence")
def swapped_subjects(ctx: CheckContext) -> list[Finding]:
    """A citation to an article whose finding the sentence copies word for word with another
    subject in front of it."""
    return _logged(
        cited_findings("swapped-subjects", ctx, swapped_subjects_in(ctx.articles)),
        "answer_subjects_swapped",
    )


@check("wrong-years", "sentence")
def wrong_years(ctx: CheckContext) -> list[Finding]:
    """A publication year ("published in 2012") that no article the sentence cites has."""
    findings: list[Finding] = []
    for sentence in ctx.draft.sentences:
        years = cited_years(sentence.text, ctx.articles)
        if not years:
            continue
        checked, told = years_taken_out(sentence.text, years)
        action: Action = "rewrite" if checked else "drop"
        findings += [
            Finding("wrong-years", action, message, (), sentence.index, sentence.text, checked)
            for message in told
        ]
    if findings:
        log.warning("answer_years_taken_out", removals=len(findings))
    return findings


@check("wrong-authors", "sentence")
def wrong_authors(ctx: CheckContext) -> list[Finding]:
    """An author ("Smith et al.") that no article the sentence cites lists."""
    rewrite, told = wrong_authors_rewriter(ctx.articles)
    found = sentence_findings("wrong-authors", ctx, rewrite, told)
    return _logged(found, "answer_authors_taken_out")


@check("wrong-designs", "sentence")
def wrong_designs(ctx: CheckContext) -> list[Finding]:
    """A study design ("a systematic review", "a randomised trial") that no article the
    sentence cites is, by its publication types and its abstract."""
    rewrite, told = wrong_designs_rewriter(ctx.articles)
    found = sentence_findings("wrong-designs", ctx, rewrite, told)
    return _logged(found, "answer_designs_taken_out")


@check("overstated-correlations", "sentence")
def overstated_correlations(ctx: CheckContext) -> list[Finding]:
    """ "Strong" said of a correlation whose own coefficient is under 0.5."""
    rewrite, told = overstated_rewriter()
    found = sentence_findings("overstated-correlations", ctx, rewrite, told)
    return _logged(found, "answer_correlations_overstated")


@check("reversed-findings", "sentence")
def reversed_findings(ctx: CheckContext) -> list[Finding]:
    """A citation to an article whose matching sentence states the opposite comparison
    ("higher" written over "similar", or the other way)."""

    wrong_in, reversed_from = reversed_in(ctx.articles)
    found = cited_findings("reversed-findings", ctx, wrong_in)
    ctx.data["reversed-findings"] = reversed_from
    return _logged(found, "answer_findings_reversed")


@check("unsupported-inferences", "sentence")
def unsupported_inferences(ctx: CheckContext) -> list[Finding]:
    """An inference ("..., suggesting that ...") that no article the sentence cites draws."""
    rewrite, told = inferences_rewriter(ctx.articles)
    found = sentence_findings("unsupported-inferences", ctx, rewrite, told)
    return _logged(found, "answer_inferences_dropped")


@check("aims-as-findings", "sentence")
def aims_as_findings(ctx: CheckContext) -> list[Finding]:
    """What a cited study set out to test, stated as what it found."""
    return _logged(
        cited_findings("aims-as-findings", ctx, aims_in(ctx.articles)), "answer_aims_as_findings"
    )


@check("restated-titles", "sentence")
def restated_titles(ctx: CheckContext) -> list[Finding]:
    """An answer to a cited article's title question that the article does not give (it
    concludes the other)."""

    wrong_in, said = restated_in(ctx.articles)
    found = cited_findings("restated-titles", ctx, wrong_in)
    ctx.data["restated-titles"] = said
    return _logged(found, "answer_titles_restated")


@check("off-question", "sentence")
def off_question(ctx: CheckContext) -> list[Finding]:
    """A citation of a sentence naming none of the question's subject terms to an article
    naming none of them either."""
    found = off_question_in(ctx.articles, ctx.question)
    return _logged(cited_findings("off-question", ctx, found), "answer_off_question")


@check("borrowed-support", "sentence")
def borrowed_support(ctx: CheckContext) -> list[Finding]:
    """A claim that an article supports the answer ("also supports this conclusion") when
    the article does not name every subject term of the question."""
    rewrite, told = borrowed_support_rewriter(ctx.articles, ctx.question)
    found = sentence_findings("borrowed-support", ctx, rewrite, told)
    return _logged(found, "answer_support_borrowed")


@check("unsaid-subjects", "sentence")
def unsaid_subjects(ctx: CheckContext) -> list[Finding]:
    """A citation to an article that never speaks of a subject or population of the question
    that the sentence names."""

    rewrite, unsaid = unsaid_reader(ctx.articles, ctx.question)
    found = sentence_findings("unsaid-subjects", ctx, rewrite, unsaid.warnings)
    ctx.data["unsaid-subjects"] = unsaid
    return _logged(found, "answer_subjects_unsaid")


@check("borrowed-terms", "sentence")
def borrowed_terms(ctx: CheckContext) -> list[Finding]:
    """A sentence carrying a technical term that only an article it does not cite says."""

    rewrite, told = borrowed_rewriter(ctx.articles, ctx.question)
    found = sentence_findings("borrowed-terms", ctx, rewrite, told)
    return _logged(found, "answer_terms_borrowed")


@check("unsupported-conclusions", "sentence")
def unsupported_conclusions(ctx: CheckContext) -> list[Finding]:
    """An uncited conclusion that uses the question's subject words together where no single
    retrieved article holds them together."""

    read = UnheldReader(ctx.articles, ctx.question, ctx.frame)
    findings: list[Finding] = []
    words: list[str] = []
    for sentence in ctx.draft.sentences:
        written = read(sentence.text)
        if written is None:
            continue
        words.extend(word for word in written if word not in words)
        said = all_of(written)
        findings.append(
            Finding(
                "unsupported-conclusions", "drop", unsupported_line(said), (), sentence.index,
                sentence.text, data={TOGETHER: unsupported_line(said, "{n}")},
            )
        )  # fmt: skip
    if findings:
        get_logger("agent.unsupported").warning(
            "answer_unsupported_dropped", sentences=len(findings)
        )
    left = apply(ctx.draft, findings).text  # what the notes hold the words to
    told = warnings_of(findings)
    ctx.data["unsupported-conclusions"] = Unsupported(left, told, words, read.spoken)
    return findings


@check("question-remarks", "cite")
def question_remarks(ctx: CheckContext) -> list[Finding]:
    """A remark about the question's form, not the literature ("This is a yes/no question.",
    "The question asks whether ..."): a sentence that is only the remark goes, a remark opening
    a sentence is taken off it. The reader is told nothing: no finding of an article is lost."""
    return sentence_findings("question-remarks", ctx, without_question_remark, [])


@check("opening-connective", "sentence")
def opening_connective(ctx: CheckContext) -> list[Finding]:
    """A sentence opening with a connective ("Specifically, ...", "However, ...") whose
    antecedent was left out: the connective goes."""
    draft = ctx.draft
    after = without_opening_connective(draft.text)
    if after == draft.text:
        return []
    first = draft.sentences[0]
    kept = without_opening_connective(first.text)
    if draft.edited({0: kept}) == after:  # the first sentence's own connective
        action: Action = "rewrite" if kept else "drop"
        replacement = kept or None
        return [Finding("opening-connective", action, "", (), 0, first.text, replacement)]
    return [Finding("opening-connective", "rewrite", replacement=after)]
