"""``medlit serve`` never answers from what another address served (issue 63, provenance).

The same home served by the service pointed at one fake E-utilities server, then restarted
pointed at another with different records: the second answer is not the first's cached answer
and cites nothing only the first server served.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from medlit.config import Settings
from tests.fakes.eutils_server import FakeEutils
from tests.integration.service.server import ServiceServer
from tests.integration.test_ask_flow import Q1, corpus
from tests.integration.test_provenance import cited, second_corpus, served_by


@pytest.fixture
def second() -> Iterator[FakeEutils]:
    with FakeEutils(articles=second_corpus(), rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


def ask(settings: Settings) -> dict[str, object]:
    with ServiceServer(settings) as server, httpx.Client(base_url=server.url, timeout=60) as c:
        response = c.post("/v1/ask", json={"question": Q1})
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]


def test_the_service_serves_no_answer_or_article_of_another_address(
    service_settings: Settings, eutils: FakeEutils, second: FakeEutils
) -> None:
    first = ask(service_settings)
    assert first["cache"]["admitted"], first["cache"]  # type: ignore[index]
    assert cited(first) <= served_by(corpus())

    moved = service_settings.model_copy(deep=True)
    moved.pubmed.base_url = second.base_url
    answer = ask(moved)
    cache = answer["cache"]
    assert cache["tier1"] == "miss", cache  # type: ignore[index]
    assert cache["miss_reason"] == "other_source"  # type: ignore[index]
    assert cache["guard_reason"] == (  # type: ignore[index]
        f"cached answer came from {eutils.base_url} not {second.base_url}"
    )
    assert answer["citations"] and cited(answer) <= served_by(second_corpus()), cited(answer)
    assert not cited(answer) & (served_by(corpus()) - served_by(second_corpus()))

    again = ask(moved)  # its own address's answer is served
    assert again["cache"]["tier1"] == "hit" and cited(again) == cited(answer)  # type: ignore[index]
