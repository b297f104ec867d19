"""``medlit cache stats`` and ``medlit cache clear`` through the real CLI and database."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from medlit.cache import AnswerCache, EvidenceCache
from medlit.cli import app
from medlit.config import CacheSettings, Settings
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article

runner = CliRunner()


class VectorsByHash:
    """A tiny deterministic embedder for filling the cache (no model needed here)."""

    model_id = "hash-test"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=384) for t in texts]
        out = np.array(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def fill() -> Path:
    settings = Settings()  # MEDLIT_HOME points at a private directory (tests/conftest.py)
    emb = VectorsByHash()
    with SqliteStore.open(settings) as store:
        answers = AnswerCache(store, CacheSettings(guard=False))
        for ns, q in [("default", "q1"), ("default", "q2"), ("team", "q3")]:
            answers.add_query(
                q,
                emb.embed([q])[0],
                {"answer": "a", "citations": [{"pmid": "1", "title": "t"}], "retrieval_score": 0.8},
                namespace=ns,
                fingerprint="fp",
            )
        answers.search_query("q1", emb.embed(["q1"])[0], namespace="default", fingerprint="fp")
        answers.search_query("zz", emb.embed(["zz"])[0], namespace="default", fingerprint="fp")
        art = Article(pmid="9", title="T", abstract=[AbstractSection(text="One. Two.")])
        EvidenceCache(store).add_articles([art], emb)  # type: ignore[arg-type]
    return settings.db_path


def stats() -> dict[str, object]:
    result = runner.invoke(app, ["cache", "stats", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_stats_reports_entries_hits_misses_and_disk() -> None:
    db = fill()
    data = stats()
    answers, evidence = data["answers"], data["evidence"]
    assert answers == {**answers, "entries": 3, "hits": 1, "inserts": 3}  # type: ignore[dict-item]
    assert answers["by_namespace"] == {"default": 2, "team": 1}  # type: ignore[index]
    assert answers["misses"]["nothing_similar"] == 1  # type: ignore[index]
    assert evidence["articles"] == 1 and evidence["chunks"] == 2  # type: ignore[index]
    assert data["disk_bytes"]["total"] >= os.path.getsize(db)  # type: ignore[index]
    table = runner.invoke(app, ["cache", "stats"])
    assert table.exit_code == 0 and "answers (tier 1)" in table.stdout


def test_clear_namespace_then_evidence_then_all() -> None:
    fill()
    result = runner.invoke(app, ["cache", "clear", "--namespace", "team", "--yes"])
    assert result.exit_code == 0 and "deleted 1 answers" in result.stdout
    assert stats()["answers"]["by_namespace"] == {"default": 2}  # type: ignore[index]
    result = runner.invoke(app, ["cache", "clear", "--tier", "evidence", "--yes"])
    assert result.exit_code == 0 and "deleted 1 articles (2 chunks)" in result.stdout
    assert stats()["evidence"]["chunks"] == 0  # type: ignore[index]
    assert runner.invoke(app, ["cache", "clear", "--yes"]).exit_code == 0
    assert stats()["answers"]["entries"] == 0  # type: ignore[index]


def test_clear_without_yes_off_a_terminal_refuses() -> None:
    fill()
    result = runner.invoke(app, ["cache", "clear"], input="y\n")
    assert result.exit_code == 2
    assert stats()["answers"]["entries"] == 3  # type: ignore[index]


def test_bad_tier_is_a_usage_error() -> None:
    assert runner.invoke(app, ["cache", "clear", "--tier", "both", "--yes"]).exit_code == 2


def test_stats_split_hits_by_tau_and_by_verification() -> None:
    fill()
    settings = Settings()
    with SqliteStore.open(settings) as store:
        # What AnswerCache.search_query_verified counts (tests/integration/test_cache_verify.py).
        store.bump_counters(
            {
                "answers.hits": 2,
                "answers.hits.verified": 2,
                "answers.verify.calls": 5,
                "answers.verify.accepted": 2,
                "answers.verify.refused": 1,
                "answers.miss.not_verified": 1,
            }
        )
    answers = stats()["answers"]
    assert answers["hits"] == 3 and answers["hits_at_tau"] == 1  # type: ignore[index]
    assert answers["hits_verified"] == 2  # type: ignore[index]
    assert answers["verification"] == {  # type: ignore[index]
        "calls": 5,
        "accepted": 2,
        "refused": 1,
        "remembered": 0,
        "errors": 0,
    }
    assert answers["misses"]["not_verified"] == 1  # type: ignore[index]
    table = runner.invoke(app, ["cache", "stats"]).stdout
    assert "verified by the LLM" in table and "5 / 2 / 1" in table
