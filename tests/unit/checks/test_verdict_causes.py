"""Why a verdict is withheld: every Uncertain verdict carries its cause, from the answer's
checks, the digest's policy, and a tier-1 entry (old entries included)."""

from __future__ import annotations

import pytest

from medlit.agent.nodes import stored_cause
from medlit.checks.answer import _after_flips, check_answer
from medlit.checks.findings import Finding
from medlit.checks.policy import Facts, decide
from medlit.digest import build_evidence_digest
from medlit.types import AbstractSection, Article, VerdictCause

QUESTION = "Does aspirin prevent stroke in adults?"
ARTICLE = Article(
    pmid="11",
    title="Aspirin for the prevention of stroke in adults",
    year=2014,
    abstract=[
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Aspirin reduced the risk of stroke in adults compared with placebo.",
        )
    ],
)
ANSWER = "Aspirin reduced the risk of stroke in adults compared with placebo [PMID:11]."


async def _checked(verdict: str | None, read: str | None) -> tuple[str | None, VerdictCause | None]:
    async def read_verdict(question: str, text: str) -> str | None:
        return read

    answer = await check_answer(
        QUESTION,
        ANSWER,
        verdict,  # type: ignore[arg-type]
        {"11": ARTICLE},
        ARTICLE,
        is_yes_no=True,
        read_verdict=read_verdict,  # type: ignore[arg-type]
        nothing_supported="Nothing is left.",
    )
    return answer.verdict, answer.cause


async def test_the_models_own_uncertain_verdict_line_is_the_models_cause() -> None:
    verdict, cause = await _checked("uncertain", None)
    assert verdict == "uncertain"
    assert cause == VerdictCause(kind="model", detail="the model's verdict line said uncertain")


async def test_a_verdict_read_off_the_checked_answer_as_uncertain_is_the_models() -> None:
    verdict, cause = await _checked(None, "uncertain")  # no verdict line: it is read
    assert verdict == "uncertain" and cause is not None and cause.kind == "model"
    assert "read its checked answer" in cause.detail


async def test_a_verdict_given_carries_no_cause() -> None:
    assert await _checked("yes", None) == ("yes", None)
    assert await _checked(None, "yes") == ("yes", None)


async def test_a_reading_against_every_stated_answer_and_the_article_gives_way() -> None:
    """Read again, the model's No is still against the only answer its cited statement
    states, and its article concludes that answer too: two readers by rule, not the model."""
    assert await _checked("no", "no") == ("yes", None)
    assert await _checked(None, "no") == ("yes", None)


async def test_a_reading_against_the_statements_alone_stands() -> None:
    """The article concluding nothing, the model's reading is the verdict."""
    silent = ARTICLE.model_copy(
        update={"abstract": [AbstractSection(label="RESULTS", text="Stroke was recorded.")]}
    )

    async def read_no(question: str, text: str) -> str:
        return "no"

    answer = await check_answer(
        QUESTION,
        ANSWER,
        None,
        {"11": silent},
        silent,
        is_yes_no=True,
        read_verdict=read_no,  # type: ignore[arg-type]
        nothing_supported="Nothing is left.",
    )
    assert answer.verdict == "no"


def test_a_verdict_turned_uncertain_by_a_check_names_it_and_one_turned_back_clears_it() -> None:
    flip = Finding(
        "restated-verdict", "flip_verdict", "the verdict said otherwise", data={"to": "uncertain"}
    )
    cause = _after_flips(None, [flip])
    assert cause is not None and (cause.kind, cause.check) == ("check", "restated-verdict")
    assert cause.detail == "the verdict said otherwise"
    back = Finding("x", "flip_verdict", data={"to": "yes"})
    assert _after_flips(cause, [back]) is None


def test_the_policy_names_the_drop_that_left_nothing_citing_evidence() -> None:
    dropped = Finding(
        "unsourced-numbers",
        "drop",
        "a sentence was left out: 40%",
        ("11",),
        0,
        "It cut 40% [PMID:11]. ",
    )
    facts = Facts(frozenset(), "11", False, False, False, True, True)
    decision = decide([dropped], facts, "Nothing is left.")
    assert decision.verdict == "uncertain" and decision.cause is not None
    assert decision.cause.kind == "check" and decision.cause.check == "unsourced-numbers"
    assert decision.cause.sentence == "It cut 40% [PMID:11]."
    assert "nothing citing evidence was left" in decision.cause.detail


def test_the_digest_names_its_rule_or_says_there_was_no_evidence() -> None:
    from medlit.types import Chunk, Evidence

    evidence = [
        Evidence(
            chunk=Chunk(
                id="a#1",
                article_key=ARTICLE.key,
                ordinal=1,
                section="CONCLUSIONS",
                text=ARTICLE.abstract[0].text,
                is_conclusion=True,
            ),
            article=ARTICLE,
            similarity=0.9,
        )
    ]
    one = build_evidence_digest(QUESTION, evidence)
    assert one.verdict == "uncertain"  # one source is a leaning, not a verdict
    assert one.cause == VerdictCause(
        kind="policy", rule="too-few-sources", detail=one.verdict_reason
    )
    none = build_evidence_digest(QUESTION, [])
    assert none.verdict == "uncertain" and none.cause is not None
    assert none.cause.kind == "no_evidence"
    assert build_evidence_digest("What is aspirin?", evidence).cause is None


@pytest.mark.parametrize(
    ("extra", "kind"),
    [
        ({"mode": "llm"}, "unrecorded"),  # stored before causes were kept
        ({"verdict_cause": None}, "unrecorded"),
        ({"verdict_cause": {"kind": "someday"}}, "unrecorded"),  # unreadable: not guessed
        ({"verdict_cause": {"kind": "policy", "rule": "too-few-sources", "detail": "d"}}, "policy"),
    ],
)
def test_a_cached_uncertain_verdict_reports_its_stored_cause_or_that_none_was_kept(
    extra: dict[str, object], kind: str
) -> None:
    cause = stored_cause(extra, "uncertain")
    assert cause is not None and cause.kind == kind
    assert stored_cause(extra, "yes") is None
