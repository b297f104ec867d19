"""``medlit research`` interrupted as a user interrupts it: a real SIGINT (Ctrl-C) or SIGTERM
sent to the process while the job waits on the fake LLM. The job is left INTERRUPTED, the
command says how to resume it and exits 130; ``medlit research resume`` then completes it
without asking anything twice (no search, no LLM call already answered) and with no search-log
entry twice."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest

from medlit.config import Settings
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.runtime import open_job_store
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    answered,
    env_for,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
    steps,
)

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]

pytestmark = pytest.mark.slow  # two medlit processes each: about 20 s of CPU


def _environment(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(env_for(settings))
    env["MEDLIT_RESEARCH_CONCURRENCY"] = "1"  # q1, then q2: where the job waits is known
    env["COLUMNS"] = "200"
    return env


#: ``python -m medlit`` with Ctrl-C's own handler: a job a shell started in the background
#: inherits SIGINT ignored (POSIX), and so would the CLI the test interrupts.
_WITH_CTRL_C = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'medlit'; runpy.run_module('medlit', run_name='__main__', alter_sys=True)"
)


def _medlit(settings: Settings, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WITH_CTRL_C, *args],
        env=_environment(settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _job(settings: Settings, job_id: str) -> ResearchJob:
    jobs, db = open_job_store(settings)
    try:
        return jobs.get(job_id)
    finally:
        db.close()


def _paid(server: FakeLLMServer) -> Counter[tuple[str, str, str]]:
    """(step, PMID, sub-question) of each answered request: an article is read once for each
    sub-question that finds it (several may: they share the question's subject and outcome)."""
    out: Counter[tuple[str, str, str]] = Counter()
    for (step, pmid), record in zip(_each_answered(server), server.completions, strict=True):
        asked = re.search(r"Sub-question: ([^\n]*)", str(record.json))
        out[(step, pmid, asked.group(1) if asked and step == "extract" else "")] += 1
    return out


def _each_answered(server: FakeLLMServer) -> list[tuple[str, str]]:
    """:func:`answered`'s (step, PMID) of each request, in order."""
    return [next(iter(answered(_One(record)))) for record in server.completions]


class _One:
    """One request as a server's history, for :func:`answered`."""

    def __init__(self, record: object) -> None:
        self.completions = [record]


def _held_extraction(server: FakeLLMServer) -> tuple[str, str, str]:
    """The extraction the fake held when the signal came (its last request, unanswered)."""
    return list(_paid(server))[-1]


def _entries(job: ResearchJob) -> Counter[tuple[str, str, str, str]]:
    return Counter((e.sub_question_id, e.source, e.query, e.step) for e in job.search_log)


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_job_is_interrupted_and_resumes_paying_nothing_twice(
    rsettings: Settings,
    responder: ResearchResponder,
    llm_server: FakeLLMServer,
    eutils: FakeEutils,
    sent: signal.Signals,
) -> None:
    # q2's second article is held: the signal comes after q2 searched and read one of its two
    # articles, while the job waits for the model on the other.
    responder.hold("40000004")
    proc = _medlit(rsettings, "research", "run", QUESTION, "--depth", "quick")
    try:
        deadline = time.monotonic() + 180
        while not any("PMID: 40000004" in str(r.json) for r in llm_server.completions):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the job never reached q2's second article"
            time.sleep(0.05)
        proc.send_signal(sent)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert proc.returncode == 130, err
    found = re.search(r"medlit research resume (\S+)", err)
    assert found, err
    job_id = found.group(1)
    assert "interrupted" in err and "Traceback" not in err

    stopped = _job(rsettings, job_id)
    assert stopped.status is JobStatus.INTERRUPTED
    assert stopped.failed_stage is JobStatus.EXECUTING  # where it stopped
    assert JobStatus.PLANNING in stopped.completed_stages
    assert not [e for e, n in _entries(stopped).items() if n > 1]
    listed = _medlit(rsettings, "research", "list")
    listing, _ = listed.communicate(timeout=120)
    assert re.search(rf"{job_id[:8]}\S*[\s│|]+INTERRUPTED", listing), listing

    held = _held_extraction(llm_server)  # asked when the signal came: never answered
    answered_before = _paid(llm_server) - Counter({held: 1})
    searched_before = Counter(r.params.get("term") for r in eutils.requests("esearch"))
    assert steps(llm_server)["plan"] == 1 and searched_before
    llm_server.clear()
    eutils.reset()
    responder.release()

    again = _medlit(rsettings, "research", "resume", job_id, "--json")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    done = json.loads(out)
    assert done["status"] == "COMPLETED", done.get("error")
    job = _job(rsettings, job_id)
    # The search log: each query once, though the job ran twice.
    duplicated = [entry for entry, n in _entries(job).items() if n > 1]
    assert not duplicated, duplicated
    assert _entries(stopped) <= _entries(job)  # what the first run logged is kept, once
    # Nothing paid for before the signal was paid for again: no plan, no extraction that had
    # been answered, no search that had been sent.
    after = _paid(llm_server)
    assert not set(answered_before) & set(after), set(answered_before) & set(after)
    assert steps(llm_server)["plan"] == 0
    assert after[held] == 1  # the held one, asked again: it was never paid
    searched_after = Counter(r.params.get("term") for r in eutils.requests("esearch"))
    assert not set(searched_before) & set(searched_after), searched_after
    assert job.resumed == 1 and job.findings
    kept = [(f.sub_question_id, f.claim, f.quote) for f in job.findings]
    assert len(kept) == len(set(kept))  # no finding made twice


async def test_interrupted_between_a_search_and_its_step_the_resume_does_not_search_again(
    rsettings: Settings,
    llm_server: FakeLLMServer,
    eutils: FakeEutils,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The interruption lands while q1's search results go into the evidence cache: logged,
    but its step ("N found") not saved yet. The resume takes them from the cache."""
    from medlit.cache.evidence import EvidenceCache
    from medlit.research.runtime import open_orchestrator

    rsettings.research.concurrency = 1
    entered, gate = threading.Event(), threading.Event()
    real_add = EvidenceCache.add_articles

    def add_once_released(self: EvidenceCache, *args: Any, **kwargs: Any) -> Any:
        if not entered.is_set():  # q1's results, the job's first: held until released
            entered.set()
            gate.wait(120)
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(EvidenceCache, "add_articles", add_once_released)
    async with open_orchestrator(rsettings) as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick")
        run = asyncio.create_task(orchestrator.run(job))
        assert await asyncio.to_thread(entered.wait, 120), "q1 never searched"
        run.cancel()  # what SIGINT (asyncio's handler) does to `medlit research`
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await run
        stopped = orchestrator.jobs.get(job.id)
    assert stopped.status is JobStatus.INTERRUPTED
    q1 = next(q for q in stopped.plan.sub_questions if q.id == "q1")  # type: ignore[union-attr]
    assert q1.status.value == "IN_PROGRESS" and not q1.found  # its step was not saved
    logged = _entries(stopped)
    assert logged and {key[0] for key in logged} == {"q1"}
    searched_before = Counter(r.params.get("term") for r in eutils.requests("esearch"))
    eutils.reset()
    llm_server.clear()

    async with open_orchestrator(rsettings) as orchestrator:
        done = await orchestrator.resume(job.id)
    assert done.status is JobStatus.COMPLETED, done.error
    assert not [entry for entry, n in _entries(done).items() if n > 1]
    assert logged <= _entries(done)
    searched_after = Counter(r.params.get("term") for r in eutils.requests("esearch"))
    assert searched_after and not set(searched_before) & set(searched_after), searched_after
    assert steps(llm_server)["plan"] == 0
    assert len(done.findings) == 6
