"""One check of the registry run over an answer and its findings applied, as the check node
runs it: for the unit tests of the checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from medlit.checks import REGISTRY, Verdict
from medlit.checks.apply import apply
from medlit.checks.context import CheckContext
from medlit.checks.draft import Draft
from medlit.checks.policy import warnings_of
from medlit.types import Article


class Checked(NamedTuple):
    """The answer after the check, and what the reader is told of it."""

    text: str
    warnings: list[str]


def run_check(
    check: str,
    text: str,
    articles: Mapping[str, Article],
    question: str = "",
    verdict: Verdict | None = None,
) -> tuple[Checked, CheckContext]:
    """Check ``check`` (an id of the registry) run over ``text`` and its findings applied;
    and its context (``data`` holds what it left for later checks)."""
    ctx = CheckContext(question, articles, Draft.parse(text), verdict)
    findings = list(REGISTRY[check].run(ctx))
    return Checked(apply(ctx.draft, findings).text, warnings_of(findings)), ctx


def checked(
    check: str,
    text: str,
    articles: Mapping[str, Article],
    question: str = "",
    verdict: Verdict | None = None,
) -> Checked:
    """The answer after check ``check``, and its warnings (:func:`run_check`)."""
    return run_check(check, text, articles, question, verdict)[0]


def left_for_later(
    check: str, text: str, articles: Mapping[str, Article], question: str = ""
) -> tuple[Checked, Any]:
    """The answer after check ``check``, and what it left for later checks (``ctx.data``)."""
    result, ctx = run_check(check, text, articles, question)
    return result, ctx.data.get(check)


def only_cited(text: str) -> str:
    """``text`` after ``citation-only`` (a sentence that only points at citations gives them
    to the statement before it)."""
    return checked("citation-only", text, {}).text
