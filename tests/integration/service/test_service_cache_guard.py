"""The service never serves a cached answer for a near question that asks something else."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.eutils_server import FakeEutils
from tests.integration.service.server import ServiceServer
from tests.integration.test_ask_flow import corpus
from tests.integration.test_cache_guard_flow import BREAST, _breast_articles

# The issue's near questions: each was served the cached answer to BREAST. Each one asked is
# answered and cached in turn, so a later one may meet an earlier one as its closest: the
# reason names the words of the question asked either way.
NEAR = [
    (BREAST.replace("compromise", "improve"), "differs: improve / compromise"),
    (BREAST.replace("immediate", "delayed"), "differs: delayed / immediate"),
    (BREAST.replace("adjuvant", "neoadjuvant"), "differs: neoadjuvant / adjuvant"),
    (BREAST.replace("compromise", "speed up"), "differs: speed, up / compromise"),
    (BREAST.replace("?", " in men?"), "only in one question: men"),
    (BREAST.replace("?", " in elderly patients?"), "only in one question: elderly, patients"),
    (BREAST.replace("?", " in older women?"), "only in one question: older, women"),
    (BREAST.replace("?", " in women over 70?"), "only in one question: women, over, 70"),
]


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
            own = reason.split(": ", 1)[1].split(" / ")[0]
            assert own in cache["guard_reason"], (question, cache)
