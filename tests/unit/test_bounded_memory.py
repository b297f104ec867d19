"""Every memory kept across answers is bounded one way: past its limit, the oldest half goes."""

from __future__ import annotations

import pytest

from medlit import text
from medlit.text import Bounded
from medlit.words import memo


def test_a_new_key_past_the_limit_lets_the_oldest_half_go() -> None:
    kept: Bounded[int, str] = Bounded(4)
    for key in range(4):
        kept[key] = str(key)
    kept[2] = "again"  # a key it holds: nothing goes
    assert list(kept) == [0, 1, 2, 3]
    kept[4] = "4"
    assert kept == {2: "again", 3: "3", 4: "4"}
    kept[5] = "5"
    assert list(kept) == [2, 3, 4, 5]


def test_a_memory_of_one_keeps_the_last() -> None:
    kept: Bounded[str, int] = Bounded(1)
    kept["a"] = 1
    kept["b"] = 2
    assert kept == {"b": 2}


@pytest.fixture
def _small(monkeypatch: pytest.MonkeyPatch) -> None:
    text.forget_kept_sentences()
    text.forget_kept_pieces()
    monkeypatch.setattr(text._ARTICLE_TEXTS, "limit", 4)
    monkeypatch.setattr(text._KEPT_SENTENCES, "limit", 4)
    monkeypatch.setattr(text._KEPT_STARTS, "limit", 2)
    yield
    text.forget_kept_sentences()
    text.forget_kept_pieces()


@pytest.mark.usefixtures("_small")
def test_the_texts_of_the_latest_articles_stay_kept() -> None:
    text.keep_sentences(["A one. A two.", "B one."])
    text.keep_sentences(["C one. C two.", "D one."])
    text.keep_sentences(["E one."])  # past 4: A and B go, C and D stay
    assert not text.is_article_text("A one. A two.")
    assert all(map(text.is_article_text, ["C one. C two.", "D one.", "E one."]))
    assert text.split_sentences("C one. C two.") == ["C one.", "C two."]
    assert len(text._KEPT_SENTENCES) <= 4 and len(text._ARTICLE_TEXTS) <= 4


@pytest.mark.usefixtures("_small")
def test_kept_cuts_are_bounded_and_the_newest_stays() -> None:
    for n in range(5):
        text.keep_sentence_pieces([f"First {n}. ", "Second."])
    assert len(text._KEPT_STARTS) <= 2
    assert "First 4. Second." in text._KEPT_STARTS


def test_an_articles_memory_of_a_function_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "KEPT_MAX", 4)
    calls: list[str] = []

    @memo.remembered()
    def shout(said: str) -> str:
        calls.append(said)
        return said.upper()

    texts = [f"Article text {n}." for n in range(6)]
    text.keep_sentences(texts)
    try:
        assert [shout(t) for t in texts] == [t.upper() for t in texts]
        assert len(memo._KEPT[-1]) <= 4
        assert shout(texts[-1]) == texts[-1].upper() and calls.count(texts[-1]) == 1
        assert shout(texts[0]) == texts[0].upper() and calls.count(texts[0]) == 2  # let go
    finally:
        memo._KEPT.pop()
        memo._MEMORIES.pop()
        text.forget_kept_sentences()
