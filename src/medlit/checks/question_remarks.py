"""Remarks a model makes about the question rather than the literature.

The prompt tells a model what kind of question it answers ("This is a yes/no question. First
say..."), and a model repeats it to the reader: "This is a yes/no question.", "The question asks
whether aspirin prevents stroke.", "Since this is a yes-or-no question, the answer rests on
...". Such a remark states nothing the articles say: a sentence that is only the remark is
left out, and a remark opening a sentence that goes on to say something is taken off it.
"""

from __future__ import annotations

import re

from medlit.checks.citations import extract_pmids
from medlit.checks.context import CheckContext, sentence_findings
from medlit.checks.declare import check
from medlit.checks.findings import Finding

__all__ = ["QUESTION_FORM", "question_remarks", "without_question_remark"]

# What a question's form is called: "yes/no", "yes-or-no", "binary", "closed", "open-ended",
# "comparative"... (a remark on its subject, "an important question", is not one of these, nor
# "an open question", which says the evidence has not settled it).
_FORM = (
    r"(?:yes[ -]?(?:/|or|-)[ -]?no|true[ -]?(?:/|or)[ -]?false|binary|closed(?:-ended)?"
    r"|open-ended|polar|dichotomous|multiple[- ]choice|two-part|compound|factual"
    r"|definitional|comparative|descriptive|clinical|research|straightforward|simple"
    r"|complex|broad|specific)"
)
# "this", "this question", "the question", "your question", "the user's question", "it".
_SUBJECT = r"(?:this|it|(?:this|the|your|the user's|the above)\s+(?:\w+\s+)?question)"
_BE = r"(?:is|appears to be|seems to be|can be (?:seen|read|treated) as|is essentially)"
# "... is a yes/no question", "... is a clinical yes-or-no one".
_IS_A_FORM = (
    rf"{_BE}\s+an?\s+(?:[\w/-]+\s+){{0,2}}?{_FORM}(?:\s+[\w/-]+){{0,2}}?\s+(?:question|one)"
)
# "the question asks whether ...", "this question is asking about ...".
_ASKS = r"(?:asks|is asking|inquires|enquires|wants to know)\s+(?:whether|if|about|for|how|what)"
_QUESTION_SUBJECT = r"(?:this|the|your|the user's|the above)\s+(?:\w+\s+)?question"

#: A sentence that is a remark about the question's form and nothing else.
QUESTION_FORM = re.compile(
    rf"^\s*(?:{_SUBJECT}\s+{_IS_A_FORM}|{_QUESTION_SUBJECT}\s+{_ASKS}\b)[^.!?]*[.!?]?\s*$",
    re.I,
)
# The remark opening a sentence that goes on: "Since this is a yes/no question, ...", "As a
# yes/no question, ...", "To answer this yes/no question, ...", "This is a yes/no question,
# and ..." (taken off, the rest is the sentence).
_OPENING_REMARK = re.compile(
    rf"^(\s*)(?:(?:since|as|because|given that)\s+{_SUBJECT}\s+{_IS_A_FORM}"
    rf"|as\s+an?\s+(?:[\w/-]+\s+)?{_FORM}\s+question"
    rf"|to answer\s+(?:this|the|your)\s+(?:{_FORM}\s+)?question"
    rf"|{_SUBJECT}\s+{_IS_A_FORM}(?:\s*,\s*|\s*;\s*)(?:and|so|but)?)\s*[,;:]?\s+",
    re.I,
)


def without_question_remark(sentence: str) -> str:
    """``sentence`` without a remark about the question's form: ``""`` when the remark is the
    whole sentence and it cites nothing, the rest of it (capitalised) when the remark opens a
    sentence that goes on, the sentence as it was otherwise."""
    if not extract_pmids(sentence) and QUESTION_FORM.match(sentence):
        return ""
    match = _OPENING_REMARK.match(sentence)
    if match is None:
        return sentence
    rest = sentence[match.end() :]
    if not rest.strip() or not rest[0].isalpha():
        return sentence
    return match.group(1) + rest[0].upper() + rest[1:]


@check("question-remarks", "cite")
def question_remarks(ctx: CheckContext) -> list[Finding]:
    """A remark about the question's form, not the literature ("This is a yes/no question.",
    "The question asks whether ..."): a sentence that is only the remark goes, a remark opening
    a sentence is taken off it. The reader is told nothing: no finding of an article is lost."""
    return sentence_findings("question-remarks", ctx, without_question_remark, [])
