"""An inference the answer draws must be one its articles draw
(:mod:`medlit.checks.inferences`)."""

from __future__ import annotations

from medlit.checks.inferences import inference
from medlit.types import AbstractSection, Article
from tests.unit._checks import checked

# The shape of PubMedQA's 15280782 (unsafe sex among HIV-infected individuals).
COHORT = Article(
    pmid="1",
    title="Is unsafe sexual behaviour increasing among HIV-infected individuals?",
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="Participants were asked about their sexual practices every 6 months. The "
            "median number of questionnaires completed per individual was five.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="There was no evidence of an increase in reported unsafe sex over time, which "
            "suggests that prevention efforts kept pace with the availability of treatment.",
        ),
    ],
)
FINDING = "The median number of questionnaires completed per individual was five"
INVENTED = (
    "participants were not reporting their sexual practices frequently enough to generate a "
    "statistically significant result"
)


def test_an_inference_is_read_off_its_finding() -> None:
    assert inference(f"{FINDING}, indicating that {INVENTED} [PMID:1].") == (FINDING, INVENTED)
    assert inference(f"{FINDING}, which suggests {INVENTED}.") == (FINDING, INVENTED)
    assert inference(f"This suggests that {INVENTED} [PMID:1].") == ("", INVENTED)
    assert inference(f"{FINDING} [PMID:1].") is None


def test_an_inference_no_cited_article_draws_goes_and_its_finding_stays() -> None:
    # What the local model wrote, citing the cohort study.
    text = f"{FINDING}, indicating that {INVENTED} [PMID:1]. Unsafe sex did not increase [PMID:1]."
    kept, warnings = checked("unsupported-inferences", text, {"1": COHORT})
    assert kept == f"{FINDING} [PMID:1]. Unsafe sex did not increase [PMID:1]."
    assert warnings == [f'an inference no article it cites draws was left out: "{INVENTED}"']
    # A sentence that is all inference goes whole; uncited, it is held to every article.
    text = f"Unsafe sex did not increase [PMID:1]. This suggests that {INVENTED}."
    kept, warnings = checked("unsupported-inferences", text, {"1": COHORT})
    assert kept == "Unsafe sex did not increase [PMID:1]."
    assert warnings == [f'an inference no retrieved article draws was left out: "{INVENTED}"']


def test_the_finding_keeps_the_citations_written_before_the_inference() -> None:
    other = COHORT.model_copy(update={"pmid": "2"})
    text = f"{FINDING} [PMID:1], indicating that {INVENTED} [PMID:2]. It rose [PMID:1]."
    kept, _ = checked("unsupported-inferences", text, {"1": COHORT, "2": other})
    assert kept == f"{FINDING} [PMID:1]. It rose [PMID:1]."


def test_an_inference_its_article_draws_stays() -> None:
    text = (
        "Reported unsafe sex did not increase, suggesting that prevention efforts kept pace "
        "with the availability of treatment [PMID:1]. This suggests that it works."
    )
    assert checked("unsupported-inferences", text, {"1": COHORT}) == (text, [])


def test_an_inference_saying_half_a_sentence_of_its_article_stays() -> None:
    # The local model's inference over PubMedQA 15280782: it says more than half the content
    # words of one sentence of its article, and stays.
    cohort = COHORT.model_copy(
        update={
            "abstract": [
                *COHORT.abstract,
                AbstractSection(
                    label="RESULTS",
                    category="RESULTS",
                    text="There was no evidence of a response bias over time, but individuals "
                    "were less willing to leave questions about their sexual behaviour "
                    "unanswered or ambiguous.",
                ),
            ]
        }
    )
    kept = (
        "Additionally, there was no evidence of a response bias over time, suggesting that "
        "participants were not being asked about their sexual behavior consistently or "
        "accurately [PMID:1]."
    )
    assert checked("unsupported-inferences", kept, {"1": cohort}) == (kept, [])


def test_an_inference_in_its_articles_own_words_stays() -> None:
    # The local model's faithful inference over PubMedQA 16253970.
    stimulation = Article(
        pmid="3",
        title="Is controlled ovarian stimulation in intrauterine insemination an acceptable "
        "therapy in couples with unexplained non-conception?",
        abstract=[
            AbstractSection(
                label="RESULTS",
                category="RESULTS",
                text="No significant difference was found in ongoing PR between women with one, "
                "two, three or four follicles respectively (P=0.54).",
            ),
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="In COS-IUI for unexplained non-conception, induction of more than one "
                "follicle did not improve the ongoing PR, but increased the risk of multiple "
                "pregnancies.",
            ),
        ],
    )
    text = (
        "No significant difference was found in ongoing PR between women with one, two, three "
        "or four follicles [PMID:3]. This suggests that induction of more than one follicle did "
        "not improve the ongoing PR, but increased the risk of multiple pregnancies [PMID:3]."
    )
    assert checked("unsupported-inferences", text, {"3": stimulation}) == (text, [])
