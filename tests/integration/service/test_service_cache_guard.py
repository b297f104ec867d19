"""The service never serves a cached answer for a near question that asks something else."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.eutils_server import FakeEutils
from tests.guard_cases import BREAST, NEAR
from tests.integration.service.server import ServiceServer
from tests.integration.test_ask_flow import corpus
from tests.integration.test_cache_guard_flow import _breast_articles

# NEAR: each question asked is answered and cached in turn, so a later one may meet an earlier
# one as its closest: the reason names the words of the question asked either way.


@pytest.fixture
def eutils() -> Iterator[FakeEutils]:
    articles = [*corpus(), *_breast_articles()]
    with FakeEutils(articles=articles, rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def test_the_issue_examples_are_never_served_the_cached_answer(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as client:
        first = client.post("/v1/ask", json={"question": BREAST}).json()
        assert first["cache"]["admitted"], first["cache"]
        reworded = client.post(
            "/v1/ask",
            json={
                "question": BREAST.replace("Does", "Can").replace(
                    "reconstruction", "reconstructions"
                )
            },
        ).json()
        assert reworded["cache"]["tier1"] == "hit"
        for question, reason in NEAR:
            cache = client.post("/v1/ask", json={"question": question}).json()["cache"]
            # Every one is near enough for cosine alone (>= tau): the guard refuses it.
            assert cache["tier1"] == "miss", (question, cache)
            assert cache["miss_reason"] == "guard_rejected", (question, cache)
            # The nearest cached question may be an earlier near question of this list, so
            # the reason names at least one of this question's own differing words.
            own = reason.split(": ", 1)[1].split(" / ")[0].split(", ")
            assert any(word in cache["guard_reason"] for word in own), (question, cache)
