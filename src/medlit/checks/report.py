"""The ``report`` checks: each sentence of a research report's section or summary held to
what the references it cites stand behind (their titles and the verified facts citing them).

A report is read once into paragraphs of sentences (:class:`ReportContext`); each check
looks at the sentences no check before it left out and returns findings, which
:func:`medlit.checks.apply.apply` applies (:func:`medlit.checks.report_check.ground_text`
runs them). Sentences are cut by syntok ("0.67 vs. 1.58 mmol/l" is not two sentences), and a
piece without words ("(1.0, 0.96-1.05) [1]") belongs to the sentence before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from medlit.checks.declare import check
from medlit.checks.draft import Draft, Sentence
from medlit.checks.findings import Finding
from medlit.text import only_points, sentence_pieces
from medlit.words import data_lines
from medlit.words.frame import QuestionFrame
from medlit.words.grounding import cited_numbers, without_frame, without_numbers_cited
from medlit.words.qualified_names import mismatched, qualified_names
from medlit.words.search_plan import asked_terms
from medlit.words.topics import normalise_topic

__all__ = [
    "ReportContext",
    "citation_only",
    "misnamed",
    "overcounts",
    "prompt_frame",
    "prompt_talk",
    "says_nothing",
    "unbacked_words",
    "uncited",
]

# Words about the prompt, not the literature: a model retells the prompt's confidence tags
# in a section ("as indicated by the low confidence level in the verified facts [1]"). What
# the facts rest on is the section's evidence note's to say, counted from the facts themselves
# (the model's retelling of the prompt's confidence tags can be wrong); a "95% confidence
# level" is a statistic.
_PROMPT_TALK = re.compile(
    r"\b(?:verified|given|provided|listed|above) facts?\b|\bfacts? (?:given|provided|listed|"
    r"above)\b|(?<![\d%] )\bconfidence (?:level|score|rating)s?\b"
    # "While low confidence in the efficacy is noted, ...": the prompt's tag retold
    r"|\b(?:low|moderate|medium|high)[- ]confidence\b",
    re.I,
)
# The model echoes the prompt's fact lines: "... individuals. (numbers: 1.0, 0.9-1.1) [1]"
_NUMBERS_ECHO = re.compile(r"\(numbers?:\s*([^()]*)\)", re.I)
# "The verified facts indicate that X [1]": the prompt's frame around a finding.
_PROMPT_FRAME = re.compile(
    r"^(?:the|these)\s+(?:verified\s+|given\s+|provided\s+)?facts\s+(?:on\s+this\s+topic\s+)?"
    r"(?:indicate|show|suggest|state|demonstrate|reveal)s?\s+that\s+(?=\w)",
    re.I,
)
# Words that count studies, and the least number each says ("several": 2).
_COUNTS = {word: int(n) for word, n in (line.split("\t") for line in data_lines("count_words.tsv"))}
_COUNTED = re.compile(
    rf"\b({'|'.join(_COUNTS)}|\d+)\s+(?:[a-z-]+\s+){{0,2}}?"
    r"(?:studies|trials|articles|reports|papers|sources|reviews|cohorts|analyses)\b",
    re.I,
)


@dataclass
class ReportContext:
    """A report's text as the ``report`` checks read it: its paragraphs as the lines of a
    draft (a blank line between two), its sentences as their pieces; the question; and what
    each reference number stands behind (``support``: its words, and its qualified names as
    "head qualifier")."""

    frame: QuestionFrame
    support: Mapping[int, set[str]]
    draft: Draft
    #: each sentence as written (after the prompt's number lines are folded in)
    drafted: list[str]
    #: each sentence as checked (the prompt's frame taken off, by ``report-prompt-frame``)
    said: dict[int, str] = field(default_factory=dict)
    #: the sentences a check has left out
    left_out: set[int] = field(default_factory=set)

    @classmethod
    def parse(
        cls, text: str, frame: QuestionFrame, support: Mapping[int, set[str]]
    ) -> ReportContext:
        """The context of ``text``, a report section or summary citing "[n]"."""
        lines: list[tuple[str, ...]] = []
        drafted: list[str] = []
        for paragraph in re.split(r"\n\s*\n", _NUMBERS_ECHO.sub(r"(\1)", text).strip()):
            sentences = _sentences(paragraph)
            if lines:
                lines.append(())
            lines.append(tuple(f"{s} " for s in sentences[:-1]) + tuple(sentences[-1:]))
            drafted += sentences
        return cls(frame, support, Draft(tuple(lines)), drafted)

    def open(self) -> list[Sentence]:
        """The sentences no check has left out yet."""
        return [s for s in self.draft.sentences if s.index not in self.left_out]

    def text(self, sentence: Sentence) -> str:
        """``sentence`` as checked."""
        return self.said.get(sentence.index, self.drafted[sentence.index])

    def cited(self, sentence: Sentence) -> set[int]:
        """The reference numbers ``sentence`` cites that stand behind something."""
        return cited_numbers(self.text(sentence)) & set(self.support)

    def backing(self, sentence: Sentence) -> set[str]:
        """What the references ``sentence`` cites stand behind."""
        return set().union(*(self.support[n] for n in self.cited(sentence)))

    def leave_out(self, check: str, why: str, wrong: Callable[[Sentence], bool]) -> list[Finding]:
        """A ``drop`` for each open sentence ``wrong`` holds, saying ``why``."""
        message = f"a sentence was left out: {why}"
        return [
            Finding(check, "drop", message, sentence=s.index, text=self.drafted[s.index])
            for s in self.open()
            if wrong(s)
        ]


@check("report-prompt-frame", "report")
def prompt_frame(ctx: ReportContext) -> list[Finding]:
    """A sentence framed by the prompt ("The verified facts indicate that X [1]"): the frame
    goes, and the sentence is checked as what it frames."""
    findings = []
    for sentence in ctx.open():
        drafted = ctx.drafted[sentence.index]
        unframed = without_frame(drafted, _PROMPT_FRAME)
        if unframed != drafted:
            ctx.said[sentence.index] = unframed
            spacing = sentence.text[len(drafted) :]
            replacement = unframed + spacing
            findings.append(
                Finding(
                    "report-prompt-frame", "rewrite", sentence=sentence.index, text=drafted,
                    replacement=replacement,
                )
            )  # fmt: skip
    return findings


@check("report-uncited", "report")
def uncited(ctx: ReportContext) -> list[Finding]:
    """A sentence citing no reference that stands behind a fact (or none at all)."""
    return ctx.leave_out(
        "report-uncited", "it cites no reference the facts stand behind", lambda s: not ctx.cited(s)
    )


@check("report-unbacked-words", "report")
def unbacked_words(ctx: ReportContext) -> list[Finding]:
    """A word the question asks about, as its frame reads it (its subject, outcome,
    comparison, populations and other words), in a sentence that none of the references it
    cites stands behind."""
    anchors = asked_terms(ctx.frame)

    def unbacked(sentence: Sentence) -> bool:
        words = normalise_topic(without_numbers_cited(ctx.text(sentence))).split()
        return not (anchors & set(words)) <= ctx.backing(sentence)

    return ctx.leave_out(
        "report-unbacked-words", "its references do not speak of what it says", unbacked
    )


@check("report-misnamed", "report")
def misnamed(ctx: ReportContext) -> list[Finding]:
    """A sentence naming otherwise what its references name ("vitamin D" where their facts
    say vitamin C)."""

    def otherwise(sentence: Sentence) -> bool:
        names = _names_in(ctx.backing(sentence))
        return bool(mismatched(qualified_names(ctx.text(sentence)), names))

    return ctx.leave_out(
        "report-misnamed", "it names otherwise what its references name", otherwise
    )


@check("report-says-nothing", "report")
def says_nothing(ctx: ReportContext) -> list[Finding]:
    """A sentence with no word besides its citations and numbers."""
    return ctx.leave_out(
        "report-says-nothing", "it has no word", lambda s: not _says_something(ctx.text(s))
    )


@check("report-citation-only", "report")
def citation_only(ctx: ReportContext) -> list[Finding]:
    """A sentence that only points at its citations ("This is supported by [1].")."""

    def points(sentence: Sentence) -> bool:
        return only_points(without_numbers_cited(ctx.text(sentence)))

    return ctx.leave_out("report-citation-only", "it only points at its citations", points)


@check("report-overcounts", "report")
def overcounts(ctx: ReportContext) -> list[Finding]:
    """More studies spoken of than the references cited ("The evidence from two studies
    [1]"), a count the facts do not give themselves ("a meta-analysis of 12 trials" backs
    "12 trials [1]")."""

    def more(sentence: Sentence) -> bool:
        references = len(ctx.cited(sentence))
        return _overcounts(ctx.text(sentence), references, ctx.backing(sentence))

    return ctx.leave_out("report-overcounts", "it counts more studies than it cites", more)


@check("report-prompt-talk", "report")
def prompt_talk(ctx: ReportContext) -> list[Finding]:
    """Words about the prompt, not the literature ("the verified facts", "their confidence
    level", "low-confidence")."""

    def talks(sentence: Sentence) -> bool:
        return bool(_PROMPT_TALK.search(ctx.text(sentence)))

    return ctx.leave_out("report-prompt-talk", "it speaks of the prompt", talks)


def _names_in(words: set[str]) -> dict[str, frozenset[str]]:
    names: dict[str, set[str]] = {}
    for word in words:
        if " " in word:
            head, qualifier = word.split(" ", 1)
            names.setdefault(head, set()).add(qualifier)
    return {head: frozenset(quals) for head, quals in names.items()}


def _overcounts(sentence: str, references: int, backing: set[str]) -> bool:
    """Whether ``sentence`` speaks of more studies than the ``references`` it cites, a count
    its facts (``backing``) do not give themselves."""
    for match in _COUNTED.finditer(sentence):
        word = match.group(1).lower()
        count = _COUNTS.get(word) or int(word)
        if count > references and word not in backing:
            return True
    return False


def _says_something(sentence: str) -> bool:
    """Whether a sentence has a word besides its citations and numbers."""
    return bool(re.search(r"[^\W\d_]", without_numbers_cited(sentence)))


def _sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences; a piece without words ("(1.0, 0.96-1.05) [1]", "[2].") goes
    with the sentence before it, whose evidence it cites."""
    sentences: list[str] = []
    for piece in sentence_pieces(paragraph):
        sentence = " ".join(piece.split())
        if not sentence:
            continue
        if sentences and not _says_something(sentence):
            sentences[-1] += " " + sentence
        else:
            sentences.append(sentence)
    return sentences
