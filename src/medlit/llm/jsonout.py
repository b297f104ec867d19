"""Getting clean text and JSON out of what models actually reply.

Models wrap JSON in code fences, precede it with prose ("Sure! Here is..."), or think aloud in
``<think>...</think>`` blocks (DeepSeek-R1, Qwen3, QwQ). These helpers undo that before pydantic
validates the result; they are pure functions so they can be tested on their own.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

__all__ = [
    "JSONExtractionError",
    "describe_error",
    "extract_json",
    "json_instruction",
    "json_schema",
    "response_format_for",
    "schema_root_type",
    "strip_code_fences",
    "strip_reasoning",
    "validate_reply",
]

T = TypeVar("T", bound=BaseModel)

_REASONING_TAGS = ("think", "thinking", "reasoning", "thought")
_CLOSED_BLOCK = re.compile(
    r"<(?P<tag>" + "|".join(_REASONING_TAGS) + r")\b[^>]*>.*?</(?P=tag)\s*>", re.S | re.I
)
# A chat template may open the block in the prompt, so the reply holds only "...</think>".
_DANGLING_CLOSE = re.compile(r"^.*</(?:" + "|".join(_REASONING_TAGS) + r")\s*>", re.S | re.I)
# A reply cut off (max_tokens) while still thinking: an opening tag that is never closed.
_UNCLOSED_OPEN = re.compile(r"<(?:" + "|".join(_REASONING_TAGS) + r")\b[^>]*>.*\Z", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.S)


class JSONExtractionError(ValueError):
    """No JSON value could be found in the text."""


def strip_reasoning(text: str) -> str:
    """Remove ``<think>``-style reasoning blocks (closed, dangling-closed or unclosed)."""
    out = _CLOSED_BLOCK.sub("", text)
    out = _DANGLING_CLOSE.sub("", out)
    out = _UNCLOSED_OPEN.sub("", out)
    return out.strip()


def strip_code_fences(text: str) -> str:
    """The content of the first fenced code block (preferring a ``json`` one), else the text."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    if not blocks:
        stripped = text.strip()
        # An opening fence whose closing one was cut off by max_tokens.
        if stripped.startswith("```"):
            first_newline = stripped.find("\n")
            return stripped[first_newline + 1 :].strip() if first_newline != -1 else ""
        return stripped
    for lang, body in blocks:
        if lang == "json":
            return body.strip()
    return blocks[0][1].strip()


def extract_json(text: str, prefer: Literal["object", "array"] | None = None) -> Any:
    """Parse the first JSON object or array in ``text``, skipping prose around it.

    Args:
        text: the model's reply (reasoning blocks and fences are removed first).
        prefer: when the text holds both, return the first value of this type.

    Raises:
        JSONExtractionError: no complete JSON object or array is in the text.
    """
    cleaned = strip_code_fences(strip_reasoning(text))
    try:
        whole = json.loads(cleaned)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(whole, dict | list):
            return whole
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for match in re.finditer(r"[\[{]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except json.JSONDecodeError:
            continue
        if prefer is None or (prefer == "object") == isinstance(value, dict):
            return value
        found.append(value)
    if found:
        return found[0]
    raise JSONExtractionError("no JSON object or array found in the reply")


@functools.lru_cache(maxsize=256)
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema.model_json_schema()``, built once per model (shared: do not modify it).

    pydantic builds it anew at every call (5-45 ms for the research models on a loaded
    machine), and a structured LLM call needs it up to three times, on the event loop.
    """
    return schema.model_json_schema()


@functools.lru_cache(maxsize=256)
def _json_schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(json_schema(schema), separators=(",", ":"))


def schema_root_type(schema: type[BaseModel]) -> Literal["object", "array"] | None:
    """Whether the schema's JSON is an object or an array (a ``RootModel[list[...]]``)."""
    kind = json_schema(schema).get("type")
    return kind if kind in ("object", "array") else None


def validate_reply(text: str, schema: type[T]) -> T:
    """Clean, extract and validate a reply against ``schema``.

    Raises:
        JSONExtractionError: no JSON in the reply.
        pydantic.ValidationError: JSON found, but it does not match the schema.
    """
    value = extract_json(text, prefer=schema_root_type(schema))
    return schema.model_validate(value)


def describe_error(exc: Exception) -> str:
    """A short, model-readable description of why a reply was rejected."""
    if isinstance(exc, PydanticValidationError):
        lines = []
        for err in exc.errors()[:10]:
            where = ".".join(str(p) for p in err["loc"]) or "(root)"
            lines.append(f"- {where}: {err['msg']}")
        return "The JSON does not match the schema:\n" + "\n".join(lines)
    return f"The reply is not valid JSON: {exc}"


def response_format_for(
    schema: type[BaseModel], mode: Literal["json_schema", "json_object_schema", "json_object"]
) -> dict[str, Any]:
    """The OpenAI ``response_format`` for a schema in the given mode.

    ``json_object_schema`` is ``{"type": "json_object", "schema": ...}``: llama-cpp-python
    turns the schema into a grammar (its "JSON Schema mode"), which keeps a small model's JSON
    valid even though that server refuses ``json_schema``.
    """
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": json_schema(schema)}
    # strict=False: pydantic schemas with optional fields break OpenAI's strict mode, while
    # vLLM/llama.cpp/Ollama enforce the schema through guided decoding either way.
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": json_schema(schema), "strict": False},
    }


def json_instruction(schema: type[BaseModel], *, include_schema: bool) -> str:
    """The system-prompt line asking for JSON (with the schema if the server can't take it)."""
    kind = "a JSON array" if schema_root_type(schema) == "array" else "a single JSON object"
    text = f"Reply with {kind} only: no prose, no code fences."
    if include_schema:
        text += " It must match this JSON schema:\n" + _json_schema_text(schema)
    return text
