"""A responder for :class:`tests.fakes.llm_server.FakeLLMServer` that answers like a careful model.

It reads the prompt medlit sends and answers each ``ask`` task the way a well-behaved model
would, from what the prompt contains and nothing else:

- ``answer``: cites the first evidence blocks' PMIDs (taken from the ``[PMID:n]`` headers of
  the prompt), quoting each block's last sentence; when the system rules ask for a verdict line
  it ends with one (``verdict_for(pmids)`` decides it, default ``Uncertain``);
- ``plan_query`` (JSON): the follow-up joined to the last question of the conversation summary;
- ``summarize_memory``: the questions of the new turns, in one line;
- ``translate_question`` (JSON): the English of the question from ``translations`` (a question
  it has none for comes back as it was, as a model that could not translate it would);
- the verdict call: ``verdict_for`` of the PMIDs the written answer it is shown still cites.

``invent=True`` makes it also cite a PMID that is not in the evidence, to test that such a
citation is stripped; ``swap`` makes it name another thing than its evidence does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from medlit.agent.prompt import VERDICT_CUE

__all__ = ["EvidenceResponder"]

_HEADER = re.compile(r"^\[PMID:(\d+)\][^\n]*$", re.M)


class EvidenceResponder:
    """Callable responder (``server.responder = EvidenceResponder()``).

    Args:
        verdict_for: the verdict word for the cited PMIDs (``Yes``, ``No``, ``Uncertain``).
        cite: evidence blocks cited per answer at most.
        invent: also cite a PMID absent from the evidence (``99999999``).
        drop_follow_up: rewrite a follow-up as the previous question alone (what a small model
            did with "and in children?").
        swap: ``(written, said)``: write ``said`` where the evidence says ``written`` (what a
            small model did with a vitamin C trial, asked about vitamin D).
        point: end with a sentence that only cites the first article again ("This is
            supported by [PMID:1]."), as Qwen2.5 1.5B did.
        translations: question -> its English, for ``translate_question``.
    """

    def __init__(
        self,
        verdict_for: Callable[[Sequence[str]], str] | None = None,
        *,
        cite: int = 3,
        invent: bool = False,
        drop_follow_up: bool = False,
        swap: tuple[str, str] | None = None,
        point: bool = False,
        translations: dict[str, str] | None = None,
    ) -> None:
        self.verdict_for = verdict_for or (lambda pmids: "Uncertain")
        self.cite = cite
        self.invent = invent
        self.drop_follow_up = drop_follow_up
        self.swap = swap
        self.point = point
        self.translations = dict(translations or {})
        self.tasks: list[str] = []

    def __call__(self, request: dict[str, Any]) -> str:
        messages = request.get("messages", [])
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        if "Rewrite the user's latest question" in system:
            self.tasks.append("plan_query")
            return self._plan(user)
        if "Translate the user's biomedical question into English" in system:
            self.tasks.append("translate_question")
            return json.dumps({"english": self.translations.get(user.strip(), user.strip())})
        if "short memory of a conversation" in system:
            self.tasks.append("summarize_memory")
            questions = re.findall(r"- Q: (.+)", user)
            return "The user asked: " + "; ".join(questions)
        if "What does the written answer conclude" in user:
            # The verdict call: the verdict for what the written answer still cites.
            self.tasks.append("verdict")
            word = self.verdict_for(re.findall(r"\[PMID:(\d+)\]", user))
            return json.dumps({"verdict": word.lower()}) if '{"verdict"' in user else word
        self.tasks.append("answer")
        return self._answer(system, user)

    def _plan(self, user: str) -> str:
        recent = re.search(r"Recent questions: (.+)", user)
        latest = re.search(r"Latest question: (.+)", user)
        follow = (latest.group(1) if latest else "").strip().rstrip("?")
        last = recent.group(1).split("; ")[-1].strip().rstrip("?") if recent else ""
        follow = re.sub(r"^(and|but|what about|how about)\s+", "", follow, flags=re.I)
        standalone = f"{last}?" if self.drop_follow_up else f"{last} {follow}?".strip()
        words = [w for w in re.findall(r"[A-Za-z0-9-]{4,}", standalone)][:6]
        return json.dumps(
            {
                "standalone_question": standalone,
                "pubmed_query": " AND ".join(words),
                "focus": None,
            }
        )

    def _answer(self, system: str, user: str) -> str:
        evidence = user.split("Evidence:", 1)[-1]
        evidence = re.split(r"\n\n(?:Question|Conversation so far)", evidence)[0]
        blocks = re.split(r"\n\n(?=\[PMID:)", evidence)
        cited: list[tuple[str, str]] = []
        for block in blocks:
            header = _HEADER.search(block)
            if header is None:
                continue
            body = block[header.end() :].strip().splitlines()
            last = body[-1] if body else header.group(0)
            sentence = re.split(r"(?<=[.!?])\s+", last.split(": ", 1)[-1])[-1].strip()
            cited.append((header.group(1), sentence.split("\n\nQuestion:")[0]))
            if len(cited) >= self.cite:
                break
        if not cited:
            return "Uncertain\nThe evidence given does not address the question."
        lines = []
        for pmid, sentence in cited:
            if self.swap is not None:
                sentence = re.sub(re.escape(self.swap[0]), self.swap[1], sentence, flags=re.I)
            lines.append(f"{sentence.rstrip('.')} [PMID:{pmid}].")
        if self.point:
            lines.append(f"This is supported by [PMID:{cited[0][0]}].")
        if self.invent:
            lines.append("A landmark trial settled this long ago [PMID:99999999].")
        if (
            VERDICT_CUE in system or VERDICT_CUE in user
        ):  # reasoning first, the verdict on the last line
            lines.append(f"Verdict: {self.verdict_for([p for p, _ in cited])}")
        return "\n".join(lines)
