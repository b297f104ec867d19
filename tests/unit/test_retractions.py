"""A retracted article is never evidence: not in ask's evidence (listed as excluded), and a
cached answer citing one PubMed now marks retracted is not served again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from medlit.agent.scoring import score_evidence
from medlit.cache import AnswerCache
from medlit.config import AgentSettings, CacheSettings
from medlit.embeddings.memo import MemoEmbedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article, Chunk, Evidence


def _article(pmid: str, types: list[str]) -> Article:
    return Article(
        pmid=pmid,
        title=f"Aspirin trial {pmid}",
        publication_types=types,
        abstract=[AbstractSection(label="CONCLUSIONS", text="Aspirin reduced stroke.")],
    )


def _ev(article: Article, similarity: float) -> Evidence:
    chunk = Chunk(id=f"{article.key}#1", article_key=article.key, ordinal=1, text="Aspirin.")
    return Evidence(chunk=chunk, article=article, similarity=similarity)


def test_publication_types_say_retracted_and_retraction_notice() -> None:
    assert _article("1", ["Journal Article", "Retracted Publication"]).retraction == "retracted"
    notice = _article("2", ["Retraction of Publication"])
    assert notice.retraction == "retraction notice"
    assert _article("3", ["Randomized Controlled Trial"]).retraction is None


def test_ask_never_scores_a_retracted_article_as_evidence() -> None:
    retracted = _article("1", ["Randomized Controlled Trial", "Retracted Publication"])
    sound = _article("2", ["Randomized Controlled Trial"])
    report = score_evidence([_ev(retracted, 0.9), _ev(sound, 0.6)], AgentSettings())
    assert [ev.article.pmid for ev in report.evidence] == ["2"]
    assert report.excluded == {"pmid:1": "retracted"}
    assert "pmid:1" not in report.doc_scores


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "c.sqlite3") as s:
        yield s


def test_a_cached_answer_citing_an_article_later_retracted_is_not_served(
    store: SqliteStore,
) -> None:
    from medlit.cache import EvidenceCache

    embedder = MemoEmbedder(OnnxEmbedder())
    question = "Does aspirin prevent recurrent stroke?"
    vector = embedder.embed([question])[0]
    cache = AnswerCache(store, CacheSettings(guard=False))
    payload = {
        "answer": "Yes [1].",
        "citations": [{"pmid": "7", "title": "Aspirin trial 7"}],
        "retrieval_score": 0.8,
    }
    cache.add_query(question, vector, payload, namespace="default", fingerprint="fp")
    evidence = EvidenceCache(store, CacheSettings())
    evidence.add_articles([_article("7", ["Randomized Controlled Trial"])], embedder)
    assert cache.search_query(question, vector, namespace="default", fingerprint="fp").hit

    # PubMed now marks it retracted: the next time it is fetched the store holds that.
    evidence.add_articles([_article("7", ["Randomized Controlled Trial", "Retracted Publication"])],
                          embedder)  # fmt: skip
    lookup = cache.search_query(question, vector, namespace="default", fingerprint="fp")
    assert not lookup.hit and lookup.miss_reason == "cites_retracted"
    assert lookup.guard_reason == "cites retracted PMID 7"
