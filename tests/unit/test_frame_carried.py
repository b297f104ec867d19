"""The question frame is read once and carried: stored with a tier-1 answer, loaded whole or
read again, compared by the cache guard, and read at few places outside ``words/``."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import medlit
from medlit.cache import AnswerCache
from medlit.cache.guard import QuestionGuard, question_features
from medlit.cache.word_pairs import pairs_between
from medlit.config import CacheSettings
from medlit.storage.sqlite import SqliteStore
from medlit.words import frame as frame_module
from medlit.words.frame import FRAME_FORMAT, QuestionFrame, frame_of, read_frame
from tests.vectors import unit

PACKAGE = Path(medlit.__file__).resolve().parent
CACHED = "Does high-dose radiotherapy benefit palliative lung cancer patients?"
ASKED = "Does high-dose chemotherapy benefit palliative lung cancer patients?"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The questions :func:`medlit.words.frame.frame_of` reads (its fallback's calls)."""
    seen: list[str] = []
    real: Callable[..., QuestionFrame] = frame_module.read_frame

    def counted(question: str, sources: tuple[str, ...] = ()) -> QuestionFrame:
        seen.append(question)
        return real(question, sources)

    monkeypatch.setattr(frame_module, "read_frame", counted)
    return seen


def test_the_frame_holds_what_the_guard_compares() -> None:
    frame = read_frame("Is there no fever after a flu shot? What causes it, not the shot?")
    assert frame.negated == ("fever",) and frame.asserted == ()
    assert frame.negated_ask and "cause" in frame.intents
    assert read_frame("Is surgery or physical therapy better for a torn meniscus?").treatments
    assert read_frame("What can I take instead of ibuprofen?").asks_alternatives
    assert "fever" in read_frame("Does fever mean no infection, fever or not?").asserted


def test_a_stored_frame_loads_whole_without_reading(reads: list[str]) -> None:
    frame = read_frame(CACHED, ["pubmed"])
    reads.clear()
    loaded = frame_of(CACHED, frame.stored())
    assert loaded == frame.with_sources(())
    assert reads == []
    assert frame_of(frame) is frame and reads == []


def _spoiled(stored: str, change: Callable[[dict[str, object]], None]) -> str:
    data = json.loads(stored)
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(format=FRAME_FORMAT + 1),
        lambda d: d.update(code="another code"),
        lambda d: d["frame"].pop("intents"),
        lambda d: d["frame"].update(extra=1),
        lambda d: d["frame"].update(negated="fever"),
        lambda d: d["frame"].update(yes_no="yes"),
        lambda d: d["frame"].update(kind="opinion"),
        lambda d: d["frame"].update(direction="sideways"),
        lambda d: d["frame"].update(populations=[{"kind": "planet", "name": "x", "words": "x"}]),
        lambda d: d["frame"].update(question="Does aspirin cause stroke?"),
    ],
    ids=[
        "format",
        "code",
        "missing",
        "extra",
        "type",
        "flag",
        "kind",
        "direction",
        "population",
        "question",
    ],
)
def test_a_frame_that_does_not_load_whole_is_read_again(
    reads: list[str], change: Callable[[dict[str, object]], None]
) -> None:
    stored = _spoiled(read_frame(CACHED).stored(), change)
    reads.clear()
    assert frame_of(CACHED, stored) == read_frame(CACHED)
    assert reads == [CACHED]


def test_broken_or_missing_stored_frames_are_read_again(reads: list[str]) -> None:
    for stored in ("", "{", "[]", '{"format": 1}'):
        reads.clear()
        assert frame_of(CACHED, stored) == read_frame(CACHED)
        assert reads == [CACHED]


def test_the_guard_decides_on_frames_as_on_texts() -> None:
    guard = QuestionGuard()
    pairs = [
        (ASKED, CACHED),
        ("Does aspirin not prevent stroke?", "Does aspirin prevent stroke?"),
        ("Is there fever after the shot?", "Is there no fever after the shot?"),
        ("What causes migraine?", "How is migraine treated?"),
        (
            "Is surgery better for a torn meniscus?",
            "Is physical therapy better for a torn meniscus?",
        ),
        ("Is 10 mg of melatonin safe in children?", "Is 3 mg of melatonin safe in adults?"),
    ]
    for new, cached in pairs:
        framed = (read_frame(new), read_frame(cached))
        assert guard.check_related(*framed) == guard.check_related(new, cached)
        assert guard.check(*framed) == guard.check(new, cached)
        assert pairs_between(guard, *framed) == pairs_between(guard, new, cached)
        assert question_features(framed[0]) == question_features(new)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "c.sqlite3") as s:
        yield s


def _answer() -> dict[str, object]:
    return {
        "answer": "Yes [1].",
        "verdict": "yes",
        "citations": [{"pmid": "1", "title": "A trial"}],
        "retrieval_score": 0.7,
        "doc_scores": {"1": 0.7},
    }


def test_the_cache_keeps_the_frame_and_the_guard_reads_no_question(
    store: SqliteStore, reads: list[str]
) -> None:
    cache = AnswerCache(store, CacheSettings(tau=0.75))
    answer_id = cache.add_query(
        CACHED, unit(1), _answer(), namespace="ns", fingerprint="fp", frame=read_frame(CACHED)
    )
    record = store.get_answer(answer_id)
    assert record is not None and frame_of(CACHED, record.frame) == read_frame(CACHED)
    # A frame of other words (a translated question's) is not kept for these.
    other = cache.add_query(
        ASKED, unit(2), _answer(), namespace="ns", fingerprint="fp", frame=read_frame(CACHED)
    )
    kept = store.get_answer(other)
    assert kept is not None and kept.frame == ""
    store.delete_answers([other])
    reads.clear()
    # Refused at tau by a word (chemotherapy / radiotherapy): the pair's checks compare the
    # frames.
    missed = cache.search_query(
        ASKED, unit(1), namespace="ns", fingerprint="fp", frame=read_frame(ASKED)
    )
    assert not missed.hit and missed.miss_reason == "guard_rejected"
    assert missed.pending_pair is not None
    assert reads == []


def test_an_answer_stored_without_a_frame_is_read_once_per_lookup(
    store: SqliteStore, reads: list[str]
) -> None:
    cache = AnswerCache(store, CacheSettings(tau=0.75))
    cache.add_query(CACHED, unit(1), _answer(), namespace="ns", fingerprint="fp")
    reads.clear()
    missed = cache.search_query(ASKED, unit(1), namespace="ns", fingerprint="fp")
    assert not missed.hit and missed.pending_pair is not None
    assert sorted(reads) == sorted([ASKED, CACHED])


def _read_frame_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "read_frame")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "read_frame")
        )
    ]


def test_the_frame_is_read_at_three_places_at_most_outside_words() -> None:
    calls = {
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "words"
        for line in _read_frame_calls(path)
    }
    assert len(calls) <= 3, sorted(calls)
