"""A tier-1 hit in a long-lived assistant (a server's) does only the reads it needs: no probe
of the store for the offline check (a store holding the answer is not empty), and no read by
the question's key once the cache searches by vector."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from medlit.assistant import Assistant
from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.storage.sqlite import SqliteStore
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.fixtures import sample_articles


class CountingStore(SqliteStore):
    """The real store, counting the reads a hit could make."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def count_articles(self) -> int:
        self._count("count_articles")
        return super().count_articles()

    def count_answers(self, namespace: str | None = None) -> int:
        self._count("count_answers")
        return super().count_answers(namespace)

    def answer_for_question(self, *args: Any, **kwargs: Any) -> Any:
        self._count("answer_for_question")
        return super().answer_for_question(*args, **kwargs)


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


async def test_a_hit_makes_no_offline_probe_nor_a_keyed_read_after_a_vector_search(
    settings: Settings, eutils: FakeEutils
) -> None:
    settings.pubmed.base_url = eutils.base_url
    settings.europepmc.enabled = False
    store = CountingStore(settings.db_path, cache=settings.cache)
    question = "Does aspirin prevent stroke in adults?"
    async with Runtime(settings, store=store) as runtime:
        assistant = Assistant(runtime=runtime)
        first = await assistant.ask(question)
        assert first.cache.tier1 == "miss"
        probes = store.calls.get("count_articles", 0) + store.calls.get("count_answers", 0)
        assert probes  # a miss probes (PubMed is remote): was anything stored?
        reads = dict(store.calls)
        again = await assistant.ask(question)
        assert again.cache.tier1 == "hit"
        assert store.calls == reads  # no probe, and no keyed read (the cache searched by vector)
    store.close()
