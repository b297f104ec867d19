"""The checks turned off by id (``settings.checks.disabled``) are off in research too: a
research claim, an evidence-table cell and a report's sentence pass the check turned off,
and an unknown id is refused as it is for ``ask``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from medlit.checks import ground_text
from medlit.config import ResearchSettings, Settings
from medlit.research.evidence_table import build_evidence_table
from medlit.research.prompts import ExtractedClaim
from medlit.research.synthesizer import generate_report
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame
from tests.unit._research_llm import bare_researcher

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


def test_a_claim_check_turned_off_lets_its_claim_through_in_research() -> None:
    from medlit.research.models import SubQuestion

    question = SubQuestion(id="q1", text=QUESTION)
    assert bare_researcher()._finding(question, ARTICLE, REVERSED) is None
    finding = bare_researcher(disabled=frozenset({"claim-reverses-quote"}))._finding(
        question, ARTICLE, REVERSED
    )
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
    grounded = ground_text(talk, read_frame(QUESTION), support)
    assert grounded.removed == [talk] and grounded.text == ""
    assert [f.check for f in grounded.findings] == ["report-prompt-talk"]
    kept = ground_text(talk, read_frame(QUESTION), support, {"report-prompt-talk"})
    assert kept.text == talk and kept.removed == []


async def test_an_unknown_check_id_is_refused_in_research_as_in_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        bare_researcher(disabled=frozenset({"no-such-check"}))
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        ground_text("Aspirin helps [1].", read_frame(QUESTION), {1: {"aspirin"}}, {"no-such-check"})
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        await build_evidence_table([ARTICLE], read_frame(QUESTION), None, ["no-such-check"])
    with pytest.raises(ValueError, match=r"unknown check id\(s\): no-such-check"):
        await generate_report(
            read_frame(QUESTION),
            [],
            [],
            {},
            None,
            ResearchSettings(),
            disabled_checks=["no-such-check"],
        )  # type: ignore[arg-type]
    monkeypatch.setenv("MEDLIT_CHECKS_DISABLED", '["no-such-check"]')
    with pytest.raises(ValidationError, match=r"unknown check id\(s\): no-such-check"):
        Settings()


# The article says nothing of mortality: a quote the extraction made up.
UNQUOTED = ExtractedClaim(
    claim="Aspirin lowered mortality after stroke.",
    quote="Aspirin lowered mortality after stroke by a third.",
    pmid="1",
)


def test_a_claim_quote_turned_off_keeps_a_claim_whose_quote_the_article_lacks_unquoted() -> None:
    from medlit.research.models import SubQuestion

    question = SubQuestion(id="q1", text=QUESTION)
    assert bare_researcher()._finding(question, ARTICLE, UNQUOTED) is None
    finding = bare_researcher(disabled=frozenset({"claim-quote"}))._finding(
        question, ARTICLE, UNQUOTED
    )
    assert finding is not None
    assert finding.claim == UNQUOTED.claim and finding.quote is None


def test_a_claim_quote_turned_off_still_finds_the_quote_the_other_checks_read() -> None:
    from medlit.research.models import SubQuestion

    question = SubQuestion(id="q1", text=QUESTION)
    # The quote is the article's: the runner finds it, so claim-reverses-quote still decides.
    assert (
        bare_researcher(disabled=frozenset({"claim-quote"}))._finding(question, ARTICLE, REVERSED)
        is None
    )
    off = frozenset({"claim-quote", "claim-reverses-quote"})
    finding = bare_researcher(disabled=off)._finding(question, ARTICLE, REVERSED)
    assert finding is not None and finding.quote == SIMILAR


def test_check_claim_with_claim_quote_off_drops_only_for_the_other_checks() -> None:
    from medlit.checks import check_claim

    on = check_claim(UNQUOTED.claim, UNQUOTED.quote, ARTICLE, QUESTION)
    assert (on.quote, on.reason) == (None, "quote_not_in_article")
    off = check_claim(UNQUOTED.claim, UNQUOTED.quote, ARTICLE, QUESTION, {"claim-quote"})
    assert (off.quote, off.reason, off.finding) == (None, None, None)
    reversed_off = check_claim(REVERSED.claim, SIMILAR, ARTICLE, QUESTION, {"claim-quote"})
    assert (reversed_off.quote, reversed_off.reason) == (SIMILAR, "claim_reverses_quote")
    assert check_claim("  ", SIMILAR, ARTICLE, QUESTION, {"claim-quote"}).reason == "empty_claim"


def test_a_claim_quote_turned_off_keeps_an_unquoted_cell_and_the_table_says_so() -> None:
    from medlit.research.evidence_table import _checked, render_table, rows_from_csv, rows_to_csv
    from medlit.research.models import EvidenceRow

    dropped: dict[str, str] = {}
    args = ("effect", UNQUOTED.claim, UNQUOTED.quote, ARTICLE, QUESTION)
    assert _checked(*args, dropped) is None
    assert dropped == {"effect": "quote_not_in_article"}
    kept: dict[str, str] = {}
    cell = _checked(*args, kept, {"claim-quote"})
    assert cell is not None and kept == {}
    assert (cell.text, cell.quote, cell.section, cell.from_full_text) == (
        UNQUOTED.claim,
        None,
        None,
        False,
    )
    row = EvidenceRow(pmid="1", article_key="pmid:1", effect=cell)
    table = "\n".join(render_table([row]))
    assert f"{UNQUOTED.claim} — (no quote found)" in table
    assert UNQUOTED.quote not in table  # the made-up quote is never shown as the article's
    assert "kept with the quote check (claim-quote) turned off" in table
    assert rows_from_csv(rows_to_csv([row]))[0].effect == cell
    quoted = EvidenceRow(
        pmid="1", article_key="pmid:1", effect=cell.model_copy(update={"quote": SIMILAR})
    )
    assert "claim-quote" not in "\n".join(render_table([quoted]))


def test_the_verifier_is_told_a_finding_has_no_quote() -> None:
    import asyncio

    from medlit.research.models import ResearchFinding
    from medlit.research.verifier import _cross_reference
    from medlit.types import Citation

    prompts: list[str] = []

    class _Model:
        async def complete_json(self, task: object, msgs: list[dict[str, str]], model: object):  # type: ignore[no-untyped-def]
            prompts.append(msgs[-1]["content"])
            raise RuntimeError("enough")

    finding = ResearchFinding(
        claim=UNQUOTED.claim,
        quote=None,
        pmid="1",
        article_key="pmid:1",
        sub_question_id="q1",
        source=Citation.from_article(ARTICLE),
    )
    with pytest.raises(RuntimeError):
        asyncio.run(_cross_reference("q1", QUESTION, [finding], _Model()))  # type: ignore[arg-type]
    assert f"{UNQUOTED.claim} | no quote found in the article" in prompts[0]
    assert 'quote: "' not in prompts[0]
