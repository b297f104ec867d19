"""A corpus about aspirin after stroke and a responder for the fake LLM server that answers the
research prompts the way a model would: from what the prompt actually contains.

* ``plan``: the sub-questions of :data:`PLAN` (or of ``ResearchResponder.plan``).
* ``extract``: the claims :data:`CLAIMS` holds for the article whose PMID the prompt names,
  quoting the article's real text, plus a fabricated quote and a wrong PMID for two articles
  (which the researcher must drop); a follow-up question for the aspirin-resistance article.
* ``cross-reference``: reads the numbered claims; claims of :data:`NEGATIVE` articles oppose the
  others (a conflict), the rest merge into one fact citing all of them.
* ``summary``/``section``/``expand``: prose built from the facts and reference numbers in the
  prompt, long enough for ``min_section_words``, with one invented citation ([42], PMID
  99999999) that the synthesizer must strip.

``ResearchResponder.fail`` names steps to answer with HTTP 500 (failure injection);
``delay_pmids`` makes the extraction of some articles slow, ``delay_steps`` every reply of a
step (a slow model writing the report); ``hold_pmids`` holds their replies
until :meth:`ResearchResponder.release` (to kill a process mid-job: it is certain to be waiting,
however long the kill takes to come on a loaded machine).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from medlit.types import AbstractSection, Article
from tests.fakes.llm_server import Reply

__all__ = [
    "ARTICLES",
    "CLAIMS",
    "NEGATIVE",
    "PLAN",
    "ResearchResponder",
    "numbered_lines",
    "step_of",
]


def _article(pmid: str, title: str, pub_type: str, year: int, results: str, conclusion: str,
             doi: str | None = None) -> Article:  # fmt: skip
    return Article(
        pmid=pmid,
        doi=doi,
        title=title,
        abstract=[
            AbstractSection(label="RESULTS", category="RESULTS", text=results),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
        authors=["Smith J"],
        journal="Journal of Stroke Evidence",
        pub_date=f"{year} Jan",
        year=year,
        publication_types=["Journal Article", pub_type],
        language="eng",
    )


ARTICLES = [
    _article("40000001", "Aspirin for secondary prevention of ischaemic stroke: a randomised "
             "controlled trial", "Randomized Controlled Trial", 2019,
             "Aspirin reduced recurrent ischaemic stroke by 22% (HR 0.78, 95% CI 0.66-0.92).",
             "Aspirin reduces recurrent ischaemic stroke after a first event.",
             doi="10.5555/stroke.1"),
    _article("40000002", "Aspirin and recurrent ischaemic stroke: a meta-analysis of trials",
             "Meta-Analysis", 2021,
             "Across 12 trials aspirin reduced recurrent ischaemic stroke (RR 0.80, 95% CI "
             "0.72-0.89).", "Aspirin lowers the risk of recurrent ischaemic stroke."),
    _article("40000003", "Aspirin use and recurrent ischaemic stroke in a national cohort",
             "Observational Study", 2017,
             "Aspirin users had fewer recurrent ischaemic strokes (adjusted HR 0.85).",
             "Aspirin use was associated with less recurrent ischaemic stroke."),
    _article("40000004", "Aspirin and major bleeding after stroke: a cohort study",
             "Observational Study", 2018,
             "Aspirin increased major bleeding (HR 1.60, 95% CI 1.30-2.00).",
             "Aspirin carries a higher risk of major bleeding."),
    _article("40000005", "Low-dose aspirin and major bleeding after stroke: a randomised trial",
             "Randomized Controlled Trial", 2020,
             "Low-dose aspirin did not increase major bleeding (HR 1.05, 95% CI 0.85-1.30).",
             "Low-dose aspirin was not associated with more major bleeding."),
    _article("40000006", "Aspirin resistance in survivors of stroke: a cross-sectional study",
             "Cross-Sectional Studies", 2016,
             "Aspirin resistance was found in 28% of stroke survivors.",
             "Aspirin resistance was associated with recurrent events."),
    _article("40000007", "Aspirin resistance and recurrent stroke: a prospective cohort",
             "Cohort Studies", 2022,
             "Aspirin resistance was associated with a higher risk of recurrent stroke (HR 1.90).",
             "Testing for aspirin resistance may identify patients at risk."),
]  # fmt: skip
BY_PMID = {a.pmid: a for a in ARTICLES}

PLAN: list[dict[str, Any]] = [
    {"text": "Does aspirin reduce recurrent ischaemic stroke?", "priority": 1,
     "search_query": "aspirin recurrent ischaemic stroke", "rationale": "efficacy"},
    {"text": "Does aspirin increase major bleeding after stroke?", "priority": 2,
     "search_query": "aspirin major bleeding", "rationale": "harm"},
    {"text": "How common is aspirin resistance in stroke survivors?", "priority": 3,
     "search_query": "aspirin resistance survivors", "rationale": "who does not respond"},
    # A rewording of the first: the researcher must skip it as a visited topic.
    {"text": "Does aspirin lower the risk of recurrent ischaemic stroke?", "priority": 4,
     "search_query": "aspirin recurrent ischaemic stroke risk", "rationale": "duplicate"},
]  # fmt: skip

#: pmid -> (claim, verbatim quote, numbers)
CLAIMS: dict[str, tuple[str, str, list[str]]] = {
    "40000001": ("Aspirin reduced recurrent ischaemic stroke by 22%.",
                 "Aspirin reduced recurrent ischaemic stroke by 22%",
                 ["HR 0.78", "95% CI 0.66-0.92"]),
    "40000002": ("Pooled trials show aspirin reduces recurrent ischaemic stroke.",
                 "aspirin reduced recurrent ischaemic stroke (RR 0.80", ["RR 0.80"]),
    "40000003": ("Aspirin users had fewer recurrent strokes.",
                 "Aspirin users had fewer recurrent ischaemic strokes", ["adjusted HR 0.85"]),
    "40000004": ("Aspirin increased major bleeding.", "Aspirin increased major bleeding",
                 ["HR 1.60"]),
    "40000005": ("Low-dose aspirin did not increase major bleeding.",
                 "Low-dose aspirin did not increase major bleeding", ["HR 1.05"]),
    "40000006": ("About 28% of stroke survivors have aspirin resistance.",
                 "Aspirin resistance was found in 28% of stroke survivors", ["28%"]),
    "40000007": ("Aspirin resistance predicts recurrent stroke.",
                 "Aspirin resistance was associated with a higher risk of recurrent stroke",
                 ["HR 1.90"]),
}  # fmt: skip
NEGATIVE = {"40000005"}
FOLLOW_UP = {
    "40000006": "Is aspirin resistance associated with recurrent stroke?",
    "40000007": "Does testing for aspirin resistance improve outcomes after stroke?",
}


def step_of(request_json: dict[str, Any]) -> str:
    """The research step of a request: the first line of its system prompt."""
    messages = request_json.get("messages", [])
    system = messages[0]["content"] if messages else ""
    first = system.splitlines()[0] if system else ""
    return first.removeprefix("medlit research: ").strip()


def _user(request_json: dict[str, Any]) -> str:
    return str(request_json["messages"][-1]["content"])


@dataclass
class ResearchResponder:
    """Callable responder for ``FakeLLMServer.responder``."""

    plan: list[dict[str, Any]] = field(default_factory=lambda: list(PLAN))
    fail: set[str] = field(default_factory=set)
    fabricate: bool = True
    delay_pmids: dict[str, float] = field(default_factory=dict)
    delay_steps: dict[str, float] = field(default_factory=dict)
    hold_pmids: set[str] = field(default_factory=set)
    gate: threading.Event = field(default_factory=threading.Event)
    seen: list[str] = field(default_factory=list)
    #: Steps (or "section:<words of its topic>") answered with text that is no JSON, the
    #: repair request too: a weak model's malformed reply.
    malformed: set[str] = field(default_factory=set)

    def __call__(self, request_json: dict[str, Any]) -> str | Reply:
        step = step_of(request_json)
        self.seen.append(step)
        if step in self.fail:
            return Reply.server_error(message=f"injected failure in {step}")
        if self._malformed(step, request_json):
            return '{"heading": "Aspirin", "content": "The evidence shows'  # cut off
        handler = getattr(self, "_" + step.replace("-", "_"), None)
        if handler is None:
            return Reply.error(400, f"unexpected prompt: {step!r}")
        text = json.dumps(handler(request_json))
        pmid = re.search(r"Article PMID: (\d+)", _user(request_json)) if step == "extract" else None
        if pmid and pmid.group(1) in self.hold_pmids:
            return Reply.held(self.gate, text)
        if pmid and pmid.group(1) in self.delay_pmids:
            return Reply.slow(self.delay_pmids[pmid.group(1)], text)
        if step in self.delay_steps:
            return Reply.slow(self.delay_steps[step], text)
        return text

    def _malformed(self, step: str, request_json: dict[str, Any]) -> bool:
        if step in self.malformed:
            return True
        text = " ".join(str(m.get("content", "")) for m in request_json.get("messages", []))
        return any(
            kind.startswith(f"{step}:") and f"Topic: {kind.split(':', 1)[1]}" in text
            for kind in self.malformed
        )

    def hold(self, *pmids: str) -> None:
        """Hold the extraction replies of these articles until :meth:`release`."""
        self.gate.clear()
        self.hold_pmids = set(pmids)

    def release(self) -> None:
        """Stop holding: replies held now are sent (if their client is still there), later
        requests for those articles are answered at once."""
        self.hold_pmids = set()
        self.gate.set()

    def _plan(self, request_json: dict[str, Any]) -> dict[str, Any]:
        return {"sub_questions": self.plan}

    def _extract(self, request_json: dict[str, Any]) -> dict[str, Any]:
        match = re.search(r"Article PMID: (\d+)", _user(request_json))
        pmid = match.group(1) if match else ""
        if pmid not in CLAIMS:
            return {"claims": []}
        claim, quote, numbers = CLAIMS[pmid]
        claims: list[dict[str, Any]] = [{
            "claim": claim, "quote": quote, "pmid": pmid, "numbers": numbers,
            "triggers_recursion": pmid in FOLLOW_UP, "follow_up_question": FOLLOW_UP.get(pmid),
        }]  # fmt: skip
        if self.fabricate and pmid == "40000002":
            fabricated = "aspirin cured every single stroke in the trial"
            claims.append({"claim": "Aspirin cured every stroke.", "quote": fabricated,
                           "pmid": pmid, "numbers": []})  # fmt: skip
        if self.fabricate and pmid == "40000003":
            claims.append({"claim": "Aspirin halves mortality.", "quote": quote,
                           "pmid": "99999999", "numbers": []})  # fmt: skip
        return {"claims": claims}

    def _cross_reference(self, request_json: dict[str, Any]) -> dict[str, Any]:
        claims = re.findall(r"^\[(\d+)\] \(PMID (\d+)\) (.*?) \|", _user(request_json), re.M)
        agree = [int(n) for n, pmid, _ in claims if pmid not in NEGATIVE]
        oppose = [(int(n), text) for n, pmid, text in claims if pmid in NEGATIVE]
        if oppose and agree:
            first = next(text for n, _, text in claims if int(n) == agree[0])
            return {"facts": [], "conflicts": [{
                "topic": "Major bleeding with aspirin",
                "positions": [{"claim": first, "claim_ids": agree},
                              {"claim": oppose[0][1], "claim_ids": [n for n, _ in oppose]}],
                "note": "Dose differs between the studies.",
            }]}  # fmt: skip
        return {"facts": [{"statement": claims[0][2] if claims else "", "claim_ids": agree,
                           "confidence": "high"}], "conflicts": []}  # fmt: skip

    def _summary(self, request_json: dict[str, Any]) -> dict[str, Any]:
        return {
            "title": "Aspirin after ischaemic stroke",
            "executive_summary": "Aspirin reduces recurrent ischaemic stroke [1][2], while its "
            "bleeding risk is disputed [4]. An invented source [42] (PMID 99999999) is cited.",
        }

    def _section(self, request_json: dict[str, Any], words: int | None = None) -> dict[str, Any]:
        system = request_json["messages"][0]["content"]
        minimum = int(re.search(r"at least (\d+) words", system).group(1))  # type: ignore[union-attr]
        user = _user(request_json)
        topic = re.search(r"Topic: (.*)", user).group(1)  # type: ignore[union-attr]
        # Each fact or side of a conflict as a sentence citing its references, as a careful
        # model writes it: "Aspirin users had fewer recurrent strokes (HR 0.85) [1][2]."
        lines = re.findall(
            r"^\s*- \((?!conflict)[\w ]+\) (.*?)(?: \(numbers: ([^)]*)\))? ((?:\[\d+\])*)$",
            user,
            re.M,
        )
        body = " ".join(
            f"{text.rstrip('. ')}{f' ({numbers})' if numbers else ''} {cites}.".replace(" .", ".")
            for text, numbers, cites in lines
        )
        body += " See also [42]."
        refs = re.findall(r"\[(\d+)\]", body.removesuffix(" See also [42]."))
        cite = f" [{refs[0]}]" if refs else ""
        filler = (" The studies differ in design, population and follow-up, so the size of the "
                  f"effect should be read with care{cite}.")  # fmt: skip
        target = words if words is not None else minimum
        while len(re.findall(r"[A-Za-z0-9][\w'-]*", re.sub(r"\[\d+\]", " ", body))) < target:
            body += filler
        return {"heading": topic.rstrip("?"), "content": body}

    def _evidence_row(self, request_json: dict[str, Any]) -> dict[str, Any]:
        """Cells quoting the article's own sentences, as a careful model fills them; for the
        meta-analysis also a comparator whose quote the abstract does not hold (to drop)."""
        match = re.search(r"Article PMID: (\d+)", _user(request_json))
        article = BY_PMID.get(match.group(1) if match else "")
        if article is None:
            return {}
        results, conclusion = (section.text for section in article.abstract)
        subject = article.title.split(":")[0]
        row: dict[str, Any] = {
            "intervention": {"text": "aspirin", "quote": conclusion},
            "outcomes": {"text": subject, "quote": article.title},
            "effect": {"text": results.rstrip("."), "quote": results},
            "n": None,
        }
        if self.fabricate and article.pmid == "40000002":
            row["comparator"] = {"text": "placebo", "quote": "compared with placebo in 9 trials"}
        return row

    def _expand(self, request_json: dict[str, Any]) -> dict[str, Any]:
        return self._section(request_json)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


_NUMBERED = re.compile(r"^\[(\d+)\] \(([^)]*)\) (.*)$", re.M)


def numbered_lines(user: str) -> list[tuple[int, str, str]]:
    """The numbered sentences of a prompt: (number, passage, sentence)."""
    return [(int(n), passage, text) for n, passage, text in _NUMBERED.findall(user)]


def _abstract_lines(user: str) -> dict[str, str]:
    """The abstract's sentences of a prompt by label ("RESULTS" -> its sentences)."""
    lines: dict[str, str] = {}
    for _, label, text in numbered_lines(user):
        if label.isupper():
            lines[label] = f"{lines.get(label, '')} {text}".strip()
    return lines


def _number_of(user: str, sentence: str) -> int | None:
    return next((n for n, _, text in numbered_lines(user) if text == sentence), None)


@dataclass
class CorpusResponder(ResearchResponder):
    """The research prompts answered for any question over any corpus, as a careful model
    would: sub-questions keeping the question's words, each article's conclusion as its
    claim (quoted), evidence-table cells quoting the abstract's own sentences."""

    def _plan(self, request_json: dict[str, Any]) -> dict[str, Any]:
        question = _user(request_json).removeprefix("Research question: ").strip().rstrip("?")
        return {"sub_questions": [
            {"text": f"What do studies report on: {question}?", "priority": 1,
             "rationale": "the evidence"},
            {"text": f"What outcomes were measured for: {question}?", "priority": 2,
             "rationale": "outcomes"},
            {"text": f"In which patients was this studied: {question}?", "priority": 3,
             "rationale": "population"},
        ]}  # fmt: skip

    def _extract(self, request_json: dict[str, Any]) -> dict[str, Any]:
        user = _user(request_json)
        match = re.search(r"Article PMID: (\d+)", user)
        lines = _abstract_lines(user)
        text = lines.get("CONCLUSIONS") or lines.get("CONCLUSION") or ""
        if not text or match is None:
            return {"claims": []}
        sentence = _SENTENCE_END.split(text)[0]
        number = _number_of(user, sentence)
        if number is None:  # as a model that writes quotes does
            return {"claims": [{"claim": sentence, "quote": sentence, "pmid": match.group(1),
                                "numbers": []}]}  # fmt: skip
        return {"claims": [{"sentences": [number], "claim": sentence, "direction": "unclear",
                            "numbers": []}]}  # fmt: skip

    def _evidence_row(self, request_json: dict[str, Any]) -> dict[str, Any]:
        user = _user(request_json)
        lines = _abstract_lines(user)
        sentences = [s for text in lines.values() for s in _SENTENCE_END.split(text)]
        counted = next((s for s in sentences if re.search(r"\b\d+ (?:patients|subjects|"
                        r"participants|women|men|children|adults)\b", s)), None)  # fmt: skip
        results = _SENTENCE_END.split(lines.get("RESULTS", ""))
        row: dict[str, Any] = {"n": None}
        if counted:
            row["population"] = _pointed(user, counted)
        effect = _effect_on_question(user, results)
        if effect:
            row[_result_column(request_json)] = _pointed(user, effect)
        return row


def _result_column(request_json: dict[str, Any]) -> str:
    """The column of the row prompt a result sentence goes in (the prompt's first of effect,
    measure, sensitivity, estimate, answer)."""
    system = str(request_json["messages"][0]["content"])
    columns = re.search(r"Columns: (.*?)\.\s*\nReply", system, re.S)
    named = re.findall(r"(\w+): ", columns.group(1)) if columns else []
    wanted = ("effect", "measure", "sensitivity", "estimate", "answer")
    return next((c for c in wanted if c in named), "effect")


def _pointed(user: str, sentence: str) -> dict[str, Any]:
    """A cell pointing at ``sentence`` by its number (quoted when it is not numbered)."""
    number = _number_of(user, sentence)
    if number is None:
        return {"text": sentence, "quote": sentence}
    return {"sentences": [number], "text": sentence}


_WORD = re.compile(r"[a-z]{3,}")


def _effect_on_question(user: str, results: list[str]) -> str | None:
    """The abstract's first result sentence; with full-text passages shown, the result
    sentence with a number (the abstract's or the Results paragraphs') sharing the most words
    with what the research question asks beyond the article's title, as a careful model
    answers the question asked (a subgroup the abstract does not report)."""
    first = results[0] if results and results[0] else None
    lines = numbered_lines(user)
    body = [text for _, passage, text in lines if passage == "full text, Results"]
    if not body:
        return first
    title = next((text for _, passage, text in lines if passage == "title"), "")
    question = set(_WORD.findall(user.split("\n", 1)[0].lower()))
    question -= set(_WORD.findall(title.lower()))
    numbered = [s for s in [*results, *body] if re.search(r"\d", s)]
    if not numbered:
        return first
    return max(numbered, key=lambda s: len(question & set(_WORD.findall(s.lower()))))
