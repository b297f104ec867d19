"""A research report's section or summary held to its references by the registry's
``report`` checks, in order (:mod:`medlit.checks.report`), and their findings applied."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from medlit.checks.apply import apply
from medlit.checks.findings import Finding
from medlit.checks.registry import enabled
from medlit.checks.report import ReportContext
from medlit.words.frame import QuestionFrame

__all__ = ["GroundedSummary", "ground_text"]


@dataclass
class GroundedSummary:
    """The summary after grounding, the sentences removed from it, and what the checks
    found."""

    text: str
    removed: list[str] = field(default_factory=list)
    answered: bool = True
    findings: list[Finding] = field(default_factory=list, compare=False)


def ground_text(
    text: str,
    frame: QuestionFrame,
    support: Mapping[int, set[str]],
    disabled: Collection[str] = (),
) -> GroundedSummary:
    """Keep the sentences of ``text`` that rest on the references they cite.

    A sentence stays when no ``report`` check of the registry (but those in ``disabled``)
    leaves it out: it cites a reference in ``support``, every word the question asks about (as
    its ``frame`` reads it) that it uses occurs in what those references stand behind, it
    names nothing they name otherwise ("vitamin D" where their facts say vitamin C), and it
    does not speak of the prompt ("the verified facts", "their confidence level"). Paragraphs
    are kept; one left with no sentence goes.
    """
    ctx = ReportContext.parse(text, frame, support)
    findings: list[Finding] = []
    for check in enabled("report", disabled):
        found = list(check.run(ctx))
        ctx.left_out.update(
            f.sentence for f in found if f.action == "drop" and f.sentence is not None
        )
        findings += found
    paragraphs = [line for line in apply(ctx.draft, findings).text.split("\n") if line]
    removed = [ctx.drafted[i] for i in sorted(ctx.left_out)]
    return GroundedSummary("\n\n".join(paragraphs), removed, bool(paragraphs), findings)
