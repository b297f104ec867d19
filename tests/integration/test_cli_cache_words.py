"""``medlit cache words`` and ``medlit cache calibrate`` through the real CLI, database and the
fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from medlit.cache.word_pairs import PROMPT_VERSION, WordPair, WordPairStore
from medlit.cli import app
from medlit.config import Settings
from medlit.storage.sqlite import SqliteStore
from tests.fakes.llm_server import FakeLLMServer, Reply

runner = CliRunner()
PAIR = WordPair("older", "elderly", "effect")
YES = {"Yes": 0.97, "No": 0.02}
NO = {"No": 0.9, "Yes": 0.05}


def remember(verdict: str = "pending") -> int:
    """A pair met in the default namespace, and an answer served through it."""
    with SqliteStore.open(Settings()) as store:
        pairs = WordPairStore(store)
        pairs.propose("default", PAIR, "Is X common in older people?", "... elderly people?")
        if verdict != "pending":
            pairs.decide("default", PAIR, verdict, by="model", model="m", score=0.95)  # type: ignore[arg-type]
        answer = store.insert_answer(
            namespace="default",
            fingerprint="fp",
            question="Is X common in elderly people?",
            embedding=np.eye(384, dtype=np.float32)[0],
            payload={"answer": "a", "citations": [{"pmid": "1"}], "retrieval_score": 0.8},
            retrieval_score=0.8,
            now=0.0,
        )
        pairs.record_use("default", PAIR, answer)
        return answer


def listed(*extra: str) -> list[dict[str, object]]:
    result = runner.invoke(app, ["cache", "words", "list", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_list_approve_and_revoke() -> None:
    answer = remember()
    (row,) = listed()
    assert row["words"] == ["elderly", "older"] and row["verdict"] == "pending"
    assert row["seed"] == "wordnet synonyms" and row["uses"] == 1
    assert listed("--namespace", "team") == [] and listed("--verdict", "same") == []
    result = runner.invoke(app, ["cache", "words", "approve", "older", "elderly"])
    assert result.exit_code == 0 and "approved older / elderly" in result.stdout
    assert listed()[0]["verdict"] == "same" and listed()[0]["decided_by"] == "person"
    result = runner.invoke(app, ["cache", "words", "revoke", "elderly", "older"])
    assert result.exit_code == 0 and "deleted 1 answers it let through" in result.stdout
    with SqliteStore.open(Settings()) as store:
        assert store.get_answer(answer) is None
    assert listed()[0]["verdict"] == "different"
    unknown = runner.invoke(app, ["cache", "words", "approve", "lower", "reduce"])
    assert unknown.exit_code == 2 and "no remembered pair" in unknown.output


def test_stats_show_pairs_and_the_guards_measured_error() -> None:
    remember("same")
    result = runner.invoke(app, ["cache", "stats", "--json"])
    data = json.loads(result.stdout)
    assert data["word_pairs"] == {**data["word_pairs"], "same": 1, "pending": 0}
    bound = data["guard_error"]
    assert bound["wrong_hits"] == 0 and bound["near_miss_edits"] >= 150
    assert 0 < bound["upper_95"] < 0.03 and "part check" in bound["contrast_set"]
    table = runner.invoke(app, ["cache", "stats"]).stdout
    assert "guard error (near-miss edits served)" in table and "95% upper bound" in table


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.setenv("MEDLIT_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("MEDLIT_LLM_MODEL", "fake-judge")
        monkeypatch.setenv("MEDLIT_LLM_API_KEY", "k")
        monkeypatch.setenv("MEDLIT_LLM_MAX_RETRIES", "0")
        yield fake


def contrast(tmp_path: Path) -> Path:
    path = tmp_path / "contrast.csv"
    rows = [
        ("reword", "Do we need imaging to diagnose appendicitis in children?",
         "Do we require imaging to diagnose appendicitis in children?"),
        ("reword", "Does obesity affect clinical outcomes after knee replacement?",
         "Does obesity affect clinical results after knee replacement?"),
        ("edit", "Does exercise improve sleep quality in adults?",
         "Does exercise improve sleep latency in adults?"),
        ("edit", "Is aspirin safe in children?", "Is aspirin safe in adults?"),  # no pair
    ]  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["part", "group", "kind", "source", "cached", "asked"])
        writer.writerows(["check", g, "k", "s", c, a] for g, c, a in rows)
    return path


def test_calibrate_measures_keeps_and_opens_only_on_enough_accepted_pairs(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    path = contrast(tmp_path)
    server.enqueue(*(Reply.scored(p) for p in (YES, YES, YES, YES, NO)))
    scores = tmp_path / "scores.jsonl"
    result = runner.invoke(
        app, ["cache", "calibrate", "--contrast", str(path), "--json", "--scores", str(scores)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    kept = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [(k["new"], k["same"], k["score"] >= 0.9) for k in kept] == [
        ("require", True, True),
        ("results", True, True),
        ("latency", False, False),
    ]
    assert data == {**data, "model": "fake-judge", "pairs": 3, "same_pairs": 2, "accepted": 2}
    assert data["precision"] == 1.0 and data["prompt_version"] == PROMPT_VERSION
    assert not data["opens"]  # right on 2 of 2 accepted shows no 0.99
    assert len(server.completions) == 5  # both directions for a Yes, one for a clear No
    # A judge that accepts the edit: precision 2/3, kept, and closed.
    server.enqueue(*(Reply.scored(YES) for _ in range(6)))
    result = runner.invoke(app, ["cache", "calibrate", "--contrast", str(path)])
    assert result.exit_code == 0 and "stays closed" in result.stdout
    (judge,) = json.loads(runner.invoke(app, ["cache", "stats", "--json"]).stdout)["word_pairs"][
        "judges"
    ]
    assert judge["precision"] == pytest.approx(2 / 3, abs=1e-3) and not judge["opens"]
