"""Cleaning model replies: reasoning blocks, code fences, prose around JSON, routing."""

from __future__ import annotations

import email.utils

import pytest
from pydantic import BaseModel, RootModel
from pydantic import ValidationError as PydanticValidationError

from medlit.config import LLMSettings, LLMTaskRoute
from medlit.llm.base import ProviderFailure, parse_retry_after
from medlit.llm.jsonout import (
    JSONExtractionError,
    extract_json,
    json_instruction,
    response_format_for,
    strip_code_fences,
    strip_reasoning,
    validate_reply,
)
from medlit.llm.tasks import LLMTask, how_to_configure, resolve_route


class Plan(BaseModel):
    queries: list[str]
    reason: str | None = None


class Facts(RootModel[list[str]]):
    pass


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>I should say hi</think>Hello", "Hello"),
        ("<think>\nmulti\nline\n</think>\n\nHello", "Hello"),
        ("<THINKING>x</THINKING> A <reasoning>y</reasoning>B", "A B"),
        ("reasoning opened by the template</think>Answer", "Answer"),
        ("Answer first<think>then cut off by max_tokens", "Answer first"),
        ("No tags at all.", "No tags at all."),
    ],
)
def test_strip_reasoning(raw: str, clean: str) -> None:
    assert strip_reasoning(raw) == clean


def test_strip_code_fences_prefers_json_block() -> None:
    text = 'Here:\n```python\nprint(1)\n```\nand\n```json\n{"a": 1}\n```'
    assert strip_code_fences(text) == '{"a": 1}'
    assert strip_code_fences("```\n[1, 2]\n```") == "[1, 2]"
    assert strip_code_fences('```json\n{"a": 1') == '{"a": 1'  # closing fence cut off
    assert strip_code_fences("plain") == "plain"


@pytest.mark.parametrize(
    "raw",
    [
        '{"queries": ["a", "b"]}',
        '```json\n{"queries": ["a", "b"]}\n```',
        'Sure! Here is the plan:\n{"queries": ["a", "b"]}\nLet me know.',
        '<think>{"queries": ["wrong"]}</think>\n{"queries": ["a", "b"]}',
        'Using [brackets] in prose first, then {"queries": ["a", "b"]}',
    ],
)
def test_extract_json_finds_the_object(raw: str) -> None:
    assert extract_json(raw) == {"queries": ["a", "b"]}


def test_extract_json_prefers_the_schema_root_type() -> None:
    text = 'Candidates [1, 2] then the answer {"queries": []}'
    assert extract_json(text, prefer="object") == {"queries": []}
    assert extract_json(text, prefer="array") == [1, 2]
    assert extract_json(text) == [1, 2]


def test_extract_json_raises_without_json() -> None:
    with pytest.raises(JSONExtractionError):
        extract_json("I cannot help with that.")
    with pytest.raises(JSONExtractionError):
        extract_json('{"queries": ["unterminated"')


def test_validate_reply_objects_and_arrays() -> None:
    plan = validate_reply('```json\n{"queries": ["x"]}\n```', Plan)
    assert plan.queries == ["x"]
    facts = validate_reply('The facts: ["a", "b"]', Facts)
    assert facts.root == ["a", "b"]
    with pytest.raises(PydanticValidationError):
        validate_reply('{"queries": "not a list"}', Plan)


def test_response_formats_and_instruction() -> None:
    fmt = response_format_for(Plan, "json_schema")
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Plan"
    assert fmt["json_schema"]["schema"]["properties"]["queries"]["type"] == "array"
    assert response_format_for(Plan, "json_object") == {"type": "json_object"}
    assert "queries" in json_instruction(Plan, include_schema=True)
    assert "queries" not in json_instruction(Plan, include_schema=False)
    assert "JSON array" in json_instruction(Facts, include_schema=False)


def test_parse_retry_after_seconds_date_and_millis() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_format_rejection_detection() -> None:
    assert ProviderFailure("response_format not supported", kind="bad_request").mentions_format
    assert not ProviderFailure("context length exceeded", kind="bad_request").mentions_format


def test_routing_overrides_and_key_isolation() -> None:
    settings = LLMSettings(
        base_url="http://main:8000/v1",
        api_key="main-key",  # type: ignore[arg-type]
        model="small",
        tasks={
            "synthesize": LLMTaskRoute(model="big", max_tokens=4000),
            "answer": LLMTaskRoute(base_url="http://other:9000/v1", temperature=0.0),
        },
    )
    default = resolve_route(settings, LLMTask.PLAN_QUERY)
    assert (default.model, default.base_url, default.api_key) == (
        "small",
        "http://main:8000/v1",
        "main-key",
    )
    synth = resolve_route(settings, LLMTask.SYNTHESIZE)
    assert (synth.model, synth.max_tokens, synth.api_key) == ("big", 4000, "main-key")
    answer = resolve_route(settings, LLMTask.ANSWER)
    # Another server never receives the default key.
    assert (answer.base_url, answer.api_key, answer.temperature) == (
        "http://other:9000/v1",
        None,
        0.0,
    )
    assert "main-key" not in repr(default)


def test_unconfigured_route_message_says_how() -> None:
    route = resolve_route(LLMSettings(), LLMTask.ANSWER)
    assert not route.configured
    message = how_to_configure(route)
    for needle in ("MEDLIT_LLM_BASE_URL", "MEDLIT_LLM_MODEL", "MEDLIT_LLM_API_KEY", "11434"):
        assert needle in message
    hf = resolve_route(LLMSettings(provider="hf", model="org/model"), "answer")
    assert hf.configured  # the HF token may come from huggingface_hub's own lookup
    openai_no_server = resolve_route(LLMSettings(model="gpt-4o-mini"), "answer")
    assert not openai_no_server.configured
