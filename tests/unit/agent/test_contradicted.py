"""A cited statement saying the opposite of its answer's verdict and of its article's
conclusion goes (:mod:`medlit.checks.contradicted`)."""

from __future__ import annotations

from medlit.checks.contradicted import (
    concludes,
    consistent_verdict,
    stated_answer,
    states_only_otherwise,
)
from medlit.types import AbstractSection, Article
from tests.unit._checks import checked

QUESTION = "Are very high serum CA 19-9 levels a contraindication to pancreaticoduodenectomy?"


def _article(pmid: str, conclusion: str) -> Article:
    return Article(
        pmid=pmid,
        title="Very high serum CA 19-9 levels: a contraindication to pancreaticoduodenectomy?",
        abstract=[
            AbstractSection(label="RESULTS", category="RESULTS", text="Median survival was 22 "
                            "versus 15 months."),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
    )  # fmt: skip


# The shape of PubMedQA's 19459018: its conclusion answers the title's question "no".
NOT_PRECLUDED = _article(
    "1",
    "Patients who normalized their CA 19-9 levels postoperatively had equivalent survival to "
    "patients with normal levels. Preoperative serum CA 19-9 level by itself should not "
    "preclude surgery.",
)
SAID_YES = "Very high serum CA 19-9 levels are a contraindication to pancreaticoduodenectomy"
SAID_NO = "Patients who normalised their levels had equivalent survival"


def test_the_questions_words_said_as_a_statement_answer_it_yes() -> None:
    assert stated_answer(f"{SAID_YES} [PMID:1].", QUESTION) == "yes"
    assert stated_answer(f"{SAID_NO} [PMID:1].", QUESTION) == "no"
    assert stated_answer("Median survival was 22 months [PMID:1].", QUESTION) is None


def test_a_statement_its_verdict_and_its_article_contradict_goes() -> None:
    # What the local model wrote: "Yes, ... are a contraindication ..." over the article that
    # concludes they are not; the verdict read off the whole answer was No.
    text = f"{SAID_YES} [PMID:1]. {SAID_NO} [PMID:1]."
    kept, warnings = checked("contradicted", text, {"1": NOT_PRECLUDED}, QUESTION, "no")
    assert kept == f"{SAID_NO} [PMID:1]."
    assert warnings == [
        "a sentence was left out: it cited PMID 1 for the answer 'yes', where the article "
        "concludes 'no'"
    ]


def test_one_reading_alone_drops_nothing() -> None:
    text = f"{SAID_YES} [PMID:1]. {SAID_NO} [PMID:1]."
    # The verdict agrees with the statement.
    assert checked("contradicted", text, {"1": NOT_PRECLUDED}, QUESTION, "yes") == (text, [])
    # The article concludes nothing clear.
    unclear = _article("1", "More studies are needed.")
    assert checked("contradicted", text, {"1": unclear}, QUESTION, "no") == (text, [])
    # An uncertain verdict contradicts nothing.
    assert checked("contradicted", text, {"1": NOT_PRECLUDED}, QUESTION, "uncertain") == (text, [])
    # Nothing cited would be left: the answer stays as written.
    alone = f"{SAID_YES} [PMID:1]."
    assert checked("contradicted", alone, {"1": NOT_PRECLUDED}, QUESTION, "no") == (alone, [])


# The shape of PubMedQA's 25034219: its conclusion's sentences read different ways; the one on
# the question reads no.
OBESITY_QUESTION = "Do obese mothers influence how their obese children eat?"
# What the local model wrote, citing the article, under "Verdict: No" and under "Verdict: Yes".
RESTATED_OBESITY = "The evidence shows that obese mothers influence how their obese children eat"
MIXED = Article(
    pmid="2",
    title="Does maternal obesity have an influence on feeding behavior of obese children?",
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text="Child's BMI-SDS positively correlated with mothers' concern for child's weight.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Mothers' BMI highly correlate with children's BMI-z-scores. The degree of "
            "child's obesity increases mothers' concern and food restriction behavior. While "
            "mothers of obese children have a high prevalence of obesity, maternal obesity was "
            "found to have no significant influence on feeding behavior of obese school children.",
        ),
    ],
)


def test_where_the_conclusion_reads_both_ways_its_sentence_nearest_the_statement_decides() -> None:
    # What the local model wrote under "Verdict: No" (gold no).
    own = "The degree of child's obesity increases mothers' concern and food restriction behavior"
    text = f"{RESTATED_OBESITY} [PMID:2]. {own} [PMID:2]."
    kept, warnings = checked("contradicted", text, {"2": MIXED}, OBESITY_QUESTION, "no")
    assert kept == f"{own} [PMID:2]."
    assert warnings == [
        "a sentence was left out: it cited PMID 2 for the answer 'yes', where the article "
        "concludes 'no'"
    ]


def test_a_conclusion_reading_both_ways_answers_as_its_sentence_on_the_question() -> None:
    assert concludes(MIXED, OBESITY_QUESTION) == "no"
    # The local model's "Verdict: Yes" (gold no) over its own cited "no difference" finding.
    finding = "No difference was found in the feeding scores between obese and non-obese mothers"
    text = f"{RESTATED_OBESITY} [PMID:2]. {finding} [PMID:2]."
    assert consistent_verdict(text, "yes", {"2": MIXED}, OBESITY_QUESTION) == "uncertain"
    # A sentence saying too little of the question decides nothing.
    off_question = Article(
        pmid="3",
        title=MIXED.title,
        abstract=[
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="Mothers' BMI highly correlate with children's BMI-z-scores. Feeding was "
                "not affected.",
            )
        ],
    )
    assert concludes(off_question, OBESITY_QUESTION) is None


def test_a_sentence_its_article_says_stays_whatever_the_conclusion() -> None:
    # A result that reads "yes" in an article concluding "no" is the article's own finding.
    result = "Child's BMI-SDS positively correlated with mothers' concern for child's weight"
    text = f"{result} [PMID:2]. {SAID_NO} [PMID:2]."
    assert checked("contradicted", text, {"2": MIXED}, OBESITY_QUESTION, "no") == (text, [])
    said_yes = _article("1", f"{SAID_YES}. Survival was equivalent, so it should not preclude it.")
    text = f"{SAID_YES} [PMID:1]. {SAID_NO} [PMID:1]."
    assert checked("contradicted", text, {"1": said_yes}, QUESTION, "no") == (text, [])


def test_a_sentence_stating_no_finding_states_no_answer() -> None:
    aim = f"The aim was to determine whether {SAID_YES.lower()} [PMID:1]."
    assert stated_answer(aim, QUESTION) is None
    assert stated_answer(f"Whether {SAID_YES.lower()} is unknown [PMID:1].", QUESTION) is None


def test_a_verdict_the_articles_and_the_answers_own_statement_contradict_is_turned() -> None:
    # The verdict call read "yes" off an answer saying "not contraindicated", over an article
    # that concludes no.
    text = (
        "Patients with very high serum CA 19-9 levels are not contraindicated to "
        "pancreaticoduodenectomy [PMID:1]. Median survival was 22 versus 15 months [PMID:1]."
    )
    assert consistent_verdict(text, "yes", {"1": NOT_PRECLUDED}, QUESTION) == "no"
    # The answer states no answer of its own: the verdict stands.
    numbers = "Median survival was 22 versus 15 months [PMID:1]."
    assert consistent_verdict(numbers, "yes", {"1": NOT_PRECLUDED}, QUESTION) == "yes"
    # The article concludes yes: the verdict stands.
    precluded = _article("1", "Very high CA 19-9 levels significantly predicted early death.")
    assert consistent_verdict(text, "yes", {"1": precluded}, QUESTION) == "yes"
    assert consistent_verdict(text, "uncertain", {"1": NOT_PRECLUDED}, QUESTION) == "uncertain"
    # The answer states both: it is uncertain which it concludes.
    both = f"{SAID_YES} [PMID:1]. {text}"
    assert consistent_verdict(both, "yes", {"1": NOT_PRECLUDED}, QUESTION) == "uncertain"


def test_a_no_verdict_is_never_turned_to_yes() -> None:
    # The verdict call reads "no" only from clear mass on it; its reading leans to yes. Over
    # an answer stating yes from an article concluding yes, "no" is uncertain, never "yes".
    text = f"{SAID_YES} [PMID:1]."
    precluded = _article("1", "Very high CA 19-9 levels significantly predicted early death.")
    assert consistent_verdict(text, "no", {"1": precluded}, QUESTION) == "uncertain"
    # One reading against it (the article concludes nothing clear): the verdict stands.
    unclear = _article("1", "Further studies are needed.")
    assert consistent_verdict(text, "no", {"1": unclear}, QUESTION) == "no"


def test_a_no_over_the_answers_own_increase_its_article_concludes_is_uncertain() -> None:
    # The local model's "Verdict: No" over its own sentence stating the increase, citing the
    # article concluding it (PubMedQA 23972333, gold yes).
    asked = (
        "Has the prevalence of health care services use increased over the last decade "
        "(2001-2009) in elderly people?"
    )
    survey = Article(
        pmid="23972333",
        title=asked,
        abstract=[
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="The current study revealed an increase in health care services "
                "utilization from 2001 to 2009 in the older Spanish population.",
            )
        ],
    )
    said = (
        "The prevalence of general practitioner visits and hospitalization among elderly "
        "Spanish increased over the last decade [PMID:23972333]."
    )
    assert concludes(survey, asked) == "yes"
    assert stated_answer(said, asked) == "yes"
    assert consistent_verdict(said, "no", {"23972333": survey}, asked) == "uncertain"


# PubMedQA 10411439 (gold yes), asked in the local model's probe as "Is the Lloyd-Davies
# position with head-down tilt dangerous?": its question names neither conclusion sentence.
LLOYD_DAVIES = Article(
    pmid="4",
    title="Lloyd-Davies position with Trendelenburg--a disaster waiting to happen?",
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text="The addition of 15 degrees head-down tilt, however, led to an immediate and "
            "significant drop in lower limb perfusion (P<0.05).",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="The use of the modified lithotomy position during pelvic surgery is not "
            "associated with lower limb ischemia. Addition of Trendelenburg position, however, "
            "causes profound ischemia of the lower limbs, which may put patients at risk of "
            "developing lower limb compartment syndrome.",
        ),
    ],
)
TILT = "Is the Lloyd-Davies position with head-down tilt dangerous?"


def test_the_title_picks_the_conclusion_sentence_the_question_does_not() -> None:
    assert concludes(LLOYD_DAVIES, TILT) == "yes"


def test_a_statement_of_the_verdict_its_article_contradicts_goes() -> None:
    # The local model: "Verdict: No" and "... with head-down tilt is not dangerous [PMID]".
    said = "The Lloyd-Davies position with head-down tilt is not dangerous [PMID:4]."
    assert consistent_verdict(said, "no", {"4": LLOYD_DAVIES}, TILT) == "no"
    assert checked("contradicted", said, {"4": LLOYD_DAVIES}, TILT, "no") == (said, [])
    assert checked("against-conclusions", said, {"4": LLOYD_DAVIES}, TILT, "no") == (
        "",
        ["a sentence was left out: it cited PMID 4 for the answer 'no', where the article "
         "concludes 'yes'"],
    )  # fmt: skip
    # The article's own sentence stays, whatever its conclusion.
    own = "The modified lithotomy position is not associated with lower limb ischemia [PMID:4]."
    assert checked("against-conclusions", own, {"4": LLOYD_DAVIES}, TILT, "no") == (own, [])


# PubMedQA 12095973 (gold no), asked in the local model's probe as "Is chemoradiation a safe
# alternative to surgery for low rectal cancer?".
EXCLUSIVE_CRT = Article(
    pmid="5",
    title="Chemoradiation instead of surgery to treat mid and low rectal tumors: is it safe?",
    abstract=[
        AbstractSection(
            label="RESULTS",
            category="RESULTS",
            text="Among the 10 cases with CR, 8 presented with local recurrence within 3.7 to "
            "8.8 months.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="Exclusive CRT approach is not safe to treat patients with low infiltrative "
            "rectal carcinoma.",
        ),
    ],
)
CRT = "Is chemoradiation a safe alternative to surgery for low rectal cancer?"


def test_a_safe_alternative_its_article_calls_not_safe_goes() -> None:
    # The local model: "Verdict: Yes" and "... CRT is a safe alternative to surgery ... [PMID]";
    # the conclusion read uncertain, and the sentence stood.
    said = (
        "The evidence shows that chemoradiation (CRT) is a safe alternative to surgery for low "
        "rectal cancer [PMID:5]."
    )
    assert concludes(EXCLUSIVE_CRT, CRT) == "no"
    assert checked("against-conclusions", said, {"5": EXCLUSIVE_CRT}, CRT, "yes") == (
        "",
        ["a sentence was left out: it cited PMID 5 for the answer 'yes', where the article "
         "concludes 'no'"],
    )  # fmt: skip


def test_a_conclusion_is_its_main_clause_not_its_concession() -> None:
    # PubMedQA 26079501 (gold no): the local model wrote "This suggests that BD may be a reliable
    # prognostic marker for outcome and mortality in this population [PMID]" under "Verdict:
    # Yes", the article's conclusion without its "not".
    base_deficit = Article(
        pmid="6",
        title="Does base deficit predict mortality in patients with severe traumatic brain injury?",
        abstract=[
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="Although BD is correlated with GCS at presentation and RTS, it is not a "
                "reliable prognostic marker for outcome and mortality in patients with isolated "
                "TBI.",
            )
        ],
    )
    question = "Does a base deficit predict death after severe head injury?"
    said = (
        "This suggests that BD may be a reliable prognostic marker for outcome and mortality in "
        "this population [PMID:6]."
    )
    assert concludes(base_deficit, question) == "no"
    assert checked("against-conclusions", said, {"6": base_deficit}, question, "yes")[0] == ""


def test_a_subgroup_set_against_the_whole_study_does_not_decide() -> None:
    # PubMedQA 21880023 (gold no): the local model wrote "exercise during pregnancy reduces the
    # risk of postnatal depression by 3.7% in a randomized controlled trial [PMID]" under
    # "Verdict: Yes"; the conclusion read both ways, and the subgroup's finding stood for it.
    exercise = Article(
        pmid="7",
        title="Does exercise during pregnancy prevent postnatal depression?",
        abstract=[
            AbstractSection(
                label="CONCLUSIONS",
                category="CONCLUSIONS",
                text="We did not find a lower prevalence of high EPDS scores among women "
                "randomized to regular exercise during pregnancy compared with the control "
                "group. However, a subgroup of women in the intervention group who did not "
                "exercise regularly prior to pregnancy had a reduced risk of postnatal "
                "depression.",
            )
        ],
    )
    question = "Does exercising while pregnant prevent postnatal depression?"
    said = "Exercise during pregnancy reduces the risk of postnatal depression [PMID:7]."
    assert concludes(exercise, question) == "no"
    assert checked("against-conclusions", said, {"7": exercise}, question, "yes")[0] == ""


def test_a_verdict_line_every_stated_answer_goes_against_is_told() -> None:
    # The local model's "Verdict: Yes" over its own sentences (gold no).
    asked = "Is a scout film needed before a voiding cystourethrogram in children?"
    text = (
        "The evidence shows that a scout film is not necessary before a voiding "
        "cystourethrogram (VCUG) in children [PMID:25501465]. The study [PMID:25501465] found "
        "no clinically significant findings on scout images. The estimated effective radiation "
        "dose averaged 0.09 mSv in children [PMID:25501465]."
    )
    assert states_only_otherwise(text, "yes", asked)
    assert not states_only_otherwise(text, "no", asked)
    assert not states_only_otherwise(text, "uncertain", asked)
    # One sentence stating the verdict's answer, or none citing anything, is no disagreement.
    both = f"{text} A scout film is needed before a voiding cystourethrogram [PMID:25501465]."
    assert not states_only_otherwise(both, "yes", asked)
    uncited = "A scout film is not necessary before a voiding cystourethrogram in children."
    assert not states_only_otherwise(uncited, "yes", asked)
