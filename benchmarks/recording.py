"""What a real model answered before its checks, kept for the checks' replays.

:class:`Recorder` wraps the ask graph's check node and the verdict reader, so that each
question asked through the real assistant leaves a row: the question as planned, whether it
asks yes or no, the PMIDs of the evidence retrieved (best first), the model's answer as the
checks get it (``drafted``) and its verdict line, and every verdict the model was asked to read
off a checked text (text -> verdict). :func:`keep` writes the rows to a JSONL file, one per
PMID (a new answer to a question replaces the old one). ``record_answers.py`` and
``verdicts.py --record`` use it; ``ablation.py`` and ``checks_speed.py`` replay the rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import medlit.agent.nodes as nodes
import medlit.checks.verdict as verdict_call

__all__ = ["RECORDED", "Recorder", "keep"]

RECORDED = Path(__file__).resolve().parent / "data" / "recorded_answers.jsonl"


class Recorder:
    """What one question's check node was given, and the verdicts the model read.

    Set :attr:`row` to a fresh dict before each question; after it, the row holds what the
    check node saw (no ``drafted`` key when the model was never asked)."""

    def __init__(self) -> None:
        self.row: dict[str, Any] = {}
        check_answer = nodes.AskNodes.check_answer
        read_verdict = verdict_call.read_verdict

        async def checked(this: nodes.AskNodes, state: Any) -> dict[str, Any]:
            self.row.update(
                standalone=state.get("standalone_question") or state["question"],
                is_yes_no=(frame := state.get("frame")) is not None and frame.yes_no,
                evidence=[ev.article.pmid for ev in state["evidence"]],
                drafted=state["drafted"],
                drafted_verdict=state.get("drafted_verdict"),
            )
            return await check_answer(this, state)

        async def read(llm: Any, question: str, text: str) -> Any:
            verdict = await read_verdict(llm, question, text)
            self.row.setdefault("reads", []).append([text, verdict])
            return verdict

        nodes.AskNodes.check_answer = checked  # type: ignore[method-assign]
        # The check node imports the verdict call when it needs it, from its module.
        verdict_call.read_verdict = read  # type: ignore[assignment]


def _key(row: dict[str, Any]) -> tuple[str, str | None]:
    """A row's identity: its PMID, and the form of its question where one was turned."""
    return row["pmid"], row.get("form")


def keep(row: dict[str, Any], path: Path = RECORDED) -> bool:
    """Write ``row`` to ``path`` in place of any earlier row of its PMID (and form); False
    (nothing written) when the model was never asked (no ``drafted`` answer)."""
    if "drafted" not in row:
        return False
    lines = path.read_text().splitlines() if path.exists() else []
    rows = [line for line in lines if line.strip() and _key(json.loads(line)) != _key(row)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in [*rows, json.dumps(row)]))
    return True
