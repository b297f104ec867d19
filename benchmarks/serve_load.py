"""Cached asks through the HTTP service under load, beside misses and a research job.

::

    python benchmarks/serve_load.py                      # 20 questions, 32 clients, 10 s
    python benchmarks/serve_load.py --warm 40 --clients 64 --duration 20

Starts the real service (uvicorn on loopback, in this process) over the fake E-utilities server
(the 500 PubMedQA articles of ../shared/data, or a generated corpus when that is absent) and the
fake OpenAI-compatible server, whose answers take ``--llm-delay`` seconds (a real model is
slow). Then:

1. warms N questions (each asked once over HTTP; those admitted to tier 1 are the hit set);
2. drives C concurrent httpx clients asking the hit set over and over for D seconds, from a
   separate process (so the clients' CPU is not the server's), while beside them one client
   asks a stream of new questions (misses: search, embedding, a slow LLM answer) and research
   jobs run one after another on the server's event loop;
3. asks the same hits in-process through an :class:`~medlit.assistant.Assistant` over the same
   store with the same concurrency: the baseline of the ratio.

Reports throughput and p50/p99 latency of the hits (HTTP and in-process), the misses and
research jobs done beside them, and errors. Last line:
``hit_rps=... hit_p99_ms=... in_process_ratio=... errors=N``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.eutils_server import FakeEutils  # noqa: E402
from tests.fakes.evidence_llm import EvidenceResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, Reply  # noqa: E402
from tests.fakes.research_responder import ARTICLES, ResearchResponder  # noqa: E402
from tests.integration.service.server import ServiceServer  # noqa: E402

from medlit.assistant import Assistant  # noqa: E402
from medlit.config import Settings  # noqa: E402
from medlit.log import configure_logging  # noqa: E402
from medlit.runtime import Runtime  # noqa: E402

PQAL = ROOT.parent / "shared" / "data" / "pubmedqa"
RESEARCH_QUESTION = "Does aspirin prevent recurrent ischaemic stroke, and at what bleeding cost?"


def corpus_and_questions() -> tuple[FakeEutils, list[str], str]:
    """The fake E-utilities (research articles included) and the questions to ask."""
    if (PQAL / "pqal_dev.json").exists():
        records = json.loads((PQAL / "pqal_dev.json").read_text())
        questions = [r["QUESTION"] for r in records.values()]
        fake = FakeEutils(
            ARTICLES,
            xml_path=PQAL / "pqal_dev_pubmed.xml",
            rate_limit=None,
            rate_limit_with_key=None,
        )
        return fake, questions, "PubMedQA (500 articles)"
    from tests.integration.test_ask_flow import corpus

    articles = corpus()
    questions = [f"What is known about {a.title.lower()}?" for a in articles]
    fake = FakeEutils([*articles, *ARTICLES], rate_limit=None, rate_limit_with_key=None)
    return fake, questions, f"generated ({len(articles)} articles; ../shared/data absent)"


class Responder:
    """Research prompts to the research responder, ask prompts to the evidence responder; ask
    answers are delayed like a real model's."""

    def __init__(self, delay_s: float) -> None:
        self.research = ResearchResponder()
        self.evidence = EvidenceResponder(lambda pmids: "Yes")
        self.delay_s = delay_s

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        messages = request.get("messages", [])
        system = messages[0]["content"] if messages else ""
        if system.startswith("medlit research:"):
            return self.research(request)
        text = self.evidence(request)
        return Reply.slow(self.delay_s, text) if self.delay_s else text


def summary(latencies: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    if not latencies:
        return float("nan"), float("nan")
    arr = np.asarray(latencies) * 1000.0
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))


# -- the client process ------------------------------------------------------------------------
async def drive(url: str, hits: list[str], misses: list[str], clients: int, duration: float) -> Any:
    """C hit clients and one miss client for ``duration`` seconds; JSON-ready results."""
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    stop = time.perf_counter() + duration
    hit_lat: list[float] = []
    miss_lat: list[float] = []
    errors: list[str] = []
    not_hits = 0
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:

        async def hit_worker(seed: int) -> None:
            nonlocal not_hits
            rng = random.Random(seed)
            while time.perf_counter() < stop:
                question = rng.choice(hits)
                start = time.perf_counter()
                try:
                    reply = await client.post("/v1/ask", json={"question": question})
                except httpx.HTTPError as exc:
                    errors.append(f"hit: {exc!r}")
                    continue
                elapsed = time.perf_counter() - start
                if reply.status_code != 200:
                    errors.append(f"hit: HTTP {reply.status_code} {reply.text[:200]}")
                    continue
                if reply.json()["cache"]["tier1"] != "hit":
                    not_hits += 1
                hit_lat.append(elapsed)

        async def miss_worker() -> None:
            for question in misses:
                if time.perf_counter() >= stop:
                    break
                start = time.perf_counter()
                try:
                    reply = await client.post("/v1/ask", json={"question": question})
                except httpx.HTTPError as exc:
                    errors.append(f"miss: {exc!r}")
                    continue
                if reply.status_code != 200:
                    errors.append(f"miss: HTTP {reply.status_code} {reply.text[:200]}")
                    continue
                miss_lat.append(time.perf_counter() - start)

        began = time.perf_counter()
        await asyncio.gather(miss_worker(), *(hit_worker(i) for i in range(clients)))
        wall = time.perf_counter() - began
    return {
        "hit_lat": hit_lat,
        "miss_lat": miss_lat,
        "errors": errors,
        "not_hits": not_hits,
        "wall": wall,
    }


async def drive_raw(url: str, hits: list[str], clients: int, duration: float) -> Any:
    """The hit clients as bare HTTP/1.1 keep-alive connections (no miss stream): what the
    server sustains when a client costs next to no CPU (``--raw-clients``)."""
    host, port = url.removeprefix("http://").split(":")
    stop = time.perf_counter() + duration
    hit_lat: list[float] = []
    errors: list[str] = []

    async def worker(seed: int) -> None:
        rng = random.Random(seed)
        reader, writer = await asyncio.open_connection(host, int(port))
        while time.perf_counter() < stop:
            body = json.dumps({"question": rng.choice(hits)}).encode()
            head = (
                f"POST /v1/ask HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            start = time.perf_counter()
            writer.write(head + body)
            await writer.drain()
            lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in lines
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            if not lines[0].startswith(b"HTTP/1.1 200"):
                errors.append(lines[0].decode())
                continue
            hit_lat.append(time.perf_counter() - start)
        writer.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    wall = time.perf_counter() - began
    return {"hit_lat": hit_lat, "miss_lat": [], "errors": errors, "not_hits": 0, "wall": wall}


def drive_main(args: argparse.Namespace) -> None:
    """Entry point of a client process: read the plan, drive, print the results as JSON."""
    plan = json.loads(Path(args.drive).read_text())
    part = plan["parts"][args.part]
    if plan.get("raw"):

        async def both() -> Any:
            url, hits, duration = plan["url"], plan["hits"], plan["duration"]
            raw, missing = await asyncio.gather(
                drive_raw(url, hits, part["clients"], duration),
                drive(url, hits, part["misses"], 0, duration),
            )
            raw["miss_lat"], raw["errors"] = missing["miss_lat"], raw["errors"] + missing["errors"]
            return raw

        result = uvloop.run(both())
    else:
        result = uvloop.run(
            drive(plan["url"], plan["hits"], part["misses"], part["clients"], plan["duration"])
        )
    print(json.dumps(result))


def drive_all(plan_path: Path, parts: int, timeout: float) -> dict[str, Any]:
    """Run the client processes of a plan at once; their results merged."""
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--drive", str(plan_path), "--part", str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(parts)
    ]
    merged: dict[str, Any] = {"hit_lat": [], "miss_lat": [], "errors": [], "not_hits": 0}
    walls = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise SystemExit(f"a client process failed:\n{err}")
        part = json.loads(out.strip().splitlines()[-1])
        for key in ("hit_lat", "miss_lat", "errors"):
            merged[key].extend(part[key])
        merged["not_hits"] += part["not_hits"]
        walls.append(part["wall"])
    merged["wall"] = max(walls)
    return merged


# -- the in-process baseline ---------------------------------------------------------------------
async def in_process(settings: Settings, hits: list[str], clients: int, duration: float) -> Any:
    """The same hits through an Assistant in this process, with the same concurrency."""
    async with Runtime(settings) as runtime:
        assistant = Assistant(runtime=runtime)
        for question in hits:  # the first ask of each opens what a hit needs
            await assistant.ask(question)
        latencies: list[float] = []
        not_hits = 0
        stop = time.perf_counter() + duration

        async def worker(seed: int) -> None:
            nonlocal not_hits
            rng = random.Random(seed)
            while time.perf_counter() < stop:
                start = time.perf_counter()
                result = await assistant.ask(rng.choice(hits))
                latencies.append(time.perf_counter() - start)
                not_hits += result.cache.tier1 != "hit"

        began = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(clients)))
        return latencies, not_hits, time.perf_counter() - began


# -- the benchmark -----------------------------------------------------------------------------
def run_research(server: ServiceServer, stop_at: float, done: list[str]) -> None:
    """Research jobs one after another on the server's loop until ``stop_at``."""
    runtime = server.runtime
    assert runtime is not None

    async def jobs() -> None:
        async with runtime.orchestrator() as orchestrator:
            while time.perf_counter() < stop_at:
                job = orchestrator.create_job(RESEARCH_QUESTION, "quick")
                finished = await orchestrator.run(job)
                done.append(str(finished.status.value))

    server.submit(jobs())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=20, help="Questions warmed (N).")
    parser.add_argument("--clients", type=int, default=32, help="Concurrent hit clients (C).")
    parser.add_argument("--duration", type=float, default=10.0, help="Seconds of load.")
    parser.add_argument("--llm-delay", type=float, default=0.5, help="Seconds per LLM answer.")
    parser.add_argument("--no-research", action="store_true", help="No research job beside.")
    parser.add_argument("--no-misses", action="store_true", help="No miss stream beside.")
    parser.add_argument(
        "--client-procs",
        type=int,
        default=4,
        help="Processes the clients are spread over (an httpx client costs more CPU per "
        "request than a cached answer: one process could not load the server).",
    )
    parser.add_argument(
        "--raw-clients",
        action="store_true",
        help="Bare HTTP/1.1 connections instead of httpx for the hit clients (the server's own "
        "capacity, without the clients' CPU); the miss stream still uses httpx.",
    )
    parser.add_argument("--drive", help=argparse.SUPPRESS)  # a client process
    parser.add_argument("--part", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        drive_main(args)
        return
    configure_logging("error")
    eutils, questions, corpus_name = corpus_and_questions()
    rng = random.Random(7)
    rng.shuffle(questions)
    warm, misses = questions[: args.warm], questions[args.warm :]
    with tempfile.TemporaryDirectory() as tmp, eutils, FakeLLMServer() as llm:
        llm.responder = Responder(args.llm_delay)
        settings = Settings(home=Path(tmp) / "home")
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0
        settings.europepmc.enabled = False
        settings.local.enabled = False
        settings.llm.base_url = llm.base_url
        settings.llm.model = "fake-model"
        with ServiceServer(settings, uvloop=True) as server:
            with httpx.Client(base_url=server.url, timeout=120) as client:
                hits = []
                for question in warm:
                    client.post("/v1/ask", json={"question": question}).raise_for_status()
                    again = client.post("/v1/ask", json={"question": question}).json()
                    if again["cache"]["tier1"] == "hit":
                        hits.append(question)
            if not hits:
                raise SystemExit("no warmed question was admitted to the answer cache")
            procs = max(1, min(args.client_procs, args.clients))
            parts = [
                {
                    "clients": args.clients // procs + (i < args.clients % procs),
                    # one stream of misses, from the first process
                    "misses": [] if args.no_misses or i else misses,
                }
                for i in range(procs)
            ]
            plan = Path(tmp) / "plan.json"
            plan.write_text(
                json.dumps(
                    {
                        "url": server.url,
                        "hits": hits,
                        "parts": parts,
                        "duration": args.duration,
                        "raw": args.raw_clients,
                    }
                )
            )
            research_done: list[str] = []
            if not args.no_research:
                run_research(server, time.perf_counter() + args.duration, research_done)
            load = drive_all(plan, procs, args.duration + 300)
            llm_calls_http = len(llm.history)
        base_lat, base_not_hits, base_wall = uvloop.run(
            in_process(settings, hits, args.clients, args.duration)
        )
    hit_lat, wall = load["hit_lat"], load["wall"]
    hit_rps = len(hit_lat) / wall
    base_rps = len(base_lat) / base_wall
    h50, h99 = summary(hit_lat)
    b50, b99 = summary(base_lat)
    m50, _ = summary(load["miss_lat"])
    errors = len(load["errors"])
    rows = [
        ("corpus", corpus_name),
        ("questions warmed / admitted", f"{len(warm)} / {len(hits)}"),
        ("clients, processes, duration", f"{args.clients}, {procs}, {args.duration:.0f} s"),
        ("HTTP hits", f"{len(hit_lat)} ({load['not_hits']} not tier-1 hits)"),
        ("HTTP hit throughput", f"{hit_rps:.0f} req/s"),
        ("HTTP hit p50 / p99", f"{h50:.1f} / {h99:.1f} ms"),
        ("misses beside (p50)", f"{len(load['miss_lat'])} ({m50:.0f} ms)"),
        ("research jobs beside", f"{len(research_done)} finished {research_done}"),
        ("LLM requests during the run", str(llm_calls_http)),
        ("in-process hits", f"{len(base_lat)} ({base_not_hits} not tier-1 hits)"),
        ("in-process throughput", f"{base_rps:.0f} req/s"),
        ("in-process p50 / p99", f"{b50:.1f} / {b99:.1f} ms"),
        ("errors", str(errors)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for line in load["errors"][:5]:
        print(f"  error: {line}")
    print(
        f"hit_rps={hit_rps:.0f} hit_p99_ms={h99:.1f} "
        f"in_process_ratio={hit_rps / base_rps:.2f} errors={errors}"
    )


if __name__ == "__main__":
    main()
