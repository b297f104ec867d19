"""The question frame: one reading of what a question asks."""

from __future__ import annotations

import pytest

from medlit.words.frame import OPPOSITE, read_frame


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        ("Does aspirin prevent stroke in adults?", "down"),
        ("Does aspirin cause stroke in adults?", "up"),
        ("Does exercise lower blood pressure?", "down"),
        ("Does smoking increase the risk of lung cancer?", "up"),
        ("Is vitamin D deficiency common among nursing home residents?", None),
    ],
)
def test_direction_asked(question: str, direction: str | None) -> None:
    assert read_frame(question).direction == direction


def test_populations_named_alike() -> None:
    frame = read_frame("Does aspirin prevent stroke in elderly women?")
    assert frame.population_names("age") == {"elderly"}
    assert frame.population_names("sex") == {"female"}


def test_sources_are_part_of_the_frame_and_json() -> None:
    frame = read_frame("Does aspirin prevent stroke?", sources=["local"])
    assert frame.sources == ("local",)
    assert frame.to_json()["sources"] == ("local",)
    assert read_frame("Does aspirin prevent stroke?").sources == ()


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Does aspirin prevent stroke in adults?", "effect"),
        ("What disease can be treated with Glofitamab?", "list"),
        ("What is CHARMS?", "definition"),
        ("How common is vitamin D deficiency in nursing homes?", "frequency"),
        ("How accurate is ultrasound for appendicitis?", "diagnosis"),
        ("Is obesity associated with knee osteoarthritis?", "risk"),
    ],
)
def test_kind(question: str, kind: str) -> None:
    assert read_frame(question).kind == kind


@pytest.mark.parametrize(
    ("question", "direction", "words"),
    [
        ("Does elective re-siting of intravenous cannulae decrease thrombophlebitis?", "down", ""),
        ("Delayed peripheral facial palsy in the stapes surgery: can it be prevented?", "down", ""),
        ("Does oral alpha-galactosidase relieve irritable bowel symptoms?", "down", "relieve"),
        ("Does pretreatment with statins improve clinical outcome after stroke?", "better", ""),
        ("Does preoperative anemia adversely affect surgery outcomes?", "worse", ""),
        ("Does glomerular hyperfiltration in pregnancy damage the kidney?", "worse", "damage"),
        # the turned forms read the other way: protecting the kidney is for the better
        ("Does glomerular hyperfiltration in pregnancy protect the kidney?", "better", "protect"),
        ("Does vitamin C protect against complex regional pain syndrome?", "down", "protect"),
        ("Is Chaalia/Pan Masala harmful for health?", "worse", "harmful"),
        ("Is Chaalia/Pan Masala beneficial for health?", "better", "beneficial"),
        ("Are glucose levels associated with increased mortality after CABG?", "up", ""),
        ("Does a febrile reaction predispose recipients to alloimmunization?", "up", ""),
        # nouns and adjectives are no direction asked
        ("Nasal fractures: is closed reduction satisfying?", None, ""),
        ("Is dexamethasone effective in pediatric asthma exacerbations?", None, ""),
        ("Gadofosveset-enhanced MR angiography: is it accurate?", None, ""),
        # only the asking part asks: "Increased Patient Risk" is the title's
        ("Prompting Providers about Increased Patient Risk: Does It Work?", None, ""),
        # both ways: no one direction
        ("Does caffeine increase or decrease blood pressure?", None, ""),
    ],
)
def test_direction_is_read_from_the_asking_verb(
    question: str, direction: str | None, words: str
) -> None:
    frame = read_frame(question)
    assert frame.direction == direction
    assert words in frame.direction_words


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        # a question that is not yes/no asks for causes or ways, no direction
        ("What is the cause of back pain? Lower right side to the middle.", None),
        ("What are the causes of recurring eye pain and redness?", None),
        ("What virus causes swelling of the brain?", None),
        ("What increases blood coagulation?", None),
        ("How can I prevent orthostatic hypotension?", None),
        ("How to improve sexual energy?", None),
        ("Swollen tonsil, swelling is reducing. What to do?", None),
        # ... but its yes/no question does
        ("What can cause a yellow discharge? Can long term antibiotics be a cause?", "up"),
        # a word of change named as an item of a list is not asked
        ("Are there associations of health status, disease activity and damage in SLE?", None),
        ("Does TSH of 5 mean hypothyroidism? Is very dry skin and increase in acne a sign?", None),
        ("Does early treatment shorten time to peak and reduce its severity?", "down"),
        ("Is the drug safe, and beneficial in older adults?", "better"),
        # nouns and title forms that ask a direction keep reading
        ("Is there an increase in the incidence of GBS carrier rates among pregnant women?", "up"),
        ("Treadmill training post stroke: are there any secondary benefits?", "better"),
        ("Alcohol and myocardial infarction: a benefit of alcohol consumed with meals?", "better"),
        ("Elephant trunk for chronic aortic dissection: cause of haemolytic anaemia?", "up"),
        (
            "Is gastric electrical stimulation superior to standard pharmacologic therapy in "
            "improving GI symptoms, healthcare resources, and long-term health care benefits?",
            "better",
        ),
    ],
)
def test_direction_only_of_a_yes_no_question(question: str, direction: str | None) -> None:
    assert read_frame(question).direction == direction


def test_opposites_pair_each_direction() -> None:
    assert {d: OPPOSITE[OPPOSITE[d]] for d in OPPOSITE} == {d: d for d in OPPOSITE}
    assert (
        read_frame("Does aspirin reduce stroke?").direction
        == OPPOSITE[read_frame("Does aspirin increase stroke?").direction or "up"]
    )


@pytest.mark.parametrize(
    ("question", "subject", "outcome", "comparison"),
    [
        ("Does aspirin prevent stroke in adults?", "aspirin", "stroke", ""),
        ("Does smoking increase the risk of lung cancer?", "smoking", "lung cancer", ""),
        (
            "Steroids in ear drops: do they reduce cochlear toxicity?",
            "steroids",
            "cochlear",
            "",
        ),
        (
            "Is gastric stimulation superior to drug therapy in improving GI symptoms?",
            "gastric stimulation",
            "gi symptoms",
            "drug therapy",
        ),
        # A noun heading "X of Y" is no verb, though it can be one ("course", "layer").
        (
            "Does stopping a short course of PPI therapy produce rebound acid symptoms?",
            "stopping a short course of ppi therapy",
            "rebound acid symptoms",
            "",
        ),
        (
            "Does the investing layer of the deep fascia exist?",
            "investing layer of the deep fascia",
            "",
            "",
        ),
        # "Can X be done with Y?": Y is asked about, X is what it acts on.
        (
            "Can some Gartland type II fractures be managed with casting instead of pinning?",
            "casting",
            "gartland type ii fractures",
            "pinning",
        ),
        (
            "Can normal knee kinematics be restored with unicompartmental knee replacement?",
            "unicompartmental knee replacement",
            "normal knee kinematics",
            "",
        ),
    ],
)
def test_subject_outcome_comparison(
    question: str, subject: str, outcome: str, comparison: str
) -> None:
    frame = read_frame(question)
    assert frame.subject == subject
    assert outcome in frame.outcome
    assert frame.comparison == comparison


@pytest.mark.parametrize(
    ("question", "kind", "name"),
    [
        ("Does aspirin prevent stroke in women?", "sex", "female"),
        ("Does aspirin prevent stroke in men?", "sex", "male"),
        ("Does aspirin prevent stroke in children?", "age", "child"),
        ("Is ankle/arm pressure predictive in older patients?", "age", "elderly"),
        ("Does exercise during pregnancy prevent postnatal depression?", "pregnancy", "pregnancy"),
        (
            "Does base deficit predict mortality in patients with traumatic brain injury?",
            "condition",
            "traumatic brain injury",
        ),
        (
            "Would QT dispersion predict hypertrophy in hypertensive patients?",
            "condition",
            "hypertensive",
        ),
        (
            "Is ankle/arm pressure predictive in patients living in nursing homes?",
            "setting",
            "nursing homes",
        ),
        (
            "Double balloon enteroscopy: is it safe in a community setting?",
            "setting",
            "community setting",
        ),
        ("Does Paget's disease exist in India?", "setting", "india"),
        ("Is HIV control in Haiti making a difference?", "setting", "haiti"),
        ("Does vitamin C prevent pain after hip fractures?", "site", "hip"),
        ("Is ultrasound reliable for staging gastric cancer?", "site", "gastric"),
        ("Is enteroscopy accurate for disorders of the colon?", "site", "colon"),
        ("Is half-dose angiography enough for the renal arteries?", "site", "renal arteries"),
        ("Does OPLL affect outcome after thoracic cord injury?", "site", "thoracic cord"),
        ("Does insulin raise atherosclerosis in type II diabetes?", "condition", "type 2 diabetes"),
        ("Does anemia worsen the outcomes of cardiac surgery?", "setting", "cardiac surgery"),
        (
            "Does heparin prevent pneumonia in patients on home mechanical ventilation?",
            "setting",
            "home mechanical ventilation",
        ),
    ],
)
def test_every_kind_of_population_is_read(question: str, kind: str, name: str) -> None:
    assert name in read_frame(question).population_names(kind)


def test_no_population_where_none_is_named() -> None:
    assert read_frame("Does aspirin prevent stroke?").populations == ()
    assert read_frame("Is Chaalia/Pan Masala harmful for health?").populations == ()


@pytest.mark.parametrize(
    ("question", "names"),
    [
        # the word before the people names no condition: a head that does is the population
        ("Can symptoms alone identify airflow obstruction in current smokers?", ("smokers",)),
        ("Does ultrasound surveillance of at-risk patients improve survival?", ()),
        # a rare word, or a common one naming a condition, does
        ("Does metformin lower mortality in cancer patients?", ("cancer",)),
        ("Is the vaccine safe in diabetic patients?", ("diabetic",)),
    ],
)
def test_a_condition_is_a_word_that_names_one(question: str, names: tuple[str, ...]) -> None:
    assert read_frame(question).population_names("condition") == frozenset(names)


def _yes_no(question: str) -> bool:
    return read_frame(question).yes_no


def test_yes_no_questions() -> None:
    assert _yes_no("Does metformin reduce mortality?")
    assert _yes_no("Is aspirin safe in pregnancy?")
    assert not _yes_no("What is the first-line treatment of gout?")
    assert not _yes_no("Which statin is best tolerated?")
    # PubMedQA-style titles: a statement, then the yes/no question.
    assert _yes_no(
        "Autoxidation products are increased in uremic plasma: is there oxidative stress?"
    )
    assert _yes_no("Laparoscopy in the elderly - is it safe?")
    assert not _yes_no("Statins: what is the evidence?")
    assert _yes_no(
        "Malnutrition, a new inducer for arterial calcification in hemodialysis patients?"
    )
    assert not _yes_no("What are the effects of aspirin, heparin and warfarin?")
    assert _yes_no("In older adults with atrial fibrillation, is warfarin safe?")
    # Negated auxiliaries, and "It's ... ?" typed for "Is it ...?" (a PubMedQA title).
    assert _yes_no("Isn't aspirin harmful in the elderly?")
    assert _yes_no("Can't statins cause myopathy?")
    assert _yes_no("It's Fournier's gangrene still dangerous?")
    assert not _yes_no("It's known that statins cause myopathy.")
    assert not _yes_no("Its effect on survival?")


@pytest.mark.parametrize(
    "question",
    [
        "Does aspirin prevent stroke in adults over 65 with type 2 diabetes?",
        "Is metformin safe in pregnant women in the ICU?",
        "What causes migraine?",
    ],
)
def test_the_frame_as_json_is_what_asdict_gives(question: str) -> None:
    from dataclasses import asdict

    frame = read_frame(question, ["pubmed", "local"])
    assert frame.to_json() == asdict(frame)
    assert read_frame(question, ["local", "pubmed"]) is frame  # remembered with its sources


def test_a_result_keeps_a_frame_given_and_shows_it() -> None:
    from medlit.assistant import AskResult, CacheInfo, CallCounts

    frame = read_frame("Does aspirin prevent stroke?").to_json()
    result = AskResult(
        question="q",
        answer="a",
        cache=CacheInfo(tier1="hit"),
        stop_reason="cache_hit",
        api_calls=CallCounts(),
        standalone_question="q",
        question_frame=frame,
    )
    assert result.question_frame == frame
    assert result.model_dump(mode="json")["question_frame"]["subject"] == frame["subject"]
    assert "question_frame" not in repr(result)  # a repr reads no frame


@pytest.mark.parametrize(
    ("question", "subject", "outcome"),
    [
        # A preposition the verb leaves is no word of the outcome.
        ("Does zorblatamab work for quixotic fever?", "zorblatamab", "quixotic fever"),
        ("Does lung ischemia have an impact on coronary flow?", "lung ischemia", "coronary flow"),
        # A possessive or an indefinite person is no word of either.
        ("Could my seasonal allergies worsen asthma?", "seasonal allergies", "asthma"),
        ("Can hypnotherapy help someone quit smoking?", "hypnotherapy", "quit smoking"),
        # "in vitro" opens a name: it is kept.
        (
            "Does in vitro fertilization increase the risk of autism?",
            "in vitro fertilization",
            "autism",
        ),
        # "is it better to take X": X is asked about, not "it".
        ("Is it better to take aspirin at night to prevent stroke?", "aspirin", "stroke"),
        # A noun after "the" is no verb: "the use of X ... result in Y".
        (
            "Does the use of statins in sepsis result in cost savings?",
            "use of statins",
            "cost savings",
        ),
        # A subject never ends with an article, a determiner or a preposition.
        (
            "Is central venous pressure a reliable guide to fluid responsiveness?",
            "central venous pressure",
            "guide to fluid responsiveness",
        ),
        (
            "For lung cancer treated palliatively, are higher radiation doses of any benefit?",
            "higher radiation doses",
            "lung cancer treated palliatively",
        ),
        # a gene named after "in" is part of what is asked about
        (
            "Are mutations in the LMNA gene associated with cardiomyopathy?",
            "mutations in the lmna gene",
            "cardiomyopathy",
        ),
        # "is X caused by Y": Y is asked about as the cause of X
        (
            "Is Wilson disease caused by mutations in the ATP7B gene?",
            "mutations in the atp7b gene",
            "wilson disease",
        ),
        # people with a condition are no outcome: the condition is who it is asked of
        (
            "Does palliative radiation help patients with gallbladder cancer?",
            "palliative radiation",
            "",
        ),
    ],
)
def test_the_frame_reads_what_a_question_opens_and_leaves(
    question: str, subject: str, outcome: str
) -> None:
    frame = read_frame(question)
    assert (frame.subject, frame.outcome) == (subject, outcome)


@pytest.mark.parametrize(
    ("question", "subject", "comparison", "outcome"),
    [
        (
            "Is dexamethasone an effective alternative to oral prednisone in the treatment of "
            "pediatric asthma exacerbations?",
            "dexamethasone",
            "oral prednisone",
            "pediatric asthma exacerbations",
        ),
        (
            "Is Decadron (dexamethasone) as effective as prednisone for acute asthma "
            "exacerbations in children?",
            "decadron",
            "prednisone",
            "acute asthma exacerbations",
        ),
        (
            "Digital tomosynthesis: a viable alternative to noncontrast computed tomography for "
            "the follow-up of nephrolithiasis?",
            "digital tomosynthesis",
            "noncontrast computed tomography",
            "nephrolithiasis",
        ),
        # Nothing named for what they are set against: no outcome, not the comparison.
        ("Can dexamethasone replace oral prednisone?", "dexamethasone", "oral prednisone", ""),
    ],
)
def test_what_a_subject_is_set_against_is_its_comparison_not_its_outcome(
    question: str, subject: str, comparison: str, outcome: str
) -> None:
    frame = read_frame(question)
    assert (frame.subject, frame.comparison, frame.outcome) == (subject, comparison, outcome)


def test_the_words_linking_a_subject_to_the_change_asked_name_neither() -> None:
    # The link the frame reads in "is X effective for Y" is read before a change asked too.
    for question, subject, outcome in (
        (
            "Is vitamin D supplementation effective in preventing fractures?",
            "vitamin d supplementation",
            "fractures",
        ),
        (
            "Is metformin effective in reducing cardiovascular mortality?",
            "metformin",
            "cardiovascular mortality",
        ),
        (
            "Can the Internet be used to improve sexual health awareness?",
            "internet",
            "sexual health awareness",
        ),
        ("Is obesity associated with increased risk of asthma?", "obesity", "asthma"),
        ("Is apixaban superior to warfarin for preventing stroke?", "apixaban", "stroke"),
    ):
        frame = read_frame(question)
        assert (frame.subject, frame.outcome) == (subject, outcome), question
        assert frame.direction is not None


def test_a_cause_is_read_from_a_question_on_being_only() -> None:
    frame = read_frame("Can acupuncture treat vocal fold lesions caused by voice misuse?")
    assert frame.subject == "acupuncture"
