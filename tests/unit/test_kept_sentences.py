"""A draft keeps its sentences' boundaries when sentences are left out (Draft.replaced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medlit import text
from medlit.checks.apply import apply
from medlit.checks.draft import Draft, rewrite_sentences
from medlit.checks.findings import Finding
from medlit.sources.pubmed_xml import parse_pubmed_xml
from tests.conftest import shared_data_path

RECORDED = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "recorded_answers.jsonl"


def _fresh(line: str) -> tuple[str, ...]:
    """``line`` cut by syntok now (nothing remembered)."""
    cuts = text._sentence_starts.__wrapped__(line)  # type: ignore[attr-defined]
    return tuple(line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True))


def _cut_again(draft: Draft) -> tuple[tuple[str, ...], ...]:
    return tuple(_fresh(line) for line in draft.text.split("\n"))


@pytest.fixture(autouse=True)
def _nothing_kept() -> None:
    text.forget_kept_pieces()


ANSWER = (
    "Statins lowered LDL cholesterol by 30% (P < 0.01) [PMID:1]. The rate of myopathy was "
    "0.5% vs. 0.4% [PMID:2]. It fell in older patients, e.g. those over 75 [PMID:1]. "
    "No trial measured dementia [PMID:3].\nA second paragraph [PMID:2]. Its end [PMID:3]."
)


def test_leaving_sentences_out_keeps_the_others_as_cut() -> None:
    draft = Draft.parse(ANSWER)
    assert len(draft.sentences) == 6
    for left_out in ({1}, {0}, {3}, {0, 2}, {4}, {5}, {4, 5}, {0, 1, 2, 3}):
        after = draft.replaced(dict.fromkeys(left_out, ""))
        assert after.text == draft.edited(dict.fromkeys(left_out, ""))
        assert after.lines == _cut_again(after)
        assert Draft.parse(after.text) == after  # the kept cut is what is read again
        kept = [s.text.strip() for s in draft.sentences if s.index not in left_out]
        assert [s.text.strip() for s in after.sentences if s.text] == kept


def test_a_line_that_loses_all_its_sentences_is_one_empty_piece() -> None:
    draft = Draft.parse(ANSWER)
    after = draft.replaced({4: "", 5: ""})
    assert after.lines[-1] == ("",) == Draft.parse("").lines[0]
    assert after.text == ANSWER.split("\n")[0] + "\n"  # the line stays, empty


def test_the_last_kept_sentence_loses_its_trailing_space() -> None:
    after = Draft.parse(ANSWER).replaced({3: ""})
    assert after.lines[0][-1].endswith("[PMID:1].")
    assert after.text.split("\n")[0].endswith("[PMID:1].")


def test_a_rewritten_line_and_a_lone_full_stop_are_cut_again() -> None:
    draft = Draft.parse("One thing was found [PMID:1]. . Another thing was found [PMID:2].")
    assert ". " in draft.lines[0] or len(draft.lines[0]) == 2
    for replacements in ({0: ""}, {0: "One thing was found. Then two [PMID:1]. "}):
        after = draft.replaced(replacements)
        assert after.text == draft.edited(replacements)
        assert after.lines == _cut_again(after)


def test_apply_and_rewrite_sentences_give_the_kept_cut() -> None:
    draft = Draft.parse(ANSWER)
    dropped = apply(draft, [Finding("x", "drop", "", ("2",), 1, draft.sentences[1].text)])
    assert dropped == draft.replaced({1: ""})
    assert rewrite_sentences(ANSWER, lambda s: "" if "myopathy" in s else s) == dropped.text


def _variants(count: int) -> list[set[int]]:
    return [{i} for i in range(count)] + [set(range(0, count, 2)), set(range(1, count, 2))]


def _finer(kept: tuple[str, ...], again: tuple[str, ...]) -> bool:
    """Whether each sentence of ``again`` is sentences of ``kept`` in a row."""
    if kept == again:
        return True
    at = 0
    for sentence in again:
        joined = ""
        while len(joined) < len(sentence) and at < len(kept):
            joined += kept[at]
            at += 1
        if joined != sentence:
            return False
    return at == len(kept)


def test_kept_cuts_agree_with_syntok_on_abstracts_and_recorded_answers() -> None:
    """Lines of PubMedQA abstracts (each abstract one line) and of the recorded answers, with
    each sentence left out in turn and every other one: the sentences kept are the ones syntok
    cuts the text left into, but for a few (10 of 6,680 variants of the 500 abstracts, none
    of the answers') where syntok, cutting again, joins two sentences it had cut apart ("...
    the average age was 24.9. Twenty-eight (65%) of 43 patients were satisfied ...")."""
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    lines = [a.abstract_text for a in parse_pubmed_xml(xml.read_bytes())][:200]
    rows = [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]
    lines += [line for row in rows for line in row["drafted"].split("\n")]
    checked = joined = 0
    for line in lines:
        draft = Draft.parse(line)
        for left_out in _variants(len(draft.sentences)):
            after = draft.replaced(dict.fromkeys(left_out, ""))
            again = _cut_again(after)
            checked += 1
            if after.lines != again:
                joined += 1
                assert all(map(_finer, after.lines, again)), (line, left_out)
    assert checked > 2500
    assert joined <= checked // 200


def test_an_article_view_is_made_once_per_article_and_keeps_its_sentences() -> None:
    from medlit.types import AbstractSection, Article
    from medlit.words.evidence import article_view, forget_views

    section = "Stroke fell by 22% in 1,000 patients (P < 0.01). Bleeding rose. It was rare."
    article = Article(
        pmid="7",
        title="Aspirin and stroke",
        abstract=[AbstractSection(label="RESULTS", category="RESULTS", text=section)],
    )
    forget_views()
    view = article_view(article)
    assert article_view(article.model_copy()) is view  # the same content: the same view
    changed = article.model_copy(
        update={"abstract": [AbstractSection(label="RESULTS", text="Other.")]}
    )
    assert article_view(changed) is not view
    cut = text.split_sentences(section)
    assert cut == list(_fresh_sentences(section))
    assert text._KEPT_SENTENCES[section] == tuple(cut)  # kept apart from the answers' texts
    text._split_sentences.cache_clear()  # an answer's memories forgotten: still kept
    assert text.split_sentences(section) == cut
    forget_views()
    assert section not in text._KEPT_SENTENCES


def _fresh_sentences(section: str) -> tuple[str, ...]:
    return text._split_sentences.__wrapped__(section)  # type: ignore[attr-defined]


def test_what_is_worked_out_of_an_article_outlives_the_answers_memories() -> None:
    from medlit.types import AbstractSection, Article
    from medlit.words import memo
    from medlit.words.evidence import article_view, forget_views

    calls: list[str] = []

    @memo.remembered(16)
    def length(words: str) -> int:
        calls.append(words)
        return len(words)

    section = "Stroke fell by 22% (P < 0.01). Bleeding rose in 12 of 500."
    forget_views()
    article_view(Article(pmid="9", title="T", abstract=[AbstractSection(text=section)]))
    sentence = text.split_sentences(section)[1]
    assert text.is_article_text(section) and text.is_article_text(sentence)
    assert not text.is_article_text("An answer's own sentence [PMID:9].")
    for _ in range(2):
        assert length(sentence) == len(sentence)
        assert length("An answer's own sentence.") == 25
        memo.forget()  # an answer's memories go; the article's stay
    assert calls == [sentence, "An answer's own sentence.", "An answer's own sentence."]
    forget_views()  # and go with its view
    assert length(sentence) == len(sentence) and calls[-1] == sentence
    assert not text.is_article_text(section)


def _cited(sentence: str) -> str:
    body = sentence.rstrip()
    space = sentence[len(body) :]
    return (body[:-1] + " [PMID:1]." if body.endswith(".") else body + " [PMID:1]") + space


def test_a_sentence_rewritten_in_place_keeps_the_cut_as_syntok_would() -> None:
    """A citation added to each sentence in turn (as a ``cite`` finding does) of PubMedQA
    abstracts: the line keeps its cut, which is syntok's but for a few (6 of 5,747 on the
    500 abstracts and the recorded answers, citations added or taken out) where syntok, cutting
    again, joins the sentence to the next ("... [PMID:1]. 43 VCEs with pathology ...")."""
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    checked = joined = 0
    for line in [a.abstract_text for a in parse_pubmed_xml(xml.read_bytes())][:150]:
        draft = Draft.parse(line)
        for sentence in draft.sentences:
            replacements = {sentence.index: _cited(sentence.text)}
            after = draft.replaced(replacements)
            assert after.text == draft.edited(replacements)
            again = _cut_again(after)
            checked += 1
            if after.lines != again:
                joined += 1
                assert all(map(_finer, after.lines, again)), line
    assert checked > 1000
    assert joined <= checked // 200


def test_a_rewrite_of_two_sentences_or_another_spacing_is_cut_again() -> None:
    draft = Draft.parse("Aspirin helped [PMID:1]. Statins did not [PMID:2]. Both were safe.")
    for new in ("Aspirin helped. It was cheap [PMID:1]. ", "Aspirin helped [PMID:1].\t"):
        after = draft.replaced({0: new})
        assert after.text == draft.edited({0: new})
        assert after.lines == _cut_again(after)
