"""What a sentence says of a comparison, and the answers and claims that reverse one."""

from __future__ import annotations

import pytest

from medlit.checks.comparisons import comparison, reverses
from medlit.research.models import SubQuestion
from medlit.research.prompts import ExtractedClaim
from tests.unit._checks import left_for_later
from tests.unit._desmoid import DESMOID, HIGHER, QUESTION, SIMILAR
from tests.unit._research_llm import bare_researcher


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("Patient demographics were similar.", "same"),
        ("There was no statistically significant difference in mortality.", "same"),
        ("The morbidity has not been shown to differ between the groups.", "same"),
        ("Aspirin did not reduce the risk of stroke.", "same"),
        ("Sequential case number was not significantly associated with margins.", "same"),
        # PubMedQA 23414523, whose own sentence was read as a difference, so the local model's
        # "no significant difference in motor function" was left out as reversing it.
        (
            "There were no systematic or significant differences in motor function between "
            "children of mothers reporting isolated episodes of binge drinking and others.",
            "same",
        ),
        ("Mortality was significantly higher after surgery.", "differ"),
        ("Fewer patients relapsed in the treated group.", "differ"),
        ("Scores improved after training.", "differ"),
        # Negated cues are no difference; both, or neither, say nothing here.
        ("Mortality was not higher after surgery.", None),
        ("Mortality was similar, but complications were higher after surgery.", None),
        ("Eighty-six patients were included.", None),
        ("More than 60% of patients responded.", None),  # a count, not a comparison
        # PubMedQA 18784527's conclusion read as a difference ("superior", "improved"), so the
        # local model's true "no significant difference between 0.3 mm and 0.9 mm-thick
        # images" was left out as reversing it.
        (
            "We concluded that depiction of the superior wall of the mandibular canal cannot be "
            "improved by changing the thickness of images.",
            "same",
        ),
        ("The inferior vena cava was larger after the infusion.", "differ"),
        ("The superior vena cava was reached in all patients.", None),
        ("Drug A was superior to drug B.", "differ"),
        # PubMedQA 15800018's conclusion: "of similar size" says who was compared, not what
        # was found; read as "no difference", the local model's "Yes" (IFG before CABG and
        # mortality, gold yes) was made Uncertain.
        (
            "The elevated risk of death after CABG surgery known previously to be associated "
            "with CDM seems also to be shared by a group of similar size that includes "
            "patients with IFG and undiagnosed DM.",
            None,
        ),
        ("Patients of comparable age had higher mortality.", "differ"),
        ("The two drugs were of similar efficacy.", "same"),
    ],
)
def test_what_a_sentence_says_of_its_comparison(sentence: str, said: str | None) -> None:
    assert comparison(sentence) == said


def test_a_reversal_is_of_the_same_things() -> None:
    assert reverses(HIGHER, SIMILAR)
    assert reverses(
        "Endometrial polyps from pre- and post-menopausal women have similar expression of "
        "hormone receptors.",
        "Endometrial polyps from pre- and post-menopausal women had significant differences in "
        "their expression of hormone receptors.",
    )
    # The local model's true claim: the quote's difference is of another thing.
    assert not reverses(
        "Tumour expression of VEGF is not associated with venous invasion and survival.",
        "Only tumour size appeared to be significantly different between the 3 groups.",
    )
    assert not reverses(SIMILAR, SIMILAR)


def test_no_change_claimed_over_a_significant_increase_reverses_it() -> None:
    # A claim the local model extracted from PubMedQA 17076590: "did not stop ... from
    # significantly increasing" is a difference, and "does not alter" says there was none.
    assert reverses(
        "Counter sampling combined with medical provider education does not alter prescribing "
        "behavior.",
        "Education and counter sampling did not stop medical providers from significantly "
        "increasing the total yearly prescriptions for antihistamines and acid-relief "
        "medications.",
    )


def test_a_cited_sentence_reversing_its_articles_finding_is_left_out() -> None:
    articles = {"21979183": DESMOID}
    answer = f"{HIGHER} [PMID:21979183]. Desmoid complications approached 70% [PMID:21979183]."
    (text, warnings), reversed_from = left_for_later("reversed-findings", answer, articles)
    assert text == "Desmoid complications approached 70% [PMID:21979183]."
    assert reversed_from == {"21979183": "differ"}
    assert warnings == [
        "a sentence was left out: it cited PMID 21979183 for a difference where that article "
        'says the opposite: "The risk of individual complications was also similar (bleeding '
        "(2.0% vs 0.0%), fistula (10.2% vs 13.5%), bowel obstruction (32.7% vs 48.6%), pain "
        '(34.7% vs ..."'
    ]
    faithful = f"{SIMILAR.rstrip('.')} [PMID:21979183]."
    assert left_for_later("reversed-findings", faithful, articles) == ((faithful, []), {})


def test_a_research_claim_reversing_its_quote_is_dropped() -> None:
    question = SubQuestion(id="q1", text=QUESTION)
    researcher = bare_researcher()
    reversed_claim = ExtractedClaim(claim=HIGHER + ".", quote=SIMILAR, pmid="21979183")
    assert researcher._finding(question, DESMOID, reversed_claim) is None
    true = ExtractedClaim(
        claim="The risk of individual complications of desmoid tumors was similar after "
        "restorative proctocolectomy and ileorectal anastomosis.",
        quote=SIMILAR,
        pmid="21979183",
    )
    assert researcher._finding(question, DESMOID, true) is not None
