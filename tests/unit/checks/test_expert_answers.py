"""What a real model writes to an expert's question stands when its articles say it.

Each case is a kind of sentence the checks once dropped though its cited articles say it: a
definition read as a study's aim, a number read as given for a subject beside another, a
brand named where its article gives only the generic the question equates with it.
"""

from __future__ import annotations

from medlit.checks import check_answer
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame


def _article(pmid: str, title: str, text: str) -> Article:
    return Article(
        pmid=pmid,
        title=title,
        abstract=[AbstractSection(label="ABSTRACT", category="UNASSIGNED", text=text)],
    )


async def _checked(question: str, draft: str, articles: dict[str, Article], verdict: str):  # type: ignore[no-untyped-def]
    async def read(question: str, text: str) -> str:
        return verdict

    return await check_answer(
        question,
        draft,
        verdict,
        articles,
        next(iter(articles.values())),
        is_yes_no=True,
        read_verdict=read,  # type: ignore[arg-type]
        nothing_supported="Nothing is left.",
        frame=read_frame(question),
    )


LIMITS = {
    "18852857": _article(
        "18852857",
        "Limit of blank, limit of detection and limit of quantitation",
        "Limit of detection (LoD) is the lowest analyte concentration likely to be reliably "
        "distinguished from the limit of blank. Limit of quantitation (LoQ) is the lowest "
        "concentration at which the analyte can not only be reliably detected but at which "
        "some predefined goals for bias and imprecision are met.",
    ),
    "36206626": _article(
        "36206626",
        "Limits of detection and quantification in analytical chemistry",
        "The limit of detection (LOD) and the limit of quantification (LOQ) are two different "
        "performance characteristics of an analytical method. The LOQ is generally higher than "
        "the LOD.",
    ),
}


async def test_a_definition_naming_goals_is_no_stated_aim() -> None:
    answer = await _checked(
        "Are LOQ and LOD the same?",
        "No, LOQ and LOD are not the same. The LOD is the lowest concentration that can be "
        "reliably distinguished from the blank, while the LOQ is the lowest concentration at "
        "which predefined goals for bias and imprecision are met ([PMID:18852857], 36206626).",
        LIMITS,
        "no",
    )
    assert not [f for f in answer.findings if f.action in ("drop", "uncite")], answer.findings
    assert answer.fallback is None and answer.verdict == "no"
    assert "predefined goals" in answer.text


LUMASIRAN = {
    "33107665": _article(
        "33107665",
        "Lumasiran: First Approval",
        "Lumasiran is a small interfering RNA developed for the treatment of primary "
        "hyperoxaluria type 1 (PH1). In November 2020, lumasiran received its first approval in "
        "the EU and the USA for the treatment of PH1 in all age groups.",
    ),
    "33789010": _article(
        "33789010",
        "Lumasiran, an RNAi Therapeutic for Primary Hyperoxaluria Type 1",
        "Lumasiran reduced urinary oxalate excretion in patients with primary hyperoxaluria "
        "type 1.",
    ),
}


async def test_a_brand_is_said_by_the_generic_the_question_gives_it() -> None:
    question = "Is OXLUMO (lumasiran) used for the treatment of primary hyperoxaluria?"
    answer = await _checked(
        question,
        "OXLUMO is an RNAi therapeutic used to treat primary hyperoxaluria [PMID:33789010]. "
        "Lumasiran was approved for PH1 in 2020 (PMID: 33107665).",
        LUMASIRAN,
        "yes",
    )
    assert not [f for f in answer.findings if f.action in ("drop", "uncite", "note")]
    assert answer.verdict == "yes" and answer.text.count("[PMID:") == 2
    # a brand the question does not equate with the generic is held as before
    other = "Is GIVLAARI used for the treatment of primary hyperoxaluria?"
    held = await _checked(
        other,
        "GIVLAARI is used to treat primary hyperoxaluria [PMID:33789010].",
        LUMASIRAN,
        "yes",
    )
    assert [f for f in held.findings if f.check == "unsaid-subjects" and f.action == "drop"]
