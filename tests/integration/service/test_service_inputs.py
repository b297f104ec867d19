"""Strict inputs: booleans are booleans, a question needs a word (ask and research alike),
bidirectional controls are removed, OPTIONS and 405 name every allowed method."""

from __future__ import annotations

import httpx
import pytest

from medlit.config import Settings
from medlit.errors import ValidationError
from medlit.text import require_clean_text, require_words
from tests.integration.service.server import ServiceServer


def test_booleans_are_strict(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for value in ("yes", "true", 0, 1, "1", None):
            reply = client.post("/v1/ask", json={"question": "   ", "no_cache": value})
            assert reply.status_code == 400, (value, reply.text)
            assert "no_cache" in reply.json()["detail"]
        # A real boolean passes the model (the empty question is what is refused then).
        reply = client.post("/v1/ask", json={"question": "   ", "no_cache": True})
        assert reply.status_code == 400 and "empty" in reply.json()["detail"]


@pytest.mark.parametrize("question", ["b", "😀", "? ?", "1", "\u202e"])
def test_ask_and_research_refuse_a_question_without_a_word(
    service_settings: Settings, question: str
) -> None:
    service_settings.service.research_process = False
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        for path in ("/v1/ask", "/v1/research"):
            reply = client.post(path, json={"question": question})
            assert reply.status_code == 400, (path, reply.text)
            assert reply.headers["content-type"] == "application/problem+json"
            detail = reply.json()["detail"]
            assert "no word" in detail or "empty" in detail, detail
        assert client.get("/v1/research").json()["total"] == 0


def test_bidi_controls_are_removed_from_questions(service_settings: Settings) -> None:
    service_settings.service.research_process = False
    spoof = "Does aspirin \u202eekorts\u202c prevent\u2066 stroke\u2069?\u200f"
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        job = client.post("/v1/research", json={"question": spoof, "depth": "quick"})
        assert job.status_code == 202, job.text
        assert job.json()["question"] == "Does aspirin ekorts prevent stroke?"
        listed = client.get("/v1/research").json()["items"][0]["question"]
        assert listed == "Does aspirin ekorts prevent stroke?"


def test_text_rules() -> None:
    marks = "".join(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
    assert require_clean_text(f"a{marks}\u200e\u200f\u061cb", "x") == "ab"
    assert require_clean_text("שלום עולם", "x") == "שלום עולם"  # right-to-left text stays
    for ok in ("Does aspirin help?", "HIV", "癌症", "5-HT?", "b12"):
        assert require_words(ok, "the question") == ok
    for bad in ("b", "😀", "?", "- 1 -", "_ _"):
        with pytest.raises(ValidationError, match="no word"):
            require_words(bad, "the question")


def test_options_and_405_name_every_allowed_method(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        options = client.options("/v1/research")
        assert options.status_code == 204
        assert options.headers["allow"] == "GET, OPTIONS, POST"
        refused = client.delete("/v1/research")
        assert refused.status_code == 405
        assert refused.headers["allow"] == "GET, OPTIONS, POST"
        assert refused.headers["content-type"] == "application/problem+json"
        assert client.options("/v1/ask").headers["allow"] == "OPTIONS, POST"


def test_the_openapi_document_says_what_the_service_sends(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        doc = client.get("/openapi.json").json()
    text = str(doc)
    assert "'422'" not in text and "HTTPValidationError" not in text
    paths = doc["paths"]
    export = paths["/v1/research/{job_id}/export"]["get"]["responses"]["200"]["content"]
    assert export["application/vnd.citationstyles.csl+json"]["schema"]["type"] == "array"
    assert "text/plain" not in export
    report = paths["/v1/research/{job_id}/report"]["get"]["responses"]["200"]["content"]
    assert set(report) == {"application/json", "text/markdown"}
    assert report["application/json"]["schema"] == {"$ref": "#/components/schemas/NarrativeReport"}
    ask = paths["/v1/ask"]["post"]
    assert {} in ask["security"]  # no key needed before any key was created
    assert "Retry-After" in ask["responses"]["429"]["headers"]
    assert "WWW-Authenticate" in ask["responses"]["401"]["headers"]
    question = doc["components"]["schemas"]["AskRequest"]["properties"]["question"]
    assert question["maxLength"] == service.settings.agent.max_question_chars
    assert question["pattern"]
    assert "Location" in paths["/v1/research"]["post"]["responses"]["202"]["headers"]
