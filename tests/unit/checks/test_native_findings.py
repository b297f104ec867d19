"""Checks that return findings by sentence: what they propose, and that ``apply`` makes it;
what the checks remember of texts, and that it is forgotten at once."""

from __future__ import annotations

from medlit.checks.answer_wording import opening_connective
from medlit.checks.apply import apply
from medlit.checks.attribution import uncited_attribution
from medlit.checks.citation_names import misattributed_names
from medlit.checks.citation_only import citation_only
from medlit.checks.context import CheckContext, cited_findings, sentence_findings
from medlit.checks.draft import Draft
from medlit.checks.policy import warnings_of
from medlit.checks.unsupported import unsupported_conclusions
from medlit.checks.verdict_units import against_conclusions
from medlit.types import AbstractSection, Article
from medlit.words import memo
from medlit.words.grounding import word_stems

ARTICLES = {
    "11111": Article(pmid="11111", title="Aspirin and stroke"),
    "22222": Article(pmid="22222", title="Aspirin and bleeding"),
}


def _ctx(text: str, articles: dict[str, Article] = ARTICLES) -> CheckContext:
    return CheckContext("Does aspirin prevent stroke?", articles, Draft.parse(text))


def test_a_wrong_citation_is_uncited_and_a_sentence_citing_only_it_dropped() -> None:
    ctx = _ctx("Aspirin cut strokes [PMID:11111][PMID:22222]. Bleeding rose [PMID:22222].")

    def wrong_in(sentence: str) -> list[tuple[str, str]]:
        return [("22222", "a finding it does not give")] if "22222" in sentence else []

    findings = cited_findings("some-check", ctx, wrong_in)
    assert [(f.action, f.pmids, f.sentence) for f in findings] == [
        ("uncite", ("22222",), 0),
        ("drop", ("22222",), 1),
    ]
    assert findings[0].message == (
        "a citation was removed: it cited PMID 22222 for a finding it does not give"
    )
    assert findings[1].message.startswith("a sentence was left out: it cited PMID 22222")
    assert apply(ctx.draft, findings).text == "Aspirin cut strokes [PMID:11111]."


def test_a_sentence_check_proposes_each_sentence_and_says_why() -> None:
    ctx = _ctx("A strong link was seen [PMID:11111]. Nothing else [PMID:22222].")
    told: list[str] = []

    def rewrite(sentence: str) -> str:
        if "strong" in sentence:
            told.append("a strength was taken out")
            return sentence.replace("strong ", "")
        if "Nothing" in sentence:
            told.append("only said")
        return sentence

    findings = sentence_findings("some-check", ctx, rewrite, told)
    assert [(f.action, f.sentence, f.message) for f in findings] == [
        ("rewrite", 0, "a strength was taken out"),
        ("warn", None, "only said"),
    ]
    assert apply(ctx.draft, findings).text == (
        "A link was seen [PMID:11111]. Nothing else [PMID:22222]."
    )


def test_attribution_cites_the_sentence_it_was_taken_from() -> None:
    article = Article(
        pmid="11111",
        title="Low-dose aspirin and recurrent ischaemic stroke",
        abstract=[
            AbstractSection(
                text="Low-dose aspirin reduced recurrent ischaemic stroke in elderly patients."
            )
        ],
    )
    other = Article(pmid="22222", title="Statins and myopathy")
    ctx = _ctx(
        "Low-dose aspirin reduced recurrent ischaemic stroke in elderly patients. It helps.",
        {"11111": article, "22222": other},
    )
    findings = uncited_attribution(ctx)
    assert [(f.action, f.pmids, f.sentence) for f in findings] == [("cite", ("11111",), 0)]
    assert ctx.data["uncited-attribution"] == ["11111"]
    assert apply(ctx.draft, findings).text.startswith(
        "Low-dose aspirin reduced recurrent ischaemic stroke in elderly patients [PMID:11111]."
    )


def test_a_pointing_sentence_goes_and_its_citation_moves_to_the_statement() -> None:
    ctx = _ctx("Aspirin cut strokes by a fifth [PMID:11111]. This is supported by [PMID:22222].")
    findings = citation_only(ctx)
    assert [(f.action, f.pmids, f.sentence) for f in findings] == [
        ("cite", ("22222",), 0),
        ("drop", ("22222",), 1),
    ]
    assert apply(ctx.draft, findings).text == (
        "Aspirin cut strokes by a fifth [PMID:11111][PMID:22222]."
    )


def test_an_opening_connective_is_the_first_sentence_s_rewrite() -> None:
    ctx = _ctx("However, aspirin cut strokes [PMID:11111]. It helps.")
    (finding,) = opening_connective(ctx)
    assert (finding.action, finding.sentence) == ("rewrite", 0)
    assert apply(ctx.draft, [finding]).text == "Aspirin cut strokes [PMID:11111]. It helps."


def test_what_the_checks_remember_is_forgotten_at_once() -> None:
    calls: list[str] = []

    @memo.remembered(16)
    def read(text: str) -> int:
        calls.append(text)
        return len(text)

    assert read("abc") == read("abc") == 3
    assert calls == ["abc"]
    memo.forget()
    read("abc")
    assert calls == ["abc", "abc"]


def test_names_alike_are_read_in_any_case_a_pattern_reads() -> None:
    # The long s reads as an s to a case-blind pattern: the string search must not skip it.
    assert {"smoke", "tobacc"} <= word_stems("passive \u017fmoking at home")
    assert {"kidney", "urolit"} <= word_stems("URINARY STONES in adults")
    assert "kidney" not in word_stems("aspirin and stroke")


def _results(pmid: str, title: str, text: str) -> Article:
    section = AbstractSection(label="RESULTS", category="RESULTS", text=text)
    return Article(pmid=pmid, title=title, abstract=[section])


VITAMINS = {
    "11111": _results("11111", "Vitamin C after wrist fractures", "Vitamin C reduced CRPS."),
    "22222": _results("22222", "Vitamin D and falls", "Vitamin D3 reduced falls in adults."),
}


def test_a_misattributed_name_is_found_sentence_by_sentence_and_told_once_a_kind() -> None:
    ctx = _ctx(
        "Vitamin D cut CRPS [PMID:11111]. Vitamin D cut pain [PMID:11111]. "
        "Vitamin D cut falls [PMID:11111][PMID:22222].",
        VITAMINS,
    )
    findings = misattributed_names(ctx)
    assert [(f.action, f.sentence, f.pmids) for f in findings] == [
        ("drop", 0, ("11111",)),
        ("drop", 1, ("11111",)),
        ("uncite", 2, ("11111",)),
    ]
    assert (
        findings[0].message
        == findings[1].message
        == (
            "a sentence was left out: it cited PMID 11111 for vitamin D, but that article is about "
            "vitamin C"
        )
    )
    assert warnings_of(findings) == [
        "2 sentences were left out: they cited PMID 11111 for vitamin D, but that article is "
        "about vitamin C",
        "a citation was removed: it cited PMID 11111 for vitamin D, but that article is about "
        "vitamin C",
    ]
    assert apply(ctx.draft, findings).text == "Vitamin D cut falls [PMID:22222]."
    assert [m.sentence_dropped for m in ctx.data["misattributed-names"]] == [True, True, False]


def test_an_uncited_conclusion_no_article_holds_is_dropped_and_its_words_kept() -> None:
    ctx = CheckContext(
        "Does vitamin D prevent fractures in older adults?",
        VITAMINS,
        Draft.parse(
            "Vitamin D prevents fractures in older adults. Vitamin D cut falls [PMID:22222]."
        ),
    )
    findings = unsupported_conclusions(ctx)
    assert [(f.action, f.sentence) for f in findings] == [("drop", 0)]
    assert findings[0].message.startswith("an uncited sentence was left out: no retrieved")
    left = ctx.data["unsupported-conclusions"]
    assert left.text == apply(ctx.draft, findings).text == "Vitamin D cut falls [PMID:22222]."
    assert "fractures" in left.words


def test_under_uncertain_both_answers_stated_against_their_articles_are_found() -> None:
    concluded = AbstractSection(
        label="CONCLUSIONS", category="CONCLUSIONS", text="Aspirin does not prevent stroke."
    )
    no = Article(pmid="11111", title="Aspirin and stroke", abstract=[concluded])
    ctx = _ctx("Aspirin prevents stroke [PMID:11111]. It is cheap [PMID:11111].", {"11111": no})
    assert against_conclusions(ctx) == []  # no verdict yet
    ctx.verdict = "uncertain"
    findings = against_conclusions(ctx)
    assert [(f.action, f.sentence) for f in findings] == [("drop", 0)]
    assert "the answer 'yes', where the article concludes 'no'" in findings[0].message
