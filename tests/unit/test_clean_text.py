"""require_clean_text: the one check every piece of user text passes, in every front end."""

from __future__ import annotations

import pytest
from pydantic import ValidationError as PydanticValidationError

from medlit.assistant import Assistant
from medlit.checks.answer_wording import third_person, unauthored, without_opening_connective
from medlit.cli.app import printable
from medlit.config import Settings
from medlit.errors import ValidationError
from medlit.research.planner import validate_request
from medlit.sources.search import validate_query
from medlit.text import (
    remove_control_chars,
    require_clean_text,
    sentence_pieces,
    split_sentences,
)


def test_text_that_was_not_utf8_is_refused_naming_the_argument() -> None:
    with pytest.raises(ValidationError, match=r"^the question contains bytes that are not valid "
                       r"UTF-8 \(byte 0xff at character 9\)"):  # fmt: skip
        require_clean_text("aspirin \udcff stroke", "the question")
    with pytest.raises(ValidationError, match=r"the query is not valid Unicode \(a lone "
                       r"surrogate U\+D800"):  # fmt: skip
        require_clean_text("x\ud800", "the query")  # an unpaired "\ud800" escape in JSON


def test_control_characters_become_spaces_and_whitespace_is_kept() -> None:
    assert require_clean_text("a\x00b\x1b[31mc\x7fd\x85e", "q") == "a b [31mc d e"
    assert require_clean_text("tab\tnew\nline é 中文", "q") == "tab\tnew\nline é 中文"
    assert remove_control_chars("\x01\x02") == "  "


def test_every_api_entry_point_applies_it(settings: Settings) -> None:
    assistant = Assistant(settings)
    assert assistant.validate_question("Does\x00 aspirin\x1b help?") == "Does aspirin help?"
    for check in (
        lambda: assistant.validate_question("a\udcffb"),
        lambda: assistant.validate_session_id("s\udcff"),
        lambda: validate_request("a\udcffb", "quick", settings.research),
        lambda: validate_query("a\udcffb", settings),
    ):
        with pytest.raises(ValidationError, match="not valid UTF-8"):
            check()
    assert validate_request("why\x07 so?", "quick", settings.research) == ("why so?", "quick")


def test_a_session_id_follows_one_rule_in_every_front_end(settings: Settings) -> None:
    assistant = Assistant(settings)
    for good in ("s1", "team:oncology.2026-11_a", "x" * 128):
        assert assistant.validate_session_id(good) == good
    for bad in ("", "my notes", "x" * 129, "a/b", "é"):
        with pytest.raises(ValidationError, match=r"the session id .* is not valid"):
            assistant.validate_session_id(bad)


def test_printable_never_prints_raw_bytes() -> None:
    assert printable("caf\udce9 \x1b[2J\x00") == "caf\\xe9 \\x1b[2J\\x00"
    assert printable("lone \ud800") == "lone \\ud800"
    assert printable("two\nlines") == "two\nlines"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MEDLIT_HOME": ""}, "is empty"),
        ({"MEDLIT_PUBMED_BASE_URL": "notaurl"}, "must be an http:// or https:// URL"),
        ({"MEDLIT_EUROPEPMC_BASE_URL": "ftp://x/"}, "not 'ftp://x/'"),
        ({"MEDLIT_LLM_BASE_URL": "localhost:11434"}, "with a host"),
        ({"MEDLIT_LLM_TASKS": '{"answer": {"base_url": "x"}}'}, "with a host"),
        ({"MEDLIT_LLM_TASKS": '{"summarise": {}}'}, "unknown task 'summarise' (valid: plan_query"),
    ],
)
def test_settings_that_cannot_work_are_refused(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(PydanticValidationError, match=message.replace("(", r"\(")):
        Settings()


def test_good_urls_and_task_names_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_LLM_BASE_URL", " http://localhost:11434/v1 ")
    monkeypatch.setenv("MEDLIT_LLM_TASKS", '{"synthesize": {"model": "big"}}')
    settings = Settings()
    assert settings.llm.base_url == "http://localhost:11434/v1"
    assert settings.llm.tasks["synthesize"].model == "big"


def test_a_research_depth_override_keeps_that_depths_other_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The README's example form: one field named. It once replaced the whole depth, the
    # fields not named taking quick's values (a "deep" job of 4 sub-questions, 25 LLM calls).
    monkeypatch.setenv("MEDLIT_RESEARCH_DEEP", '{"max_seconds": 100}')
    monkeypatch.setenv("MEDLIT_RESEARCH_QUICK", '{"max_llm_calls": 10}')
    research = Settings().research
    assert research.deep.max_seconds == 100 and research.deep.max_sub_questions == 10
    assert research.deep.max_llm_calls == 200 and research.deep.max_depth == 3
    assert research.quick.max_llm_calls == 10 and research.quick.max_seconds == 300
    assert research.standard.max_sub_questions == 6


def test_repeated_sentences_are_dropped_once_said() -> None:
    from medlit.text import drop_repeated_sentences

    looped = (
        "Vitamin D is generally safe [PMID:1]. One trial was uncontrolled [PMID:1].\n"
        "[PMID:2] found higher Tregs in healthy adults.\n"
        "One trial was uncontrolled [PMID:1]. It may help. It may help.\n"
        "[PMID:2] found higher Tregs in healthy adults.\n"
        "Therefore it is safe for most people."
    )
    assert drop_repeated_sentences(looped) == (
        "Vitamin D is generally safe [PMID:1]. One trial was uncontrolled [PMID:1].\n"
        "[PMID:2] found higher Tregs in healthy adults.\n"
        "It may help. It may help.\n"
        "Therefore it is safe for most people."
    )
    fresh = "Aspirin lowers stroke risk [PMID:1]. Aspirin raises bleeding risk [PMID:2]."
    assert drop_repeated_sentences(fresh) == fresh


def test_a_sentence_said_again_behind_another_opening_is_dropped() -> None:
    from medlit.text import drop_repeated_sentences

    # The local model's answer on Fournier's gangrene ended on its first sentence again.
    finding = (
        "Fournier's gangrene remains a surgical emergency and early recognition with prompt "
        "radical debridement is the mainstays of management [PMID:19504993]."
    )
    first = f"The evidence shows that {finding} Delay is the main prognostic factor [PMID:1]."
    assert drop_repeated_sentences(f"{first} Despite extensive therapeutic efforts, {finding}") == (
        first
    )
    # Said again for another article, or with more before it, it says something new.
    other = finding.replace("19504993", "2")
    assert drop_repeated_sentences(f"{first} In a second series, {other}").endswith(other)
    longer = f"In the largest of the three series of older patients treated, {finding}"
    assert drop_repeated_sentences(f"{first} {longer}").endswith(longer)


@pytest.mark.parametrize(
    "first",
    [
        "CRPS fell (P < 0.05) [PMID:2].",  # syntok read these as one sentence with the next
        "CRPS fell (n = 5) [2].",
        "CRPS fell (P < 0.05) (PMID 2).",
        "Stenosis was more common at high risk (9.1%) than at low risk (1.2%) (P<0.05).",
    ],
)
def test_a_sentence_ending_in_a_bracket_after_a_parenthesis_is_a_sentence(first: str) -> None:
    text = f"{first} The Tregs rose [PMID:1]."
    assert split_sentences(text) == [first, "The Tregs rose [PMID:1]."]
    assert sentence_pieces(text) == [f"{first} ", "The Tregs rose [PMID:1]."]


def test_a_citation_is_not_read_as_an_author() -> None:
    # The local model: "the study by [PMID:12855939] found", "the study by [1] suggests"; the
    # web page shows the citation as a superscript number ("the study by ¹ found").
    assert unauthored("Specifically, the study by [PMID:12855939] found that") == (
        "Specifically, the study [PMID:12855939] found that"
    )
    assert unauthored("The meta-analysis by (PMID: 3) and studies by [1, 2] agree.") == (
        "The meta-analysis (PMID: 3) and studies [1, 2] agree."
    )
    named = "Trials by Smith et al. [2] found it."
    assert unauthored(named) == named  # an author's name stays
    # A citation after "by" that a check took out left "The study by   also showed" (the
    # local model's answer on fasting glucose and CABG).
    assert unauthored("The study by   also showed it [PMID:2].") == (
        "The study also showed it [PMID:2]."
    )
    kept = "The study by researchers in Oslo showed it."
    assert unauthored(kept) == kept


def test_an_answer_does_not_open_with_a_connective() -> None:
    # The local model's first sentence was left out by a check, and the answer began
    # "Specifically, [PMID:17279467] reports that cyclical pamidronate ...".
    assert without_opening_connective("Specifically, the study found X [PMID:1].") == (
        "The study found X [PMID:1]."
    )
    assert without_opening_connective("In addition, mRNA rose [1]. However, X.") == (
        "mRNA rose [1]. However, X."
    )
    # A list the model introduced with "Specifically:", its lead-in statement left out.
    listed = "Specifically:\n\n1. **Bacterial vaginosis**: the study [PMID:1] found X."
    assert without_opening_connective(listed) == (
        "1. **Bacterial vaginosis**: the study [PMID:1] found X."
    )
    kept = "Specific antibodies rose [1]. Moreover, X fell."
    assert without_opening_connective(kept) == kept


def test_the_authors_first_person_is_theirs() -> None:
    # The local model copied PubMedQA 11566686's "our findings support the hypothesis that
    # hypergastrinemia may be implicated", which read as the assistant's own study.
    assert third_person("Although X is hard to establish, our findings support Y [PMID:1].") == (
        "Although X is hard to establish, the authors' findings support Y [PMID:1]."
    )
    assert third_person("We conclude that it helps [1]. Our own data agree [1].") == (
        "The authors conclude that it helps [1]. The authors' own data agree [1]."
    )
    kept = (
        "We cannot say [1]. Our question was whether it helps [1]. Sweden found we were right [1]."
    )
    assert third_person(kept) == kept
    # The local model copied PubMedQA 11713724's "provided us with the opportunity" and "met
    # our criteria".
    assert third_person("It provided us with data; 27 met our criteria [PMID:1].") == (
        "It provided the authors with data; 27 met the authors' criteria [PMID:1]."
    )
    # Uncited, it is the model's own voice.
    own = "We found no study of children. Our search was of PubMed."
    assert third_person(own) == own


def test_a_citation_is_not_a_sentences_subject() -> None:
    # The local model: "[PMID:n] shows that ...", which the page shows as "¹ shows that".
    text = "Yes. [PMID:12855939] shows that it helps. [1] and [2] found no harm."
    assert unauthored(text) == (
        "Yes. A study [PMID:12855939] shows that it helps. Studies [1] and [2] found no harm."
    )
    assert unauthored("- [PMID:1, PMID:2] report fewer falls.") == (
        "- Studies [PMID:1, PMID:2] report fewer falls."
    )
    assert unauthored(
        "Specifically, [PMID:17279467] reports that it fell. In addition, [1] and [2] agree."
    ) == (
        "Specifically, a study [PMID:17279467] reports that it fell. In addition, studies [1] "
        "and [2] agree."
    )
    assert unauthored("It is safe, as demonstrated by the studies [PMID:23831910].") == (
        "It is safe, as demonstrated by the study [PMID:23831910]."
    )
    many = "The studies [PMID:1] and [PMID:2] agree. The studies [PMID:1, PMID:2][PMID:3] agree."
    assert unauthored(many) == many
    # A citation after its statement, or before a capital, is not a subject.
    kept = "It helps [PMID:1]. [PMID:2] The trial found no harm. Falls fell [1] in women."
    assert unauthored(kept) == kept


@pytest.mark.parametrize(
    "sentence",
    [
        # syntok cut these (PubMedQA abstracts): before a parenthesis, and after a semicolon.
        "The risk of individual complications was also similar (bleeding (2.0% vs 0.0%), "
        "fistula (10.2% vs 13.5%), and death (2.0% vs 10.8%)); 38.8% of the group had surgery "
        "for desmoid tumor complications (P = .21).",
        "Bacterial contamination was detected in 18 of 1552 (1.15 %) culture bottles of 333 "
        "donors.",
    ],
)
def test_a_parenthesis_or_a_semicolon_ends_no_sentence(sentence: str) -> None:
    text = f"Patient demographics were similar. {sentence} Stomas were rare."
    assert split_sentences(text) == [
        "Patient demographics were similar.",
        sentence,
        "Stomas were rare.",
    ]
    assert sentence_pieces(text) == [
        "Patient demographics were similar. ",
        f"{sentence} ",
        "Stomas were rare.",
    ]
