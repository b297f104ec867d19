"""How an answer's sentences are worded: who speaks, and what a citation is.

A small model writes citations as authors ("the study by [1] found") and as subjects ("[1]
shows that"), copies its abstracts' first person ("our findings support") so that it reads as
the assistant's own study, and leaves a connective ("Specifically, ...") opening an answer
whose first sentence a check left out. These functions reword such sentences for the reader;
none changes what a sentence states.
"""

from __future__ import annotations

import re

from medlit.checks.context import CheckContext
from medlit.checks.declare import check
from medlit.checks.draft import rewrite_sentences
from medlit.checks.findings import Action, Finding

__all__ = ["opening_connective", "third_person", "unauthored", "without_opening_connective"]

# "the study by [PMID:1] found", "the study by [1] suggests": a citation read as an
# author (the web page shows it as a superscript number: "the study by ¹ found").
_BY_CITATION = re.compile(
    r"\b(stud(?:y|ies)|trials?|reviews?|(?:meta-)?analys[ie]s|articles?|reports?|papers?)"
    r"\s+by\s+(?=\[|\(PMID)",
    re.I,
)


# A citation that is a sentence's subject ("[PMID:1] shows that ...", "[1] and [2] found
# ..."): the page shows "¹ shows that ...". One citation, or a list of them, at the start of a
# line (after a bullet) or after a sentence's end, before a lower-case word.
_ONE_CITE = r"\[(?:PMID:\s*)?\d+(?:\s*,\s*(?:PMID:\s*)?\d+)*\]"
_SENTENCE_START = r"^[ \t]*(?:[-*•][ \t]+)?|(?<!\bal)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?][ \t]+"
# A connective opening the sentence before its subject: "Specifically, [PMID:1] reports".
_OPENER = r"(?:[A-Z][a-z]+(?: [a-z]+)?,[ \t]+)?"
_SUBJECT_CITES = re.compile(
    rf"((?:{_SENTENCE_START}){_OPENER})"
    rf"({_ONE_CITE}(?:(?:\s*,\s*|\s+and\s+|\s*){_ONE_CITE})*)[ \t]+(?=[a-z])",
    re.M,
)


def _study_subject(match: re.Match[str]) -> str:
    opening, cites = match.group(1), match.group(2)
    subject = "Studies" if len(re.findall(r"\d+", cites)) > 1 else "A study"
    if opening.rstrip().endswith(","):  # "Specifically, a study [1] reports"
        subject = subject[0].lower() + subject[1:]
    return f"{opening}{subject} {cites} "


# A connective that ties a sentence to the one before it: "Specifically, ...", "In addition,
# ...". Opening an answer (its first sentence left out by a check), it ties to nothing.
_LEADING_CONNECTIVE = re.compile(
    r"^(\s*)(?:specifically|additionally|moreover|furthermore|in addition|also|further"
    r"|similarly|likewise|in particular|notably|however|nevertheless|in contrast|conversely"
    r"|therefore|thus|hence|consequently|as a result|in fact|indeed|in summary"
    r"|in conclusion|overall|for example|for instance)\s*[,:]\s*",
    re.I,
)


def without_opening_connective(text: str) -> str:
    """``text`` without a connective its first sentence opens with ("Specifically, the study
    found ..." reads "The study found ...")."""
    match = _LEADING_CONNECTIVE.match(text)
    if match is None:
        return text
    rest = text[match.end() :]
    if rest[:1].islower() and not rest[1:2].isupper():  # "mRNA" stays as written
        rest = rest[0].upper() + rest[1:]
    return match.group(1) + rest


# The authors' first person, copied from an abstract: "our findings support ...", "we
# conclude that ...". In an answer it reads as the assistant's own study.
_OUR = re.compile(
    r"\b([Oo])ur\s+(?=(?:[a-z-]+\s+)?(?:findings?|results?|data|study|studies|analys[ie]s"
    r"|conclusions?|observations?|series|experience|cohort|trial|hypothesis|sample|survey"
    r"|work|investigation|patients|criteria|institution|center|centre|hospital|department"
    r"|unit|population|knowledge)\b)"
)
# "provided us with the opportunity": the authors, as the object
_US = re.compile(r"\b(provided|gave|allowed|enabled|led|prompted) us\b")
_WE = re.compile(
    r"\b([Ww])e\s+(?=(?:also\s+|further\s+|therefore\s+|thus\s+)?(?:found|conclude[ds]?"
    r"|observed|showed|demonstrated|report(?:ed)?|suggest(?:ed)?|propose[ds]?|recommend(?:ed)?"
    r"|believe|identified|noted|hypothesi[sz]ed?|studied|examined|investigated|analy[sz]ed"
    r"|evaluated|assessed|described|advocate)\b)"
)


def _authors(match: re.Match[str], possessive: bool) -> str:
    the = "The" if match.group(1).isupper() else "the"
    return f"{the} authors' " if possessive else f"{the} authors "


# "the studies [PMID:1]" over one citation ("as demonstrated by the studies [PMID:1]"): the
# plural for one article.
_STUDIES_OF_ONE = re.compile(rf"\b([Tt]he) studies(\s+{_ONE_CITE})(?![ \t]*(?:\[|,|and\b|&))")


def _one_study(match: re.Match[str]) -> str:
    cites = match.group(2)
    if len(re.findall(r"\d+", cites)) > 1:
        return match.group(0)
    return f"{match.group(1)} study{cites}"


# "The study by   also showed": a citation after "by" taken out by a check leaves the "by"
# and its spaces (two or more: never written so) before the verb.
_BY_NOBODY = re.compile(
    r"\b(stud(?:y|ies)|trials?|reviews?|(?:meta-)?analys[ie]s|articles?|reports?|papers?)"
    r"\s+by[ \t]{2,}(?=[a-z])",
    re.I,
)


def unauthored(text: str) -> str:
    """``text`` with "the study by [1]" written "the study [1]" and "[1] shows that" written
    "A study [1] shows that": a citation is no author, nor a sentence's subject; and "the
    studies [1]" over one citation written "the study [1]"."""
    text = _BY_NOBODY.sub(r"\1 ", _BY_CITATION.sub(r"\1 ", text))
    text = _SUBJECT_CITES.sub(_study_subject, text)
    return _STUDIES_OF_ONE.sub(_one_study, text)


def third_person(text: str) -> str:
    """A model's ``text`` with the authors' first person it copied made theirs: "our findings
    support" reads "the authors' findings support", "We conclude" reads "The authors
    conclude". Only in a sentence that cites an article: uncited, "we found no study on X" is
    the model's own voice. Not for quotations (the evidence digest quotes as written)."""

    def theirs(sentence: str) -> str:
        if not re.search(_ONE_CITE, sentence):
            return sentence
        sentence = _OUR.sub(lambda m: _authors(m, possessive=True), sentence)
        sentence = _US.sub(r"\1 the authors", sentence)
        return _WE.sub(lambda m: _authors(m, possessive=False), sentence)

    return rewrite_sentences(text, theirs)


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
