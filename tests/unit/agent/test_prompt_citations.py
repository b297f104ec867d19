"""Citations, verdicts, query planning and the answer prompt."""

from __future__ import annotations

import pytest

from medlit.agent.prompt import (
    VERDICT_CUE,
    build_messages,
    evidence_header,
    expand_context,
    without_headers,
)
from medlit.agent.query import (
    contextual_plan,
    deterministic_plan,
    keeps_follow_up,
    looks_like_follow_up,
    name_swap,
    search_steps,
)
from medlit.checks.citations import (
    enforce_citations,
    extract_pmids,
    parse_verdict,
    reasoned_verdict,
    remove_citations,
    split_verdict,
    verdict_first,
)
from medlit.types import AbstractSection, Article, Chunk, Evidence
from medlit.words.frame import read_frame
from tests.unit._checks import only_cited


def test_extract_pmids_in_order_and_grouped() -> None:
    text = "A [PMID:1]. B [PMID: 2, 3]; C [PMID:1][PMIDs: 4; PMID:5]."
    assert extract_pmids(text) == ["1", "2", "3", "4", "5"]


def test_invented_citations_are_removed_from_text() -> None:
    text = "Aspirin helps [PMID:1]. It cures everything [PMID:999]. Both [PMID:1, 998]."
    check = enforce_citations(text, {"1"})
    assert check.cited == ["1"]
    assert check.removed == ["999", "998"]
    assert "999" not in check.text and "998" not in check.text
    assert check.text == "Aspirin helps [PMID:1]. It cures everything. Both [PMID:1]."
    # Citations written after a sentence's full stop move inside it, at a line's end or not.
    tail = "Lower HDL (P<0.05). [PMID:1][PMID:999]\nAs [PMID:1] showed. [PMID:1] Also fewer."
    assert enforce_citations(tail, {"1"}).text == (
        "Lower HDL (P<0.05) [PMID:1].\nAs [PMID:1] showed [PMID:1]. Also fewer."
    )
    # After an abbreviation the sentence goes on: the citation stays where it is.
    after_abbreviation = "Smith et al. [PMID:1] found fewer falls. [PMID:1]"
    assert enforce_citations(after_abbreviation, {"1"}).text == (
        "Smith et al. [PMID:1] found fewer falls [PMID:1]."
    )


def test_citations_an_answer_opens_with_cite_its_first_sentence() -> None:
    # The local model's answer: its only citation before the sentence it cites.
    text = "[PMID:1] Delayed diagnosis appears to be common, in 32% of patients. It was late."
    assert enforce_citations(text, {"1"}).text == (
        "Delayed diagnosis appears to be common, in 32% of patients [PMID:1]. It was late."
    )
    assert enforce_citations("[PMID:1][PMID:2] Falls fell", {"1", "2"}).text == (
        "Falls fell [PMID:1][PMID:2]"
    )
    # A citation followed by a verb is the sentence's subject: it stays.
    assert enforce_citations("[PMID:1] found fewer falls.", {"1"}).text == (
        "[PMID:1] found fewer falls."
    )


def test_citations_on_a_line_of_their_own_cite_the_line_before() -> None:
    cases = {
        "Fewer falls.\n[PMID:1]\nMore fractures.": "Fewer falls [PMID:1].\nMore fractures.",
        "Fewer falls.\n\n(PMID: 1, 2).\n\nNext.": "Fewer falls [PMID:1][PMID:2].\n\nNext.",
        "- fewer falls\n[PMID:2]": "- fewer falls [PMID:2]",
        "Fewer falls.\n[PMID:999]\nNext.": "Fewer falls.\nNext.",
        # A line that opens with a citation and goes on is a sentence of its own.
        "Two trials:\n[PMID:1] found fewer falls.": "Two trials:\n[PMID:1] found fewer falls.",
    }
    for text, expected in cases.items():
        assert enforce_citations(text, {"1", "2"}).text == expected


def test_citations_small_models_write_are_recognised() -> None:
    text = "Fewer crashes (PMID: 21865668). Longer stays [19322056]. See PMID 25432938 too."
    check = enforce_citations(text, {"21865668", "19322056"})
    assert check.cited == ["21865668", "19322056"] and check.removed == ["25432938"]
    assert check.text == "Fewer crashes [PMID:21865668]. Longer stays [PMID:19322056]. See too."
    assert extract_pmids("a (PMIDs: 1, 2) b") == ["1", "2"]
    assert extract_pmids("in 2019 [12] patients") == []  # a reference number is not a PMID


def test_verdicts_written_last_are_found_and_moved() -> None:
    cases = {
        "Aspirin cut stroke [PMID:1].\nVerdict: Yes": "yes",
        "Two trials found no benefit [PMID:1].\n\n**Verdict:** No.": "no",
        "Mixed [PMID:1].\nFinal verdict - uncertain": "uncertain",
        "It helps [PMID:1].\nVerdict: Maybe": "uncertain",
        "It helps [PMID:1].\n### Verdict: YES\n": "yes",
        "It helps [PMID:1]. Therefore the verdict is yes.": "yes",
    }
    for text, verdict in cases.items():
        found, rest = split_verdict(text)
        assert found == verdict, text
        assert "[PMID:1]" in rest
    # A line that only states the verdict moves out of the text; a sentence stays whole.
    assert split_verdict("A [PMID:1].\nVerdict: Yes") == ("yes", "A [PMID:1].")
    # A lead-in to the verdict line does not stay behind, dangling, when that line moves.
    led = 'A [PMID:1].\n\nTherefore, the answer to the question "Does X help? In adults?" is:\n'
    assert split_verdict(led + "Verdict: No") == ("no", "A [PMID:1].")
    assert split_verdict("A [PMID:1]. B. The verdict is as follows:\nVerdict: No") == (
        "no",
        "A [PMID:1]. B.",
    )
    assert split_verdict("These trials found:\n- A [PMID:1]\nVerdict: Yes")[1].endswith("[PMID:1]")
    # A last sentence that only states the verdict goes; the sentences before it stay.
    said = "Safe for most [PMID:1]. Data are limited in some groups. The verdict is: Yes"
    assert split_verdict(said) == (
        "yes",
        "Safe for most [PMID:1]. Data are limited in some groups.",
    )
    kept = "Taken together, the answer to this verdict is: Yes"  # more than the verdict: kept
    assert split_verdict(kept) == ("yes", kept)
    assert split_verdict("A [PMID:1]. So the verdict is no.") == ("no", "A [PMID:1].")
    # What the local model ended with: a verdict, not a sentence to keep under another one.
    ended = "No difference was found [PMID:1].\n\nTherefore, the answer is: No"
    assert split_verdict(ended) == ("no", "No difference was found [PMID:1].")
    assert split_verdict("It helps [PMID:1]. The answer to the question is yes.") == (
        "yes",
        "It helps [PMID:1].",
    )
    unclear = "A [PMID:1]. Whether it helps, the answer is no longer clear."
    assert split_verdict(unclear) == (None, unclear)
    assert split_verdict("A [PMID:1]. The verdict is no for children.")[1].endswith("children.")
    # The last labelled verdict wins (the model may list the options first).
    assert (
        split_verdict("Verdict: Yes, No or Uncertain?\nNo effect [PMID:1].\nVerdict: No")[0] == "no"
    )
    assert verdict_first("no", "No effect [PMID:1].") == "Verdict: No\n\nNo effect [PMID:1]."
    assert split_verdict("No effect was found in most trials [PMID:1].") == (
        None,
        "No effect was found in most trials [PMID:1].",
    )  # an opening "No" that is part of a sentence with no label is not a verdict
    assert split_verdict("Aspirin helps [PMID:1].") == (None, "Aspirin helps [PMID:1].")


def test_verdicts() -> None:
    assert parse_verdict("Yes\nBecause [PMID:1].") == "yes"
    assert parse_verdict("**No.** The trials [PMID:1] show...") == "no"
    assert parse_verdict("\nVerdict: Uncertain\n...") == "uncertain"
    assert parse_verdict("Maybe, the evidence is mixed.") == "uncertain"
    assert parse_verdict("Aspirin reduces stroke risk [PMID:1].") is None
    assert parse_verdict("Nothing conclusive") is None  # 'No' must be a word of its own


def test_only_a_verdict_written_after_the_reasoning_is_trusted() -> None:
    # Last line after the reasoning: taken, and moved out of the text.
    assert reasoned_verdict("No rebound was seen [PMID:1].\nVerdict: No") == (
        "no",
        "No rebound was seen [PMID:1].",
    )
    # Opened with (committed before the evidence was read back): dropped, not trusted.
    opening = "Yes. The evidence shows that PPIs do not cause rebound [PMID:1]."
    assert reasoned_verdict(opening) == (
        None,
        "The evidence shows that PPIs do not cause rebound [PMID:1].",
    )
    assert reasoned_verdict("Verdict: Yes\n\nIt helps [PMID:1].") == (None, "It helps [PMID:1].")
    assert reasoned_verdict("**No.**\nTrials [PMID:1] show...") == (None, "Trials [PMID:1] show...")
    # An opening word, then a labelled verdict at the end: the labelled one counts, and the
    # opening word goes (shown under "Verdict: No", "Yes." would contradict it).
    assert reasoned_verdict("Yes. Trials found no effect [PMID:1].\nVerdict: No") == (
        "no",
        "Trials found no effect [PMID:1].",
    )
    assert reasoned_verdict("**No.**\n\nNo trial helped [PMID:1].\nVerdict: No") == (
        "no",
        "No trial helped [PMID:1].",
    )
    assert reasoned_verdict("Aspirin helps [PMID:1].") == (None, "Aspirin helps [PMID:1].")
    # What follows an opening verdict is a sentence of its own: capitalised ("mRNA" kept).
    assert reasoned_verdict("Yes, double balloon enteroscopy is safe [PMID:1].") == (
        None,
        "Double balloon enteroscopy is safe [PMID:1].",
    )
    assert reasoned_verdict("Yes, mRNA vaccines help [PMID:1].")[1].startswith("mRNA")
    # The local model's "Yes, liquid-based urine cytology preparations perform ..." was shown
    # opening in lower case.
    hyphened = reasoned_verdict("Yes, liquid-based preparations perform better [PMID:1].")
    assert hyphened[1].startswith("Liquid-based")


def test_deterministic_plan_makes_the_question_standalone() -> None:
    plan = deterministic_plan("  Does   metformin reduce cardiovascular mortality?  ")
    assert plan.standalone_question == "Does metformin reduce cardiovascular mortality?"
    assert plan.pubmed_query == ""  # its searches come from its frame, when first due
    assert plan.focus == "treatment"
    steps = search_steps(read_frame(plan.standalone_question))
    # the drug's other names: the vetted table's brand, then MeSH's entry terms
    drug = "(metformin OR glucophage OR dimethylbiguanidine OR dimethylguanylguanidine)"
    assert steps[0].query == (
        f'{drug} AND ("cardiovascular mortality" OR "cardiovascular death"'
        ' OR "cardiovascular mortalities")'
    )
    assert steps[-2].query == drug
    # the last resort: any of the question's rarer words, the drug's other names among them
    assert steps[-1].any_word and steps[-1].query.startswith(drug[1:-1] + " OR cardiovascular")


def test_a_typographic_apostrophe_searches_what_the_typed_one_does() -> None:
    def queries(question: str) -> list[str]:
        return [step.query for step in search_steps(read_frame(question))]

    typed = queries("Does infliximab help Crohn's disease?")
    for pasted in (
        "Does infliximab help Crohn\u2019s disease?",
        "Does infliximab help Crohn\u02bcs disease?",
    ):
        assert queries(pasted) == typed
    assert "crohn's" in typed[0] and all("infliximab" in q for q in typed)


def test_an_accented_word_is_searched_as_one_word() -> None:
    # "Sjögren's" was "sj AND gren's": the pattern's letters are ASCII.
    steps = search_steps(
        read_frame("Is fatigue in primary Sjögren's syndrome explained by fibromyalgia?")
    )
    assert "sjogren's" in steps[0].query and " sj " not in steps[0].query
    # A rewrite that keeps the accented name keeps the follow-up (its words are read alike).
    assert keeps_follow_up(
        "And in Sjögren’s syndrome?", "Does hydroxychloroquine help fatigue in Sjögren's syndrome?"
    )


def test_a_name_is_searched_with_its_qualifier() -> None:
    # "D" is no content word: "vitamin" alone would find every vitamin's trials.
    steps = search_steps(read_frame("Does vitamin D supplementation prevent fractures?"))
    assert all('"vitamin d' in step.query for step in steps)
    typed = search_steps(read_frame("Insulin in type 2 diabetes?"))
    assert '"type 2"' in typed[0].query or '"type 2 diabetes"' in typed[0].query


def test_a_follow_up_that_renames_the_previous_question_is_that_question() -> None:
    previous = "Does metformin help type 2 diabetes?"
    assert name_swap("what about type 1?", previous) == "Does metformin help type 1 diabetes?"
    assert name_swap("and vitamin c?", "Vitamin D for colds?") == "Vitamin C for colds?"
    assert name_swap("and hiv 2?", "Is HIV-1 passed on?") == "Is HIV 2 passed on?"
    # Anything more, or nothing to rename, is left to the rewrite.
    assert name_swap("and type 1 in children?", previous) is None
    assert name_swap("and vitamin C?", previous) is None
    assert name_swap("type 2?", previous) is None
    assert name_swap("and types 1 and 3?", previous) is None  # a list: left to the rewrite
    assert name_swap("and type 1?", "Type 1 or type 2 diabetes: metformin?") is None


def test_follow_ups_are_detected_and_made_standalone() -> None:
    assert looks_like_follow_up("and in children?")
    assert looks_like_follow_up("Is it safe in pregnancy?")
    assert looks_like_follow_up("What about side effects?")
    assert not looks_like_follow_up("Does metformin reduce cardiovascular mortality in adults?")
    plan = contextual_plan("and in children?", "Is aspirin effective for migraine?")
    assert "aspirin" in plan.standalone_question and "children" in plan.standalone_question
    assert plan.pubmed_query.startswith("children AND aspirin")


def test_a_rewrite_must_keep_what_the_follow_up_adds() -> None:
    previous = "Does vitamin D supplementation prevent fractures in older adults?"
    assert not keeps_follow_up("and in children?", previous)  # the follow-up was dropped
    assert keeps_follow_up(
        "and in children?", "Does vitamin D supplementation prevent fractures in children?"
    )
    # A word sharing its first five letters counts; a misspelling the model corrected too.
    assert keeps_follow_up("and when pregnant?", "Is vitamin D safe in pregnancy?")
    assert keeps_follow_up("and in childern?", "Does vitamin D help children?")
    assert keeps_follow_up("is it safe?", "Is vitamin D supplementation safe?")
    assert not keeps_follow_up("and for women over 65?", "Does vitamin D help women?")
    assert not keeps_follow_up("and metformin?", "Does insulin lower mortality?")


def _article() -> Article:
    return Article(
        pmid="42",
        title="Aspirin for stroke prevention",
        journal="Stroke",
        year=2019,
        publication_types=["Randomized Controlled Trial"],
        abstract=[
            AbstractSection(label="METHODS", text="We randomised 100 adults."),
            AbstractSection(label="RESULTS", text="Stroke fell by 20%."),
            AbstractSection(label="CONCLUSIONS", text="Aspirin prevents stroke."),
        ],
    )


def _chunks(article: Article) -> list[Chunk]:
    texts = [("", article.title)] + [(s.label or "", s.text) for s in article.abstract]
    return [
        Chunk(
            id=f"{article.key}#{i}",
            article_key=article.key,
            ordinal=i,
            section=label or None,
            text=text,
        )
        for i, (label, text) in enumerate(texts)
    ]


def test_context_expansion_adds_neighbours_in_article_order() -> None:
    article = _article()
    chunks = _chunks(article)
    anchor = Evidence(chunk=chunks[2], article=article, similarity=0.8, score=0.7)

    def neighbours(chunk: Chunk, window: int) -> list[Chunk]:
        return [c for c in chunks if c.ordinal == 0 or abs(c.ordinal - chunk.ordinal) <= window]

    blocks = expand_context([anchor], neighbours, window=1, max_chars=5000)
    assert len(blocks) == 1
    assert [c.ordinal for c in blocks[0].chunks] == [0, 1, 2, 3]
    text = blocks[0].render()
    assert text.startswith("[PMID:42] Aspirin for stroke prevention (2019, RCT)")
    assert text.index("randomised") < text.index("fell") < text.index("prevents")


def test_messages_carry_rules_memory_evidence_and_question() -> None:
    article = _article()
    chunks = _chunks(article)
    blocks = expand_context(
        [Evidence(chunk=chunks[3], article=article, similarity=0.8, score=0.7)],
        None,
        window=0,
        max_chars=5000,
    )
    messages = build_messages(
        "and in adults?",
        blocks,
        standalone_question="Does aspirin prevent stroke in adults?",
        memory_summary="Recent questions: Does aspirin prevent stroke?",
        yes_no=True,
    )
    system, user = messages[0]["content"], messages[1]["content"]
    assert "ONLY the evidence" in system and "[PMID:12345678]" in system
    assert "thin" in system and "conflicting" in system
    assert VERDICT_CUE in user and user.endswith("none addresses the question.")  # verdict last
    assert VERDICT_CUE not in system  # the same rules for every question: a shared prefix
    assert user.index("[PMID:42]") < user.index("Recent questions") < user.index("Question:")
    assert "Recent questions: Does aspirin prevent stroke?" in user
    assert "[PMID:42]" in user and "Aspirin prevents stroke." in user
    assert "Standalone: Does aspirin prevent stroke in adults?" in user
    no_verdict = build_messages("What is X?", blocks)
    assert VERDICT_CUE not in no_verdict[1]["content"]
    assert no_verdict[0] == messages[0]


@pytest.mark.parametrize(
    ("sentence", "removed", "kept"),
    [
        ("The studies [PMID:1] and [PMID:2] both found it.", "2",
         "The studies [PMID:1] both found it."),
        ("The studies [PMID:1] and [PMID:2] both found it.", "1",
         "The studies [PMID:2] both found it."),
        ("As [PMID:1], [PMID:2] and [PMID:3] show.", "2", "As [PMID:1], [PMID:3] show."),
        ("As [PMID:1], [PMID:2], and [PMID:3] show.", "3", "As [PMID:1], [PMID:2] show."),
        ("Falls fell [PMID:1][PMID:2].", "1", "Falls fell [PMID:2]."),
        ("Falls fell [PMID:1] and fractures rose [PMID:2].", "2",
         "Falls fell [PMID:1] and fractures rose."),
        ("Bleeding [95% CI] and [PMID:2] rose [PMID:3].", "2",
         "Bleeding [95% CI] and rose [PMID:3]."),
        ("Falls fell [PMID:1].", "1", ""),
    ],
)  # fmt: skip
def test_a_citation_removed_from_a_list_takes_its_joiner(
    sentence: str, removed: str, kept: str
) -> None:
    assert remove_citations(sentence, [removed]) == kept


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("[PMID:1] found that it may be omitted [PMID:2].",
         "A study found that it may be omitted [PMID:2]."),
        ("  - [PMID:1] shows that it may be omitted [PMID:2].",
         "  - A study shows that it may be omitted [PMID:2]."),
        ("[PMID:1] and [PMID:2] found that it may be omitted.",
         "[PMID:2] found that it may be omitted."),
    ],
)  # fmt: skip
def test_a_citation_removed_as_its_sentences_subject_leaves_a_sentence(
    sentence: str, kept: str
) -> None:
    # The local model's "[PMID:...] found that in selected cases, ureteroscopy may be performed
    # without ureteral meatal dilatation ..." lost its citation and read "found that in ...".
    assert remove_citations(sentence, ["1"]) == kept


def test_a_citation_of_no_retrieved_article_as_its_sentences_subject_leaves_a_sentence() -> None:
    text = "[PMID:99999999] found that it may be omitted [PMID:2]."
    assert enforce_citations(text, {"2"}).text == "A study found that it may be omitted [PMID:2]."
    text = "Intro.\n\n- [PMID:99999999] shows that it may be omitted."
    assert (
        enforce_citations(text, {"2"}).text == "Intro.\n\n- A study shows that it may be omitted."
    )


def test_a_verdict_after_reasoning_on_the_same_line_keeps_the_reasoning() -> None:
    # A one-line answer lost everything: its verdict was taken for an opening guess, and the
    # reasoning before it went with it.
    assert reasoned_verdict("It helps [PMID:1]. Verdict: No.") == ("no", "It helps [PMID:1].")
    # The local model quoted the question inside its verdict sentence.
    quoted = (
        "Meropenem was lower in ISF [PMID:1].\n\nTherefore, the answer to the question "
        '"Is meropenem lower than plasma in critically ill children? " is Yes.'
    )
    assert reasoned_verdict(quoted) == ("yes", "Meropenem was lower in ISF [PMID:1].")
    curly = "It helps [PMID:1]. So the answer to the question “Does it help?” is No."
    assert reasoned_verdict(curly) == ("no", "It helps [PMID:1].")
    # The local model: "Verdict: No" first, and last "Therefore, the answer is: Verdict: Yes",
    # which was left in the answer under the verdict read.
    said = "It is no contraindication [PMID:1]."
    led = f"Verdict: No\n\n{said}\n\nTherefore, the answer is: Verdict: Yes"
    assert reasoned_verdict(led) == ("yes", said)
    # And "Therefore, the verdict is: Verdict: No", after blank lines.
    verdict_is = f"{said}\n\n\n\nTherefore, the verdict is: Verdict: No"
    assert reasoned_verdict(verdict_is) == ("no", said)
    assert reasoned_verdict("It helps [PMID:1]. So the final answer is: Verdict: No") == (
        "no",
        "It helps [PMID:1].",
    )
    # What stays of a verdict's line is cut from the line itself: the local model's "tumour
    # size>2 cm" read "tumour size2 cm", and "(p>0.05)" would read "(p0.05)".
    signs = "Tumour size>2 cm was significant (p>0.05) [PMID:1]."
    assert reasoned_verdict(f"Yes. {signs}") == (None, signs)
    assert reasoned_verdict(f"**Yes**. {signs}") == (None, signs)
    assert reasoned_verdict(f"{signs} Verdict: Yes") == ("yes", signs)
    assert reasoned_verdict(f"{signs} **Verdict: No**") == ("no", signs)
    # An opening verdict is still not trusted, and its sentence's own words stay.
    assert reasoned_verdict("Verdict: Yes. It helps [PMID:1].") == (None, "It helps [PMID:1].")


def test_a_sentence_that_only_points_at_an_article_cited_elsewhere_goes() -> None:
    finding = "Re-siting cannulae every 48 hours reduced thrombophlebitis [PMID:19852337]."
    assert only_cited(f"{finding} This is supported by [PMID:19852337].") == finding
    assert only_cited(f"{finding}\n\nSee also [PMID:19852337].\n\nB rose [PMID:2].") == (
        f"{finding}\n\nB rose [PMID:2]."
    )
    # An article cited nowhere else is cited for the statement before it, where every check
    # holds it to that statement. The local model: "... harmful for health by 60% of the
    # students interviewed [PMID:19757704]. This claim is supported by [PMID:18801797]." (an
    # article on fruit and vegetable intake).
    alone = "Re-siting reduced thrombophlebitis. This is supported by [PMID:19852337]."
    assert only_cited(alone) == "Re-siting reduced thrombophlebitis [PMID:19852337]."
    claim = "Pan masala is harmful to 60% [PMID:19757704].\n\nThis claim is supported by [PMID:1]."
    assert only_cited(claim) == "Pan masala is harmful to 60% [PMID:19757704][PMID:1]."
    also = f"{finding} See also [PMID:19852337, PMID:2]."
    assert only_cited(also) == finding.replace("].", "][PMID:2].")
    # With no statement before it (a verdict line is none), it stays.
    first = "Verdict: Yes\n\nSee also [PMID:2]. It helps [PMID:1]."
    assert only_cited(first) == first
    # A sentence that says something of the articles stays.
    agree = f"{finding} These findings are consistent with [PMID:19852337]."
    assert only_cited(agree) == agree


def test_a_repeated_evidence_header_is_no_statement() -> None:
    article = Article(pmid="11053064", title="Fatigue in primary Sjögren's syndrome: is there "
                      "a link with the fibromyalgia syndrome?", year=2000)  # fmt: skip
    header = evidence_header(article)
    assert header.startswith("[PMID:11053064] Fatigue in primary")
    assert without_headers(f"{header} [PMID:11053064] Fatigue in primary", [article]) == (
        "[PMID:11053064] Fatigue in primary"
    )  # a header cut short is left to the other checks
    said = "Fatigue in pSS is not due to fibromyalgia [PMID:11053064]."
    assert without_headers(f"{header}\n{said}", [article]) == said


def test_a_label_ending_a_line_reads_the_verdict_word_on_the_next() -> None:
    # The local model: "... similar to those of no-PPM patients.\n\nTherefore, the answer
    # is:\nNo": the "No" was left in the answer, under "Verdict: Uncertain".
    text = "No rebound was seen [PMID:1].\n\nTherefore, the answer is:\nNo"
    assert reasoned_verdict(text) == ("no", "No rebound was seen [PMID:1].")
    assert split_verdict("It helps [PMID:1].\nVerdict:\n**Yes**") == ("yes", "It helps [PMID:1].")
    # A word alone after a sentence that is no label stays text.
    assert split_verdict("Is it common? [PMID:1]\nNo") == (None, "Is it common? [PMID:1]\nNo")


def test_a_quoted_title_loses_the_prompts_year_and_design() -> None:
    # The local model: 'which states that "Fragility of the esophageal mucosa: a pathognomonic
    # endoscopic sign of primary eosinophilic esophagitis? (2003, other)"': the "(2003, other)"
    # is our prompt's header, not the article's words.
    article = Article(pmid="12612531", title="Fragility of the esophageal mucosa: a "
                      "pathognomonic endoscopic sign of primary eosinophilic esophagitis?",
                      year=2003)  # fmt: skip
    said = (
        "A fragile mucosa is a sign of eosinophilic esophagitis [PMID:12612531]. The article "
        'is titled "Fragility of the esophageal mucosa: a pathognomonic endoscopic sign of '
        'primary eosinophilic esophagitis? (2003, other)" [PMID:12612531].'
    )
    assert without_headers(said, [article]) == said.replace(" (2003, other)", "")
    # A year in parentheses that is not after the title is the answer's own.
    kept = "Eosinophilic esophagitis was described in adults (2003, other) [PMID:12612531]."
    assert without_headers(kept, [article]) == kept
