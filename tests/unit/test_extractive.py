"""The no-LLM answer mode: evidence digests and their cautious yes/no verdicts."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from medlit.digest import (
    DIGEST_HEADER,
    NO_MODEL,
    build_evidence_digest,
    not_about,
    rank_sentences,
    split_sentences,
)
from medlit.types import AbstractSection, Article, Chunk, Evidence
from medlit.words.frame import read_frame
from medlit.words.stance import sentence_stance


def make_evidence(
    pmid: str,
    conclusion: str,
    results: str = "",
    *,
    background: str = "",
    publication_types: Sequence[str] = ("Journal Article",),
    title: str = "A study",
) -> list[Evidence]:
    sections = []
    if background:
        sections.append(AbstractSection(label="BACKGROUND", category="BACKGROUND", text=background))
    if results:
        sections.append(AbstractSection(label="RESULTS", category="RESULTS", text=results))
    sections.append(AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion))
    article = Article(
        pmid=pmid, title=title, abstract=sections, publication_types=list(publication_types)
    )
    return [
        Evidence(
            chunk=Chunk(
                id=f"{article.key}#{i + 1}",
                article_key=article.key,
                ordinal=i + 1,
                section=s.label,
                text=s.text,
                is_conclusion=s.is_conclusion,
            ),
            article=article,
            similarity=0.5,
        )
        for i, s in enumerate(sections)
    ]


ASPIRIN_YES_1 = make_evidence(
    "11111111",
    "Low-dose aspirin significantly reduced the risk of recurrent stroke.",
    "Recurrent stroke occurred in 4% of the aspirin group and 7% of the placebo group.",
    background="Stroke is a leading cause of disability in older adults worldwide.",
)
ASPIRIN_YES_2 = make_evidence(
    "22222222",
    "Aspirin therapy was associated with a lower rate of recurrent stroke in this cohort.",
)
ASPIRIN_NO = make_evidence(
    "33333333",
    "Aspirin did not reduce the risk of recurrent stroke compared with placebo.",
)
UNRELATED = make_evidence(
    "44444444",
    "Vitamin D supplementation improved bone density in postmenopausal women.",
)
QUESTION = "Does aspirin reduce the risk of recurrent stroke?"


def test_digest_is_labelled_and_every_sentence_is_cited() -> None:
    digest = build_evidence_digest(QUESTION, ASPIRIN_YES_1 + ASPIRIN_YES_2 + UNRELATED)
    assert digest.text.startswith(DIGEST_HEADER.format(why=NO_MODEL))
    assert "not a generated answer" in digest.text
    bullets = [line for line in digest.text.splitlines() if line.startswith("- ")]
    assert bullets and len(bullets) == len(digest.sentences)
    for line in bullets:
        assert re.search(r"\[PMID:\d{8}\]$", line), line
    assert set(digest.pmids) <= {"11111111", "22222222", "44444444"}
    assert "44444444" not in digest.pmids  # off-topic evidence is not quoted
    # Conclusions first.
    assert digest.text.index("Conclusions:") < digest.text.index("Other findings:")
    assert digest.sentences[0].is_conclusion


def test_background_is_ranked_below_findings() -> None:
    digest = build_evidence_digest(QUESTION, ASPIRIN_YES_1, max_sentences=2)
    texts = [s.text for s in digest.sentences]
    assert not any("leading cause" in t for t in texts)
    assert any("placebo group" in t for t in texts)


def test_near_duplicates_are_quoted_once() -> None:
    twin = make_evidence(
        "55555555", "Low-dose aspirin significantly reduced the risk of recurrent stroke!"
    )
    digest = build_evidence_digest(QUESTION, ASPIRIN_YES_1 + twin)
    quoted = [s.text for s in digest.sentences if "significantly reduced" in s.text]
    assert len(quoted) == 1


def test_max_sentences_and_per_article_cap() -> None:
    groups = ["diabetic", "elderly", "hypertensive", "female", "smoking", "obese", "Asian"]
    many = [
        make_evidence(f"6000000{i}", f"Aspirin reduced recurrent stroke among {group} patients.")
        for i, group in enumerate(groups)
    ]
    digest = build_evidence_digest(QUESTION, [e for ev in many for e in ev], max_sentences=4)
    assert len(digest.sentences) == 4
    digest = build_evidence_digest(QUESTION, ASPIRIN_YES_1, per_article=1)
    assert len(digest.sentences) == 1


def test_verdict_yes_needs_two_agreeing_sources() -> None:
    one = build_evidence_digest(QUESTION, ASPIRIN_YES_2)
    assert one.verdict == "uncertain"
    two = build_evidence_digest(QUESTION, ASPIRIN_YES_1 + ASPIRIN_YES_2)
    assert two.verdict == "yes"
    assert "Leaning of the conclusions" in two.text


def test_articles_about_something_else_do_not_lean_the_verdict() -> None:
    # Asked about the English antibiotic campaigns, the digest read "Yes" from a melanoma study
    # and a transplant study, where the campaigns' own study concluded "little evidence".
    question = (
        "Did the English antibiotic awareness campaigns change what the public knows about "
        "antibiotics?"
    )
    melanoma = make_evidence(
        "24434052",
        "This may be a result of increased public awareness due to effective public health "
        "campaigns.",
        title="Are we seeing the effects of public awareness campaigns?",
    )
    transplant = make_evidence(
        "27184293",
        "The use of contaminated products with antibiotic prophylaxis may be safe.",
        title="Does microbial contamination influence transplantation outcomes?",
    )
    assert build_evidence_digest(question, melanoma + transplant).verdict == "uncertain"
    # The same conclusions lean it from articles that speak of what was asked.
    on_question = "English antibiotic awareness campaigns: did they change what the public knows?"
    both = [
        make_evidence(str(n), text, title=on_question)
        for n, text in ((1, melanoma[0].chunk.text), (2, transplant[0].chunk.text))
    ]
    assert build_evidence_digest(question, both[0] + both[1]).verdict == "yes"


def test_only_articles_about_the_question_are_quoted_when_there_are_any() -> None:
    # Asked whether APC mutation analysis guides treatment in polyposis, the digest listed two
    # BRAF thyroid studies' conclusions beside the polyposis article's.
    question = "Can APC mutation analysis guide treatment decisions in familial polyposis?"
    polyposis = make_evidence(
        "11247896",
        "Therapeutic decisions should be based on colonoscopic findings rather than on the site "
        "of the APC mutation.",
        title="Can APC mutation analysis contribute to therapeutic decisions in familial "
        "adenomatous polyposis?",
    )
    thyroid = make_evidence(
        "26285789",
        "Treatment decisions in thyroid cancer can follow the BRAF mutation status.",
        title="BRAF mutations in thyroid cancer",
    )
    digest = build_evidence_digest(question, polyposis + thyroid)
    assert digest.pmids == ["11247896"]
    # With no article about the question, the nearest evidence is still quoted.
    assert build_evidence_digest(question, thyroid).pmids == ["26285789"]


def test_an_article_about_the_question_says_one_of_its_technical_words() -> None:
    # Asked whether pulpotomy is a permanent treatment for molars, the digest quoted a
    # fluoridation study beside the pulpotomy trial: it says "permanent" and "treatment", half
    # the question's words, and neither "pulpotomy" nor "molars".
    question = "Is pulpotomy a permanent treatment for molars?"
    pulpotomy = make_evidence(
        "22900881",
        "There is insufficient clinical evidence to consider this technique for the treatment "
        "of every permanent tooth.",
        title="Should pulp chamber pulpotomy be seen as a permanent treatment?",
    )
    fluoride = make_evidence(
        "9140335",
        "Fluoridation reduces the need for permanent restorative treatment in young adults.",
        title="Fluoridation and restorative treatment in adults",
    )
    assert build_evidence_digest(question, pulpotomy + fluoride).pmids == ["22900881"]


def test_an_abbreviation_the_question_writes_in_capitals_is_one_of_its_technical_words() -> None:
    # Asked whether preoperative CRP tells the pathological stage of localized prostate cancer,
    # the digest leaned "the conclusions conflict" on a study of the year of prostatectomy,
    # which says "preoperative", "pathological", "prostate" and "cancer" but never CRP.
    question = "Can preoperative CRP tell us the pathological stage of localized prostate cancer?"
    crp = make_evidence(
        "25787073",
        "In patients with clinically localized prostate cancer, CRP does not appear to possess "
        "the predictive value.",
        title="Do preoperative serum C-reactive protein (CRP) levels predict the definitive "
        "pathological stage in prostate cancer?",
    )
    year = make_evidence(
        "14713788",
        "When controlling for preoperative features, the year in which radical prostatectomy "
        "was performed is a predictor of outcome in prostate cancer.",
        "Pathological stage improved over the years in clinically localized disease.",
        title="Is year of radical prostatectomy a predictor of outcome in prostate cancer?",
    )
    rectal = make_evidence(
        "25735444",
        "In patients with preoperative prostatic infiltration after chemoradiotherapy, "
        "prostatic resection is necessary for a clear pathological stage in localized cancer.",
        title="Rectal cancer affecting the prostatic plane",
    )
    digest = build_evidence_digest(question, crp + year + rectal)
    assert digest.pmids == ["25787073"]
    assert digest.verdict_reason != "the conclusions conflict (1 for, 1 against)"


def test_a_subgroup_set_against_the_studys_own_finding_does_not_hedge_it() -> None:
    # Asked whether exercising while pregnant prevents postpartum depression, the digest leaned
    # "uncertain: the conclusions are hedged" over PubMedQA 21880023 (gold no): its finding, and
    # a subgroup's set against it. ("postpartum" and "postnatal" are one word.)
    trial = make_evidence(
        "21880023",
        "We did not find a lower prevalence of high EPDS scores among women randomized to "
        "regular exercise during pregnancy compared with the control group. However, a "
        "subgroup of women in the intervention group who did not exercise regularly prior to "
        "pregnancy had a reduced risk of postnatal depression.",
        title="Does exercise during pregnancy prevent postnatal depression?",
        publication_types=["Randomized Controlled Trial"],
    )
    digest = build_evidence_digest(
        "Can exercising while pregnant prevent postpartum depression?", trial
    )
    assert digest.verdict == "no"


def test_one_strong_source_is_enough() -> None:
    rct = make_evidence(
        "77777777",
        "Aspirin significantly reduced the risk of recurrent stroke.",
        publication_types=["Randomized Controlled Trial"],
    )
    assert build_evidence_digest(QUESTION, rct).verdict == "yes"


def test_conflicting_sources_are_uncertain() -> None:
    digest = build_evidence_digest(QUESTION, ASPIRIN_YES_1 + ASPIRIN_YES_2 + ASPIRIN_NO)
    assert digest.verdict == "uncertain"
    assert "conflict" in digest.verdict_reason


def test_verdict_no_from_negative_conclusions() -> None:
    other_no = make_evidence(
        "88888888", "There was no significant difference in recurrent stroke with aspirin."
    )
    assert build_evidence_digest(QUESTION, ASPIRIN_NO + other_no).verdict == "no"


def test_no_verdict_for_open_questions_and_caution_for_negated_ones() -> None:
    evidence = ASPIRIN_YES_1 + ASPIRIN_YES_2
    assert build_evidence_digest("Which drugs prevent recurrent stroke?", evidence).verdict is None
    assert (
        build_evidence_digest("Does aspirin not reduce recurrent stroke?", evidence).verdict
        == "uncertain"
    )


def test_empty_evidence() -> None:
    digest = build_evidence_digest(QUESTION, [])
    assert "No evidence was retrieved" in digest.text
    assert digest.pmids == [] and digest.verdict == "uncertain"


def _hash_embed(texts: Sequence[str]) -> np.ndarray:
    """A deterministic bag-of-words embedder (hashed), L2-normalised like the real one."""
    out = np.zeros((len(texts), 256), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z]{3,}", text.lower()):
            out[row, int(hashlib.md5(word[:6].encode()).hexdigest(), 16) % 256] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


class _EmbedderObject:
    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return _hash_embed(texts)


def test_embedder_ranks_and_protocol_objects_work() -> None:
    evidence = ASPIRIN_YES_1 + ASPIRIN_YES_2 + UNRELATED
    by_function = build_evidence_digest(QUESTION, evidence, embedder=_hash_embed)
    embedder = _EmbedderObject()
    by_object = build_evidence_digest(QUESTION, evidence, embedder=embedder)
    assert embedder.calls == 1
    assert by_function.pmids == by_object.pmids
    assert "44444444" not in by_function.pmids
    assert by_function.verdict == "yes"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Does aspirin reduce stroke?", True),
        ("Target serum urate: do gout patients know their goal?", True),
        ("Can PRISM predict length of PICU stay?", True),
        ("Which patients benefit from statins?", False),
        # A noun phrase asked about is a yes/no title (the one rule the LLM answer uses too).
        ("Autoerotic asphyxiation: secret pleasure--lethal outcome?", True),
        ("Statins: what is the evidence?", False),
        ("\u00bfIs aspirin safe in pregnancy?", True),
    ],
)
def test_yes_no_question_detection(question: str, expected: bool) -> None:
    assert read_frame(question).yes_no is expected


@pytest.mark.parametrize(
    ("sentence", "question", "expected"),
    [
        (
            "Statins did not significantly improve outcome after stroke.",
            "Do statins improve outcome after stroke?",
            "no",
        ),
        (
            "Statins improved outcome after stroke.",
            "Do statins improve outcome after stroke?",
            "yes",
        ),
        (
            "Statins improved outcome in some patients; however, the benefit of statins "
            "after stroke remains unclear.",
            "Do statins improve outcome after stroke?",
            "uncertain",
        ),
        (
            "Statins improved outcome after stroke, but their effect on mortality remains unclear.",
            "Do statins improve outcome after stroke?",
            "yes",
        ),
        (
            "Patients given radiotherapy had worse outcomes than those who had not received it.",
            "Does radiotherapy affect outcome?",
            "yes",
        ),
        (
            "Laparoscopic repair was as effective as open repair.",
            "Is laparoscopic repair as effective as open repair?",
            "yes",
        ),
        (
            "There was no significant difference between laparoscopic and open repair.",
            "Is laparoscopic repair better than open repair?",
            "no",
        ),
        (
            "No major complications occurred after the procedure.",
            "Is the procedure safe?",
            "uncertain",
        ),
        (
            "Coffee intake increased the risk of arrhythmia.",
            "Does coffee reduce the risk of arrhythmia?",
            "uncertain",
        ),
        ("The weather was pleasant during recruitment.", "Does aspirin reduce stroke?", None),
        (
            # What is shown answers, not the showing: the local model's "Verdict: No" sentence
            # read uncertain ("shows that" a yes cue, "not" a no cue).
            "The evidence shows that extended aortic replacement in acute type A dissection is "
            "not justified.",
            "Is extended aortic replacement justified in acute type A dissection?",
            "no",
        ),
        ("These results show that the procedure is safe.", "Is the procedure feasible?", "yes"),
        (
            # PubMedQA 11340218 (gold no): a study's power, not a benefit found.
            "The statistical power of this study was such that only large beneficial effects of "
            "statins in acute stroke could be confirmed.",
            "Does pretreatment with statins improve clinical outcome after stroke?",
            "uncertain",
        ),
        (
            # PubMedQA 12607666's conclusion (gold yes) read nothing.
            "Extended replacement can be done with good early and midterm results. Therefore we "
            "advocate complete replacement in all patients.",
            "Is extended aortic replacement justified in acute type A dissection?",
            "yes",
        ),
        ("We did not show that X improves survival.", "Does X improve survival?", "no"),
        (
            # A tumour's grade is no negative finding (PubMedQA 12947068's conclusion).
            "Potentially curative therapy results in significantly improved LE and QALE for "
            "older men with moderately or poorly differentiated localized prostate cancer.",
            "Do older men benefit from curative treatment of localized prostate cancer?",
            "yes",
        ),
        (
            # PubMedQA 17483607's conclusion (gold yes) read nothing, so a "Verdict: No" over
            # the local model's "NAC application after myringotomy can cause severe otorrhea"
            # stood.
            "N-acetylcysteine may cause severe otorrhea in the healing process of tympanic "
            "membrane perforations.",
            "Does N-acetylcysteine applied after myringotomy cause ear discharge?",
            "yes",
        ),
        ("Smoking did not cause hearing loss.", "Does smoking cause hearing loss?", "no"),
        ("The causes of death were cardiac.", "Does smoking cause death?", None),
        (
            # PubMedQA 10473855's conclusion (gold no) read uncertain ("linked" a yes cue,
            # "rather than" a no cue), and the local model's "is related to pylorus
            # preservation" stood.
            "In our experience, DGE is linked to the occurrence of other postoperative "
            "complications rather than to pylorus preservation.",
            "Is delayed gastric emptying after Whipple surgery caused by preserving the pylorus?",
            "no",
        ),
        (
            # PubMedQA 15800018's conclusion (gold yes) read no ("similar" a no cue), and the
            # local model's true "yes" sentences were left out against it.
            "The elevated risk of death after CABG surgery known previously to be associated "
            "with CDM seems also to be shared by a group of similar size that includes patients "
            "with IFG and undiagnosed DM.",
            "Is mildly raised fasting glucose before bypass surgery linked to higher death rates?",
            "yes",
        ),
        ("Outcomes were similar in both groups.", "Is A better than B?", "no"),
        (
            "Pain was linked to postoperative complications rather than to pylorus preservation.",
            "Is pain linked to postoperative complications?",
            "yes",
        ),
        (
            # PubMedQA 12095973's conclusion (gold no) read uncertain ("not" under a question
            # on safety), and the local model's "CRT is a safe alternative to surgery" stood.
            "Exclusive CRT approach is not safe to treat patients with low infiltrative rectal "
            "carcinoma.",
            "Is chemoradiation a safe alternative to surgery for low rectal cancer?",
            "no",
        ),
        ("CT cannot replace bone scintigraphy.", "Can CT replace a bone scan?", "no"),
        (
            # PubMedQA 20488985's conclusion (gold no) read uncertain ("little" governed only
            # the next few words, leaving "were effective" a yes).
            "There is little evidence that the 2008 public antibiotic campaigns were effective.",
            "Did the English antibiotic campaigns change what the public knows?",
            "no",
        ),
        (
            # PubMedQA 23774337 (gold no) read yes ("support the").
            "There are no data to support the widespread practice of using central venous "
            "pressure to guide fluid therapy.",
            "Does central venous pressure predict fluid responsiveness?",
            "no",
        ),
        (
            # The local model's sentence over PubMedQA 12095973 read uncertain, so it stated
            # no answer to be held to the article (which concludes "not safe").
            "Chemoradiation is a safe alternative to surgery for low rectal cancer, with "
            "overall survival rates of 60.5% and no significant adverse effects.",
            "Is chemoradiation a safe alternative to surgery for low rectal cancer?",
            "yes",
        ),
        (
            # PubMedQA 26079501's conclusion (gold no) read uncertain ("correlated" a yes cue
            # in the concession), and the local model's "BD may be a reliable prognostic
            # marker for outcome and mortality" stood under "Verdict: Yes".
            "Although BD is correlated with GCS at presentation and RTS, it is not a reliable "
            "prognostic marker for outcome and mortality in patients with isolated TBI.",
            "Does a base deficit predict death after severe head injury?",
            "no",
        ),
        (
            # Only the concession is about the question: the main clause does not decide, the
            # cues of the whole sentence do.
            "Although statins lowered LDL cholesterol, mortality did not change.",
            "Do statins lower LDL cholesterol?",
            "uncertain",
        ),
        (
            "There was no evidence that the drug increased complications.",
            "Is the drug safe?",
            "uncertain",
        ),
        (
            # PubMedQA 24235894's conclusion (gold no) read nothing ("no" held only one word
            # from "effect"), and the local model's true "The evidence shows that there is no
            # first night effect on sleep bruxism" read yes ("shows that").
            "The results showed no overall first night effect on severity of RMMA frequency in "
            "young and healthy patients with SB.",
            "Is there a first night effect in sleep bruxism?",
            "no",
        ),
        (
            "The evidence shows that there is no first night effect on sleep bruxism.",
            "Is there a first night effect in sleep bruxism?",
            "no",
        ),
        (
            # PubMedQA 18784527's conclusion (gold no) read uncertain: the anatomical
            # "superior wall" was a yes cue.
            "We concluded that depiction of the superior wall of the mandibular canal cannot be "
            "improved by changing the thickness of images.",
            "Does changing the thickness of CT images improve how well the mandible is shown?",
            "no",
        ),
        (
            # PubMedQA 24235894's last conclusion sentence, a recommendation, read yes
            # ("confirmed"), so the article's conclusion read no way.
            "However, low RMMA frequency in the first night could be confirmed by a second "
            "night based on the patient's medical and dental history.",
            "Is there a first night effect in sleep bruxism?",
            None,
        ),
        ("The association was confirmed in the second cohort.", "Is A associated with B?", "yes"),
        (
            # A plural noun after "no": the local model's "There is a first night effect" was
            # nearest this result sentence, read yes ("found").
            "Overall, no first night effects were found for most sleep variables.",
            "Is there a first night effect in sleep bruxism?",
            "no",
        ),
        (
            # PubMedQA 25592625's conclusion (gold no) read nothing, and the local model's
            # "infants need a heart evaluation before and during propranolol therapy" stood.
            "Pretreatment ECG is of limited value for patients with an unremarkable "
            "cardiovascular history and a normal heart rate and blood pressure.",
            "Is cardiovascular evaluation necessary prior to beta-blocker therapy?",
            "no",
        ),
        (
            # PubMedQA 11838307's conclusion (gold no) read nothing, and the local model's "cold
            # knife conization and LEEP are the same procedure" stood under Yes.
            "In a prospective evaluation, cold knife cone specimens were 50% longer and 100% "
            "heavier than LEEP specimens.",
            "Are cold knife conization and LEEP the same procedure?",
            "no",
        ),
        ("Stays were not longer than after LEEP.", "Is A the same as LEEP?", "uncertain"),
        ("Diameters were similar in both groups.", "Is A the same as LEEP?", "yes"),
        ("Drug A was superior to drug B.", "Is drug A better than drug B?", "yes"),
        ("Drug A was superior.", "Is drug A better than drug B?", "yes"),
        (
            # PubMedQA 23240452's conclusion (gold no) read uncertain ("predict" after a
            # negation's reach), and the local model's "hair and urine trace element analysis
            # can predict kidney stone composition" stood over it.
            "The data obtained did not allow for the creation of a proper and practical "
            "algorithm to predict stone chemical composition based on hair and urine analysis.",
            "Can hair and urine trace element analysis predict kidney stone composition?",
            "no",
        ),
        ("These data allow us to predict stone composition.", "Can X predict stones?", "yes"),
        (
            # PubMedQA 21190419's conclusion (gold no) read uncertain ("predicting" after the
            # negation's reach): the digest leaned "uncertain: the conclusions are hedged".
            "Therefore, NT assessment does not prove to be an useful ultrasound parameter for "
            "predicting GDM onset during pregnancy.",
            "Does first-trimester nuchal translucency predict gestational diabetes?",
            "no",
        ),
        ("NT was a useful parameter for predicting GDM.", "Does NT predict GDM?", "yes"),
        (
            # PubMedQA 25787073's conclusion (gold no) read uncertain, and the local model's
            # "CRP levels do predict the definitive pathological stage" stood under Yes.
            "In patients with clinically localized PC, CRP does not appear to possess the "
            "predictive value and it was shown to have patients with other tumor entities or "
            "advanced PC.",
            "Do preoperative serum C-reactive protein levels predict the definitive "
            "pathological stage in patients with clinically localized prostate cancer?",
            "no",
        ),
        ("CRP appears to possess predictive value.", "Does CRP predict stage?", "yes"),
        # A measure, not a finding: it read yes, so the local model's "Verdict: Yes" over its
        # own "a scout film is not necessary" had a sentence on its side.
        (
            "The estimated effective radiation dose averaged 0.09 mSv in children.",
            "Is a scout film needed before a voiding cystourethrogram in children?",
            None,
        ),
        ("Aspirin was effective in preventing stroke.", "Does aspirin prevent stroke?", "yes"),
        (
            # PubMedQA 24695920's conclusion (gold yes) read uncertain ("poorer" a negation),
            # and the local model's "Verdict: No" stood over it.
            "Greater anterior laxity of the uninjured knee was associated with poorer stability "
            "and functional outcomes after ACL reconstruction.",
            "Does knee laxity on the healthy side affect ACL reconstruction results?",
            "yes",
        ),
        ("High Ki-67 predicted poor survival.", "Does Ki-67 predict survival?", "yes"),
        ("The score had poor accuracy.", "Is the score accurate?", "no"),
        (
            # PubMedQA 10783841's conclusion (gold yes) read uncertain ("not" a negation), and
            # the local model's "Verdict: No" stood over its own sentence saying yes.
            "Based on data derived from self-reported health conditions, and not withstanding "
            "the limitations of such a study, we conclude that there is good evidence to "
            "suggest that individuals with moderate to severe periodontal disease are at higher "
            "risk of suffering from rheumatoid arthritis and vice versa.",
            "Is rheumatoid arthritis linked to periodontitis?",
            "yes",
        ),
    ],
)
def test_sentence_stance(sentence: str, question: str, expected: str | None) -> None:
    assert sentence_stance(sentence, question) == expected


def test_split_sentences_keeps_abbreviations_and_decimals() -> None:
    text = "Mean age was 45.2 yrs. vs. 50.1 in controls (p < 0.05). Aspirin, e.g. 81 mg, helped."
    assert split_sentences(text) == [
        "Mean age was 45.2 yrs. vs. 50.1 in controls (p < 0.05).",
        "Aspirin, e.g. 81 mg, helped.",
    ]


@pytest.mark.shared_data
def test_pubmedqa_verdicts_are_mostly_right(shared_data: Path) -> None:
    """A regression guard on real abstracts (the benchmark reports the full numbers)."""
    path = shared_data / "pubmedqa" / "pqal_dev.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    data = json.loads(path.read_text())
    given = right = 0
    for pmid, record in list(data.items())[:150]:
        sections = [
            AbstractSection(label=label, category=label, text=text)
            for label, text in zip(record["LABELS"], record["CONTEXTS"], strict=False)
        ]
        evidence = make_evidence(
            pmid, record["LONG_ANSWER"], " ".join(s.text for s in sections), title="t"
        )
        digest = build_evidence_digest(record["QUESTION"], evidence, min_sources=1)
        assert digest.pmids == [pmid]
        if digest.verdict in ("yes", "no"):
            given += 1
            right += digest.verdict == record["final_decision"]
    assert given >= 30, f"only {given} verdicts on 150 records"
    assert right / given >= 0.7, f"verdict accuracy {right / given:.2f}"


def test_an_aim_is_no_finding_and_an_abbreviation_ranks_as_its_long_form() -> None:
    # The digest for "How common is fibromyalgia in ... Sjögren's syndrome?" quoted the
    # article's objective ("To determine whether fibromyalgia (FM) is more common ...") as a
    # finding, and ranked its results sentences by "FM" and "pSS", which embed far from the
    # question's words.
    evidence = make_evidence(
        "11053064",
        "Fatigue in pSS is not due to the coexistence of FM in most cases.",
        "FM was present in 12% of patients with pSS, compared with 5% of lupus patients.",
        background="To determine whether fibromyalgia (FM) is more common in patients with "
        "primary Sjögren's syndrome (pSS) who complain of fatigue.",
    )
    question = "How common is fibromyalgia in patients with primary Sjögren's syndrome?"
    digest = build_evidence_digest(question, evidence)  # word overlap: no embedder needed
    quoted = [s.text for s in digest.sentences]
    assert not any(text.startswith("To determine") for text in quoted)
    assert "FM was present in 12% of patients with pSS, compared with 5% of lupus patients." in (
        quoted
    )


def test_a_subject_no_article_mentions_is_said_first_and_leaves_no_verdict() -> None:
    evidence = ASPIRIN_YES_1 + ASPIRIN_YES_2
    plain = build_evidence_digest(QUESTION, evidence)
    assert plain.verdict == "yes"
    digest = build_evidence_digest(QUESTION, evidence, unmentioned=["tinnitus"])
    assert digest.verdict == "uncertain"
    assert digest.verdict_reason == "none of the retrieved articles is about tinnitus"
    assert "None of the retrieved articles is about tinnitus: the sentences below are the " in (
        digest.text
    )
    assert digest.sentences == plain.sentences
    assert "Conclusions:" not in digest.text


STATIN_STROKE = make_evidence(
    "55555555",
    "Statin therapy reduced the risk of recurrent stroke after a first ischaemic stroke.",
    "Recurrent stroke occurred in 5% of the statin group and 8% of the placebo group.",
    title="Statins after ischaemic stroke",
)
STATIN_LIPIDS = make_evidence(
    "66666666",
    "Statins lowered LDL cholesterol by a third in adults with diabetes.",
    title="Statins and cholesterol in diabetes",
)
BACK_PAIN = make_evidence(
    "77777777",
    "Physiotherapy reduced low back pain and improved the strength of trunk muscles.",
    title="Physiotherapy for back pain",
)


def test_no_article_about_the_drug_is_said_first_and_nothing_is_a_conclusion() -> None:
    # Asked about aspirin, the digest quoted a statin study's conclusion under "Conclusions".
    digest = build_evidence_digest(QUESTION, STATIN_STROKE)
    lines = digest.text.splitlines()
    assert lines[2] == (
        "None of the retrieved articles is about aspirin: the sentences below are the nearest "
        "evidence found, and may not answer the question."
    )
    assert "Conclusions:" not in digest.text and "Other findings:" not in digest.text
    assert "Nearest evidence (not about the question):" in lines
    assert digest.verdict == "uncertain"
    assert digest.verdict_reason == "none of the retrieved articles is about aspirin"
    # With an article about the question among them, nothing changes.
    on = build_evidence_digest(QUESTION, ASPIRIN_YES_1 + STATIN_STROKE)
    assert "None of the retrieved" not in on.text and "Conclusions:" in on.text
    assert not_about(QUESTION, [ASPIRIN_YES_1[0].article], read_frame(QUESTION)) == ""


def test_articles_each_about_a_part_of_the_question_are_about_none_of_it() -> None:
    # "Do statins cause muscle pain?" over statin studies and a back-pain study.
    question = "Do statins cause muscle pain?"
    digest = build_evidence_digest(question, STATIN_LIPIDS + BACK_PAIN)
    assert digest.text.splitlines()[2].startswith(
        "None of the retrieved articles is about statins and muscle pain together: "
    )
    assert "Conclusions:" not in digest.text and digest.verdict == "uncertain"


def test_a_population_no_quoted_article_speaks_of_is_said_first() -> None:
    question = "Does aspirin reduce the risk of recurrent stroke in children?"
    digest = build_evidence_digest(question, ASPIRIN_YES_1 + ASPIRIN_YES_2)
    assert digest.pmids == ["11111111", "22222222"]
    assert digest.text.splitlines()[2] == (
        "None of the articles quoted speaks of children: what they found may not hold for children."
    )
    assert digest.verdict == "uncertain" and "Conclusions:" in digest.text


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        ("Does aspirin reduce the risk of recurrent stroke?", ASPIRIN_YES_1 + ASPIRIN_YES_2),
        ("Do statins cause muscle pain?", STATIN_LIPIDS + BACK_PAIN),
    ],
)
def test_the_sentences_are_ranked_as_an_uncapped_digest_quotes_them(
    question: str, evidence: list[Evidence]
) -> None:
    every = 10_000
    digest = build_evidence_digest(question, evidence, max_sentences=every, per_article=every)
    ranked = rank_sentences(question, evidence)
    assert ranked == digest.sentences and len(ranked) >= 2
