"""Summary-only chat memory in a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from medlit.agent.memory import ChatMemory, Turn
from medlit.errors import LLMTimeout
from medlit.storage.sqlite import SqliteStore


def _memory(tmp_path: Path, **kw: int) -> tuple[SqliteStore, ChatMemory]:
    store = SqliteStore(tmp_path / "m.sqlite3")
    opts = {"summarize_every": 2, "recent_turns": 3, **kw}
    return store, ChatMemory(store, **opts)


async def test_without_llm_keeps_last_questions(tmp_path: Path) -> None:
    store, memory = _memory(tmp_path)
    try:
        assert memory.get("s1").is_empty
        for n in range(5):
            await memory.update("s1", Turn(f"q{n}", f"standalone {n}", f"answer {n}"))
        got = memory.get("s1")
        assert got.turns == 5 and got.summary == ""
        assert [t.question for t in got.pending] == ["q2", "q3", "q4"]
        assert got.last_question == "standalone 4"
        assert got.render() == "Recent questions: standalone 2; standalone 3; standalone 4"
        assert memory.get("other").is_empty  # sessions are separate
    finally:
        store.close()


async def test_llm_summarises_every_n_turns_and_persists(tmp_path: Path) -> None:
    store, memory = _memory(tmp_path)
    calls: list[tuple[str, list[str]]] = []

    async def summarizer(summary: str, turns: list[Turn]) -> str:
        calls.append((summary, [t.question for t in turns]))
        return f"summary after {len(calls)}"

    await memory.update("s", Turn("q1", "s1"), summarizer=summarizer)
    assert calls == []  # not yet N turns
    await memory.update("s", Turn("q2", "s2"), summarizer=summarizer)
    assert calls == [("", ["q1", "q2"])]
    got = memory.get("s")
    assert got.summary == "summary after 1" and [t.question for t in got.pending] == ["q2"]
    store.close()
    reopened = SqliteStore(tmp_path / "m.sqlite3")
    try:
        again = ChatMemory(reopened, summarize_every=2, recent_turns=3).get("s")
        assert again.summary == "summary after 1" and again.turns == 2
        assert "summary after 1" in again.render()
    finally:
        reopened.close()


async def test_failing_summarizer_keeps_turns(tmp_path: Path) -> None:
    store, memory = _memory(tmp_path)

    async def broken(summary: str, turns: list[Turn]) -> str:
        raise LLMTimeout("slow")

    try:
        await memory.update("s", Turn("q1", "s1"), summarizer=broken)
        await memory.update("s", Turn("q2", "s2"), summarizer=broken)
        got = memory.get("s")
        assert got.summary == "" and [t.question for t in got.pending] == ["q1", "q2"]
        assert memory.clear("s") and memory.get("s").is_empty
    finally:
        store.close()
