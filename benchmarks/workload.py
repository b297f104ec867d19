"""Replay a stream of questions through ``medlit ask``, with and without the cache.

::

    python benchmarks/workload.py --questions ../shared/data/pubmedqa/pqal_dev.json

The questions file is PubMedQA-style JSON keyed by PMID (``QUESTION``, ``MESHES``,
``final_decision``). The stream mixes, deterministically:

- **new** questions (each record's own question), and, as many again, questions related to an
  earlier one:
- **repeat**: the same question again;
- **reworded**: the same question in other words (a template or a word-order change that keeps
  its meaning);
- **related**: a different question on the same topic (built from the record's MeSH terms), which
  must not be served from tier 1 but may reuse tier-2 evidence.

Everything runs in-process against real HTTP fakes on loopback: the fake E-utilities server
serves the corpus (``--xml``, default: the ``*_pubmed.xml`` beside the questions file), and the
fake OpenAI-compatible server answers from the evidence in the prompt (its verdict is the
cited article's ``final_decision``). The real assistant, store, embedder and caches do the work.

``--verify-url URL --verify-model NAME`` adds a third run with the verified band of tier 1
(:mod:`medlit.cache.verify`): the ``verify_cache_hit`` task alone is routed to that real
OpenAI-compatible server (answers still come from the fake), with ``--verify-threshold`` or the
threshold shipped for the model. Its verification calls are counted in its LLM calls.

A **wrong hit** is a tier-1 hit whose cached question came from another record, or any hit for a
related (different) question. Output: a table per run, then the last line
``pubmed_calls_saved=0.xx llm_calls_saved=0.xx wrong_hits=N hit_p95_ms=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402
from tests.fakes.evidence_llm import EvidenceResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402

from medlit.agent.deps import AgentDeps  # noqa: E402
from medlit.assistant import AskResult, Assistant  # noqa: E402
from medlit.config import LLMTaskRoute, Settings  # noqa: E402
from medlit.embeddings import Embedder, load_embedder  # noqa: E402
from medlit.storage.sqlite import SqliteStore  # noqa: E402

_GENERIC_MESH = {
    "humans",
    "male",
    "female",
    "adult",
    "aged",
    "middle aged",
    "young adult",
    "adolescent",
    "child",
    "child, preschool",
    "infant",
    "infant, newborn",
    "aged, 80 and over",
    "animals",
    "retrospective studies",
    "prospective studies",
    "follow-up studies",
    "cohort studies",
    "risk factors",
    "treatment outcome",
    "time factors",
    "questionnaires",
    "pregnancy",
    "cross-sectional studies",
    "case-control studies",
    "logistic models",
    "prognosis",
    "reproducibility of results",
    "sensitivity and specificity",
    "incidence",
    "prevalence",
    "severity of illness index",
    "statistics, nonparametric",
    "multivariate analysis",
    "surveys and questionnaires",
    "united states",
    "age factors",
    "sex factors",
}
_TRAILING_PHRASE = re.compile(r"^(.*\S)\s+((?:in|among|for|after|during)\s+[^,;:]+)\?$", re.I)


@dataclass
class Item:
    """One question of the stream."""

    kind: str  # new | repeat | reworded | related
    source: str  # PMID of the record it was made from
    question: str


def reword(question: str, n: int) -> str:
    """The same question in other words (deterministic by ``n``)."""
    q = question.strip()
    lower_first = q[0].lower() + q[1:]
    match = _TRAILING_PHRASE.match(q)
    if n % 3 == 0 and match:
        head, phrase = match.groups()
        return f"{phrase[0].upper()}{phrase[1:]}, {head[0].lower()}{head[1:]}?"
    if n % 3 == 1:
        return f"According to published studies, {lower_first}"
    return f"{q.rstrip('?')}? What does the evidence say?"


def related(record: dict[str, Any]) -> str | None:
    """A different question on the same topic, from the record's specific MeSH terms."""
    terms = [m for m in record.get("MESHES", []) if m.lower() not in _GENERIC_MESH]
    if len(terms) < 2:
        return None
    a, b = (t.split(",")[0] for t in terms[:2])
    return f"What is known about {a.lower()} and {b.lower()}?"


def build_stream(
    records: dict[str, dict[str, Any]], n_new: int, seed: int, related_every: int = 5
) -> list[Item]:
    """``n_new`` new questions, each followed by one question on an earlier record.

    The follow-ups alternate repeats and rewordings; every ``related_every``-th is a related
    (different) question on the earlier record's topic instead.
    """
    rng = random.Random(seed)
    pmids = sorted(records)
    rng.shuffle(pmids)
    chosen = pmids[:n_new]
    stream: list[Item] = []
    for i, pmid in enumerate(chosen):
        stream.append(Item("new", pmid, records[pmid]["QUESTION"]))
        earlier = chosen[rng.randrange(0, i + 1)]
        question = records[earlier]["QUESTION"]
        topic = related(records[earlier])
        if related_every and i % related_every == related_every - 1 and topic:
            stream.append(Item("related", earlier, topic))
        elif i % 2 == 0:
            stream.append(Item("repeat", earlier, question))
        else:
            stream.append(Item("reworded", earlier, reword(question, i // 2)))
    return stream


@dataclass
class RunStats:
    """What one replay of the stream cost."""

    name: str
    pubmed: int = 0
    llm: int = 0
    hits: int = 0
    wrong_hits: int = 0
    admitted: int = 0
    latencies: list[float] = field(default_factory=list)
    hit_latencies: list[float] = field(default_factory=list)
    stops: dict[str, int] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)
    hit_breakdown: list[dict[str, float]] = field(default_factory=list)
    verified_hits: int = 0
    verify: dict[str, int] = field(default_factory=dict)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def replay(
    stream: list[Item],
    records: dict[str, dict[str, Any]],
    settings: Settings,
    embedder: Embedder,
    *,
    use_cache: bool,
    name: str,
) -> RunStats:
    """Ask every question of the stream on a fresh store; count calls, hits and wrong hits."""
    by_question = {r["QUESTION"]: pmid for pmid, r in records.items()}
    stats = RunStats(name)
    store = SqliteStore.open(settings)
    deps = AgentDeps(settings, store, embedder=embedder, owns_store=True)
    async with Assistant(settings, deps=deps) as assistant:
        for item in stream:
            start = time.perf_counter()
            result: AskResult = await assistant.ask(item.question, use_cache=use_cache)
            elapsed = (time.perf_counter() - start) * 1000.0
            stats.latencies.append(elapsed)
            stats.pubmed += result.api_calls.pubmed
            stats.llm += result.api_calls.llm
            stats.admitted += int(result.cache.admitted)
            stats.stops[result.stop_reason] = stats.stops.get(result.stop_reason, 0) + 1
            if result.cache.tier1 == "hit":
                stats.hits += 1
                stats.verified_hits += result.cache.verified_by is not None
                stats.hit_latencies.append(elapsed)
                matched = result.cache.matched_question or ""
                source = by_question.get(matched)
                if source is None:  # cached under a reworded/related form
                    source = next((i.source for i in stream if i.question == matched), None)
                if item.kind == "related" or source != item.source:
                    stats.wrong_hits += 1
                    stats.wrong.append(f"{item.question!r} <- {matched!r}")
                stats.hit_breakdown.append(result.timings_ms)
        deps.answers.flush()
        stats.verify = {
            k.removeprefix("answers.verify."): v
            for k, v in store.counters("answers.verify.").items()
        }
    return stats


def _settings(home: Path, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings = Settings(home=home)
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0  # the fake's limit is off; count, don't wait
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    settings.llm.backoff_base_s = 0.01
    return settings


def _print(stats: RunStats, total: int) -> None:
    print(
        f"{stats.name:<9} questions={total} pubmed_calls={stats.pubmed} llm_calls={stats.llm} "
        f"tier1_hits={stats.hits} wrong_hits={stats.wrong_hits} admitted={stats.admitted} "
        f"p50_ms={_pct(stats.latencies, 0.5):.1f} p95_ms={_pct(stats.latencies, 0.95):.1f} "
        f"hit_p95_ms={_pct(stats.hit_latencies, 0.95):.1f} stops={stats.stops}"
    )
    if stats.verify:
        print(f"  verified hits={stats.verified_hits} verification={stats.verify}")
    for line in stats.wrong:
        print(f"  wrong hit: {line}")
    if stats.hit_breakdown:
        slowest = max(stats.hit_breakdown, key=lambda t: t.get("total", 0.0))
        print(f"  slowest hit (ms by node): {slowest}")


async def main(argv: list[str] | None = None) -> None:
    """Parse arguments, run the stream twice, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True, help="PubMedQA-style JSON.")
    parser.add_argument("--xml", type=Path, default=None, help="Corpus (PubMed XML).")
    parser.add_argument("--new", type=int, default=30, help="New questions (stream is 2x).")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--related-every",
        type=int,
        default=5,
        help="Every Nth follow-up is a related (different) question; the rest repeat/reword.",
    )
    parser.add_argument("--verify-url", default=None, help="Verifier server (OpenAI /v1 URL).")
    parser.add_argument("--verify-model", default=None, help="Verifier model name.")
    parser.add_argument("--verify-threshold", type=float, default=None)
    args = parser.parse_args(argv)

    records: dict[str, dict[str, Any]] = json.loads(args.questions.read_text())
    xml = args.xml or args.questions.with_name(args.questions.stem + "_pubmed.xml")
    stream = build_stream(records, args.new, args.seed, args.related_every)
    kinds = {
        k: sum(1 for i in stream if i.kind == k) for k in ("new", "repeat", "reworded", "related")
    }
    print(f"stream: {len(stream)} questions {kinds}")

    decisions = {pmid: str(r.get("final_decision", "maybe")) for pmid, r in records.items()}
    words = {"yes": "Yes", "no": "No", "maybe": "Uncertain"}

    def verdict_for(pmids: list[str] | Any) -> str:
        return words.get(decisions.get(pmids[0], "maybe"), "Uncertain") if pmids else "Uncertain"

    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeLLMServer() as llm,
    ):
        llm.responder = EvidenceResponder(verdict_for)
        base = _settings(Path(tmp) / "warm", eutils, llm)
        embedder = load_embedder(base)  # shared: the memo spares the second run re-embedding
        cached = await replay(stream, records, base, embedder, use_cache=True, name="cache")
        banded = None
        if args.verify_url and args.verify_model:
            band = _settings(Path(tmp) / "band", eutils, llm)
            band.llm.timeout_s = 600.0  # a busy shared server; the band's own limit is below
            band.llm.tasks = {
                "verify_cache_hit": LLMTaskRoute(
                    base_url=args.verify_url, model=args.verify_model, api_key=SecretStr("local")
                )
            }
            band.cache.verify_band.threshold = args.verify_threshold
            band.cache.verify_band.timeout_s = 600.0
            banded = await replay(stream, records, band, embedder, use_cache=True, name="band")
        cold = _settings(Path(tmp) / "cold", eutils, llm)
        uncached = await replay(stream, records, cold, embedder, use_cache=False, name="no-cache")
    _print(cached, len(stream))
    if banded is not None:
        _print(banded, len(stream))
    _print(uncached, len(stream))
    if banded is not None and uncached.pubmed and uncached.llm:
        print(
            f"band: pubmed_calls_saved={1 - banded.pubmed / uncached.pubmed:.2f} "
            f"llm_calls_saved={1 - banded.llm / uncached.llm:.2f} (verification calls "
            f"included) wrong_hits={banded.wrong_hits} verified_hits={banded.verified_hits}"
        )
    pubmed_saved = 1 - cached.pubmed / uncached.pubmed if uncached.pubmed else 0.0
    llm_saved = 1 - cached.llm / uncached.llm if uncached.llm else 0.0
    print(
        f"pubmed_calls_saved={pubmed_saved:.2f} llm_calls_saved={llm_saved:.2f} "
        f"wrong_hits={cached.wrong_hits} hit_p95_ms={_pct(cached.hit_latencies, 0.95):.1f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
