"""``medlit doctor --self-test``: five questions answered end to end, scored against labels.

The questions are PubMedQA expert-labelled ones whose articles are in the sample corpus that
ships with medlit (``self_test.json``, their labels: yes, no, uncertain for "maybe"). Each is
asked through the real assistant with the user's LLM and embedder, over that corpus alone, in a
throw-away home (the user's caches and corpus are not touched): a right verdict and a citation
of the question's own article are what a working set-up gives.
"""

from __future__ import annotations

import json
import tempfile
import time
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlit.doctor.checks import DoctorItem
from medlit.errors import MedlitError

if TYPE_CHECKING:
    from medlit.config import Settings

__all__ = ["load_questions", "run_self_test"]

#: Right verdicts (of five) below which the self-test warns.
_RIGHT_ENOUGH = 3


def load_questions() -> list[dict[str, Any]]:
    """The self-test's questions: ``pmid``, ``question`` and ``label``."""
    data = json.loads(files("medlit.doctor").joinpath("self_test.json").read_text())
    questions: list[dict[str, Any]] = data["questions"]
    return questions


def _sample_corpus() -> Path:
    return Path(str(files("medlit.sources").joinpath("sample", "pubmedqa-sample.xml.gz")))


async def run_self_test(settings: Settings) -> list[DoctorItem]:
    """One line per question, then the score."""
    from medlit.assistant import Assistant
    from medlit.sources.local import LocalCorpus

    questions = load_questions()
    items: list[DoctorItem] = []
    right = cited = 0
    with tempfile.TemporaryDirectory(prefix="medlit-doctor-") as home:
        trial = settings.model_copy(update={"home": Path(home), "database_url": None}, deep=True)
        trial.local.enabled = True
        with LocalCorpus.from_settings(trial) as corpus:
            corpus.add_file(_sample_corpus())
        async with Assistant(trial) as assistant:
            for number, case in enumerate(questions, 1):
                started = time.monotonic()
                try:
                    result = await assistant.ask(case["question"], sources="local", use_cache=False)
                except MedlitError as exc:
                    items.append(_failed(number, case, exc))
                    continue
                verdict = result.verdict or "none"
                ok_verdict = verdict == case["label"]
                ok_cited = any(c.pmid == case["pmid"] for c in result.citations)
                right += ok_verdict
                cited += ok_cited
                items.append(
                    DoctorItem(
                        area="self-test",
                        name=f"question {number}",
                        status="ok" if ok_verdict and ok_cited else "warn",
                        needed=False,
                        detail=f"{case['question']} verdict {verdict} (label {case['label']}), "
                        f"{'cites' if ok_cited else 'does not cite'} PMID {case['pmid']}; "
                        f"{result.mode}, {time.monotonic() - started:.1f} s",
                    )
                )
    total = len(questions)
    good = right >= _RIGHT_ENOUGH and cited == total
    items.append(
        DoctorItem(
            area="self-test",
            name="score",
            status="ok" if good else "warn",
            needed=False,
            detail=f"{right}/{total} verdicts right, {cited}/{total} cite their article",
            fix="" if good else "a larger model answers better (docs/configuration.md: LLM)",
        )
    )
    return items


def _failed(number: int, case: dict[str, Any], exc: MedlitError) -> DoctorItem:
    return DoctorItem(
        area="self-test",
        name=f"question {number}",
        status="fail",
        needed=True,
        detail=f"{case['question']} failed: {exc}",
        fix="fix the items above first",
    )
