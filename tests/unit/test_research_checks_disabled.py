"""The checks turned off by id (``settings.checks.disabled``) are off in research too: a
research claim, an evidence-table cell and a report's sentence pass the check turned off,
and an unknown id is refused as it is for ``ask``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from medlit.checks.report_check import ground_text
from medlit.config import ResearchSettings, Settings
from medlit.research.evidence_table import build_evidence_table
from medlit.research.prompts import ExtractedClaim
from medlit.research.researcher import DeepResearcher
from medlit.research.synthesizer import generate_report
from medlit.types import AbstractSection, Article

SIMILAR = "Survival was similar in the aspirin and placebo groups."
ARTICLE = Article(
    pmid="1",
    title="Aspirin and survival after stroke",
    abstract=[AbstractSection(label="RESULTS", category="RESULTS", text=f"{SIMILAR} Rare.")],
)
QUESTION = "Does aspirin improve survival after stroke?"
# The claim reverses its quote's comparison: "higher" over "similar".
REVERSED = ExtractedClaim(
    claim="Survival was higher in the aspirin group than in the placebo group.",
    quote=SIMILAR,
    pmid="1",
)


def _researcher(disabled: frozenset[str] = frozenset()) -> DeepResearcher:
    return DeepResearcher(
        ResearchSettings(),
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        cache=None,
        embedder=None,
        visited=None,
        budget=None,  # type: ignore[arg-type]
        disabled_checks=disabled,
    )


def test_a_claim_check_turned_off_lets_its_claim_through_in_research() -> None:
    from medlit.research.models import SubQuestion

    question = SubQuestion(id="q1", text=QUESTION)
    assert _researcher()._finding(question, ARTICLE, REVERSED) is None
    finding = _researcher(frozenset({"claim-reverses-quote"}))._finding(question, ARTICLE, REVERSED)
    assert finding is not None and finding.quote == SIMILAR


def test_a_claim_check_turned_off_lets_its_cell_into_the_evidence_table() -> None:
    from medlit.research.evidence_table import _checked

    dropped: dict[str, str] = {}
    assert _checked("effect", REVERSED.claim, SIMILAR, ARTICLE, QUESTION, dropped) is None
    assert dropped == {"effect": "claim_reverses_quote"}
    off = {"claim-reverses-quote"}
    cell = _checked("effect", REVERSED.claim, SIMILAR, ARTICLE, QUESTION, {}, off)
    assert cell is not None and cell.quote == SIMILAR


def test_a_report_check_turned_off_keeps_its_sentence() -> None:
    support = {1: {"aspirin", "survival", "stroke"}}
    talk = "Aspirin improved survival after stroke, as the verified facts show [1]."
    grounded = ground_text(talk, QUESTION, support)
    assert grounded.removed == [talk] and grounded.text == ""
    assert [f.check for f in grounded.findings] == ["report-prompt-talk"]
    kept = ground_text(talk, QUESTION, support, {"report-prompt-talk"})
    assert kept.text == talk and kept.removed == []


async def test_an_unknown_check_id_is_refused_in_research_as_in_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        _researcher(frozenset({"no-such-check"}))
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        ground_text("Aspirin helps [1].", QUESTION, {1: {"aspirin"}}, {"no-such-check"})
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        await build_evidence_table([ARTICLE], QUESTION, None, ["no-such-check"])
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        await generate_report(
            QUESTION, [], [], {}, None, ResearchSettings(), disabled_checks=["no-such-check"]
        )  # type: ignore[arg-type]
    monkeypatch.setenv("MEDLIT_CHECKS_DISABLED", '["no-such-check"]')
    with pytest.raises(ValidationError, match=r"unknown check id\(s\): no-such-check"):
        Settings()
