"""Cached asks through the HTTP service under load, beside misses and a research job.

::

    python benchmarks/serve_load.py                      # 20 questions, 32 clients, 10 s
    python benchmarks/serve_load.py --warm 40 --clients 64 --duration 20

Starts the real service (uvicorn on loopback, in this process) over the fake E-utilities server
(the 500 PubMedQA articles of ../shared/data, or a generated corpus when that is absent) and the
fake OpenAI-compatible server, whose answers take ``--llm-delay`` seconds (a real model is
slow). The fakes run in a process of their own, as PubMed and an LLM server are not in the
service's process (their threads would otherwise take the service's GIL). Then:

1. warms N questions (each asked once over HTTP; those admitted to tier 1 are the hit set) and
   runs one research job (so the service's research process is up);
2. drives C concurrent httpx clients asking the hit set over and over for D seconds, from
   separate processes (:mod:`load_clients`, started together; so the clients' CPU is not the
   server's), each client one keep-alive connection through httpx's transport
   (``--full-client``: a whole ``httpx.AsyncClient``; ``--raw-clients``: a bare socket),
   while beside them one client asks a stream of new questions (misses: search, embedding, a
   slow LLM answer) and another submits research jobs one after another through
   ``POST /v1/research`` and follows each until it ends (they run in the service's research
   process; ``--research-in-server`` runs them on the service's event loop, to compare);
3. asks the same hits in-process through an :class:`~medlit.assistant.Assistant` over the same
   store with the same concurrency: the baseline of the ratio.

Steps 2 and 3 alternate ``--rounds`` times (default 4, D / 4 seconds each), so that both sides
of the ratio see the same stretch of the machine's time: on a shared machine whose speed drifts
for a minute at a time, a baseline measured after the whole load can be 50 % faster or slower
than the machine the load ran on. The table gives each round's ratio too.

Reports throughput and p50/p99 latency of the hits (HTTP and in-process), the misses and
research jobs done beside them, the CPU the service (this process), its research process and
the clients used, how busy the machine was (other users' jobs included), and errors. Last line:
``hit_rps=... hit_p99_ms=... in_process_ratio=... service_cpu_ms_per_hit=... errors=N`` (the
service's CPU per hit: what a loaded machine's share of a core does not move).

``--old OLD/src`` compares two versions in one run: the benchmark runs four times, as
processes of their own, with the old code, the new (this tree's), the new and the old; last
line: ``old_hit_rps=... new_hit_rps=... old_hit_p99_ms=... new_hit_p99_ms=...
old_in_process_ratio=... new_in_process_ratio=... rps_ratio=... old_service_cpu_ms_per_hit=...
new_service_cpu_ms_per_hit=... errors=N``::

    python benchmarks/serve_load.py --old OLD/src --duration 12

``--replicas R`` (R >= 2) measures the shared PostgreSQL deployment instead::

    python benchmarks/serve_load.py --replicas 2 --raw-clients --clients 32 --duration 10

R ``medlit serve`` processes (each its own home, as on R hosts) on one PostgreSQL database (a
pgserver in a temp dir, or ``--database-url``). N questions are warmed through the first
replica and kept if they are tier-1 hits through the last one (the cache is the database's).
Then the same hit load runs twice in one run: every client on replica 1 only, then the clients
spread over all R replicas (no misses, no research: hits only). Reports each phase's hit
throughput and p50/p99, the CPU the replicas used and how busy the machine's cores were, and
the ratio. On a machine with fewer cores than replicas + PostgreSQL + clients, the ratio
measures the machine, not the design: the CPU columns say which. Last line:
``replicas=R one_replica_rps=... replicas_rps=... replica_ratio=... machine_busy_pct=...
cores=N errors=N``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # pg_bench

from tests.fakes.eutils_server import FakeEutils  # noqa: E402
from tests.fakes.evidence_llm import EvidenceResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, Reply  # noqa: E402
from tests.fakes.research_responder import ARTICLES, ResearchResponder  # noqa: E402
from tests.integration.service.server import ServiceServer  # noqa: E402

from load_clients import result_path  # noqa: E402
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


@dataclass
class Fakes:
    """The fake servers' URLs, the questions to ask, and a count of the LLM requests so far."""

    eutils_url: str
    llm_url: str
    questions: list[str]
    corpus_name: str
    llm_calls: Callable[[], int]


def _serve_fakes(conn: Connection, llm_delay: float) -> None:
    """The fakes' process: start both servers, report their URLs, answer "calls" until "stop"."""
    configure_logging("error")
    eutils, questions, corpus_name = corpus_and_questions()
    with eutils, FakeLLMServer() as llm:
        llm.responder = Responder(llm_delay)
        conn.send((eutils.base_url, llm.base_url, questions, corpus_name))
        while conn.recv() == "calls":
            conn.send(len(llm.history))


@contextmanager
def fakes_process(llm_delay: float) -> Iterator[Fakes]:
    """The fake E-utilities and LLM servers, in a process of their own."""
    ctx = multiprocessing.get_context("spawn")
    mine, theirs = ctx.Pipe()
    proc = ctx.Process(target=_serve_fakes, args=(theirs, llm_delay), daemon=True)
    proc.start()
    try:
        eutils_url, llm_url, questions, corpus_name = mine.recv()

        def llm_calls() -> int:
            mine.send("calls")
            return int(mine.recv())

        yield Fakes(eutils_url, llm_url, questions, corpus_name, llm_calls)
    finally:
        with suppress(OSError):
            mine.send("stop")
        proc.join(10)
        if proc.is_alive():
            proc.kill()


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


# -- the client processes (benchmarks/load_clients.py) -------------------------------------
CLIENTS = Path(__file__).with_name("load_clients.py")


def drive_all(
    plan_path: Path,
    parts: int,
    timeout: float,
    watch: list[int] | None = None,
    window: float | None = None,
) -> dict[str, Any]:
    """Run the client processes of a plan at once (started together once all are ready);
    their results merged, with the CPU this process (the service), the processes ``watch``
    (the research process) and the clients used, and how busy the machine was, in the hits'
    window (``elapsed``: ``window`` seconds from "go"; without it, until the last client ended,
    which with misses is after the hits' window)."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(CLIENTS), str(plan_path), str(i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(parts)
    ]
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"a client process failed:\n{proc.communicate()[1]}")
    before, mine, started = cpu_sample(watch or [], 0), os.times(), time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    ended: list[tuple[dict[str, int], Any, float]] = []

    def sample_end() -> None:
        ended.append((cpu_sample(watch or [], 0), os.times(), time.perf_counter()))

    timer = threading.Timer(window, sample_end) if window is not None else None
    if timer is not None:
        timer.start()
    results = []
    for i, proc in enumerate(procs):
        _, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise SystemExit(f"a client process failed:\n{err}")
        results.append(json.loads(result_path(plan_path, i).read_text()))
    merged = _joined(results)
    if timer is not None:
        timer.join()
    if not ended:
        sample_end()
    after, mine_after, stopped = ended[0]
    merged["wall"] = max(part["wall"] for part in results)
    merged["elapsed"] = stopped - started
    merged["clients_cpu_s"] = sum(part["cpu_s"] for part in results)
    merged["server_cpu_s"] = (mine_after.user + mine_after.system) - (mine.user + mine.system)
    merged["watched_cpu_s"] = (after["watched"] - before["watched"]) / os.sysconf("SC_CLK_TCK")
    merged["machine_busy"] = (after["busy"] - before["busy"]) / max(after["all"] - before["all"], 1)
    return merged


def _joined(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The latency, job and error lists of ``results`` (client processes, or whole
    :func:`drive_all` runs) joined, and their non-hits added up."""
    merged: dict[str, Any] = {
        key: [x for result in results for x in result[key]]
        for key in ("hit_lat", "miss_lat", "research_done", "errors")
    }
    merged["not_hits"] = sum(result["not_hits"] for result in results)
    return merged


def merge_loads(loads: list[dict[str, Any]]) -> dict[str, Any]:
    """The results of several :func:`drive_all` runs as one (times and CPU added up)."""
    merged = _joined(loads)
    for key in ("wall", "elapsed", "clients_cpu_s", "server_cpu_s", "watched_cpu_s"):
        merged[key] = sum(load[key] for load in loads)
    merged["machine_busy"] = sum(ld["machine_busy"] * ld["elapsed"] for ld in loads) / max(
        merged["elapsed"], 1e-9
    )
    return merged


KINDS = {
    "transport": "httpx (transport)",
    "client": "httpx (AsyncClient)",
    "raw": "bare HTTP/1.1",
}


def client_kind(args: argparse.Namespace) -> str:
    """What the hit clients are (:mod:`load_clients`): a key of :data:`KINDS`."""
    return "raw" if args.raw_clients else "client" if args.full_client else "transport"


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
def warm_research(client: httpx.Client) -> None:
    """One research job through the service, followed until it ends."""
    reply = client.post("/v1/research", json={"question": RESEARCH_QUESTION, "depth": "quick"})
    reply.raise_for_status()
    job_url = reply.json()["links"]["self"]
    deadline = time.monotonic() + 300
    while client.get(job_url).json()["status"] not in ("COMPLETED", "FAILED", "CANCELLED"):
        if time.monotonic() > deadline:
            raise SystemExit("the warm-up research job did not end within 300 s")
        time.sleep(0.25)


# -- --replicas: several service processes on one PostgreSQL -----------------------------------
def _proc_cpu(pid: int) -> tuple[int, int]:
    """(parent pid, user + system jiffies) of a process; (0, 0) if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0, 0
    rest = stat[stat.rindex(")") + 2 :].split()
    return int(rest[1]), int(rest[11]) + int(rest[12])


def cpu_sample(pids: list[int], postmaster: int) -> dict[str, int]:
    """Jiffies so far: the machine's (busy, all), ``pids``', PostgreSQL's (the postmaster's
    children: one per connection), and this process's finished children (the clients)."""
    import resource

    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    pg = 0
    if postmaster:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                parent, used = _proc_cpu(int(entry.name))
                pg += used if parent == postmaster or int(entry.name) == postmaster else 0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks = os.sysconf("SC_CLK_TCK")
    return {
        "busy": sum(fields) - idle,
        "all": sum(fields),
        "watched": sum(_proc_cpu(pid)[1] for pid in pids),
        "postgres": pg,
        "clients": int((kids.ru_utime + kids.ru_stime) * ticks),
    }


def drive_phase(
    urls: list[str],
    hits: list[str],
    args: argparse.Namespace,
    tmp: Path,
    pids: list[int],
    postmaster: int,
) -> dict[str, Any]:
    """Drive the hit load spread over ``urls``; the results with the CPU used meanwhile."""
    procs = max(1, min(args.client_procs, args.clients))
    parts = [
        {
            "clients": args.clients // procs + (i < args.clients % procs),
            "misses": [],
            "url": urls[i % len(urls)],
        }
        for i in range(procs)
    ]
    plan = tmp / f"plan-{len(urls)}.json"
    plan.write_text(
        json.dumps(
            {
                "url": urls[0],
                "hits": hits,
                "parts": parts,
                "duration": args.duration,
                "clients": client_kind(args),
            }
        )
    )
    before = cpu_sample(pids, postmaster)
    load = drive_all(plan, procs, args.duration + 300)
    after = cpu_sample(pids, postmaster)
    used = {key: after[key] - before[key] for key in before}
    ticks = os.sysconf("SC_CLK_TCK")
    load["machine_busy"] = used["busy"] / max(used["all"], 1)
    for key in ("watched", "postgres", "clients"):
        load[f"{key}_cores"] = used[key] / ticks / load["wall"]
    load["replicas_cores"] = load.pop("watched_cores")
    return load


def _postmaster(url: str) -> int:
    """The pid of the PostgreSQL server's postmaster when it runs on this machine, else 0."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    parent = _proc_cpu(int(row[0]))[0] if row else 0
    return parent if parent > 1 else 0


def replicas_main(args: argparse.Namespace) -> None:
    """Hit throughput of one replica, then of ``args.replicas``, on one PostgreSQL."""
    from tests.integration.service.processes import free_port, serve_process, stop_process

    from pg_bench import pg_server

    configure_logging("error")
    cores = os.cpu_count() or 1
    with (
        tempfile.TemporaryDirectory() as tmp_name,
        fakes_process(args.llm_delay) as fakes,
        pg_server(args.database_url, Path(tmp_name)) as db_url,
    ):
        questions, corpus_name = fakes.questions, fakes.corpus_name
        random.Random(7).shuffle(questions)
        warm = questions[: args.warm]
        tmp = Path(tmp_name)
        env = {
            "MEDLIT_DATABASE_URL": db_url,
            "MEDLIT_PUBMED_BASE_URL": fakes.eutils_url,
            "MEDLIT_PUBMED_REQUESTS_PER_SECOND": "50",
            "MEDLIT_EUROPEPMC_ENABLED": "false",
            "MEDLIT_LOCAL_ENABLED": "false",
            "MEDLIT_LLM_BASE_URL": fakes.llm_url,
            "MEDLIT_LLM_MODEL": "fake-model",
            "MEDLIT_LOG_LEVEL": "error",
            "MEDLIT_SERVICE_RESEARCH_WORKERS": "1",
        }
        servers: list[subprocess.Popen[bytes]] = []
        urls: list[str] = []
        try:
            for i in range(args.replicas):
                port = free_port()
                home = {"MEDLIT_HOME": str(tmp / f"replica-{i}")}
                log = tmp / f"replica-{i}.log"
                servers.append(serve_process({**env, **home}, port, log=log))
                urls.append(f"http://127.0.0.1:{port}")
            hits = []
            with httpx.Client(timeout=120) as client:
                for question in warm:
                    body = {"question": question}
                    client.post(f"{urls[0]}/v1/ask", json=body).raise_for_status()
                    replies = [client.post(f"{u}/v1/ask", json=body).json() for u in urls]
                    if all(r["cache"]["tier1"] == "hit" for r in replies):
                        hits.append(question)  # a hit through every replica
            if not hits:
                raise SystemExit("no warmed question was admitted to the answer cache")
            pids = [p.pid for p in servers]
            postmaster = _postmaster(db_url)
            one = drive_phase(urls[:1], hits, args, tmp, pids, postmaster)
            many = drive_phase(urls, hits, args, tmp, pids, postmaster)
        finally:
            for proc in servers:
                stop_process(proc)
    rates = [len(r["hit_lat"]) / r["wall"] for r in (one, many)]
    ratio = rates[1] / rates[0] if rates[0] else float("nan")
    errors = len(one["errors"]) + len(many["errors"])
    kind = KINDS[client_kind(args)]
    where = "given" if args.database_url else "pgserver (local)"
    print(f"corpus: {corpus_name}; {len(hits)} of {len(warm)} warmed questions hit through "
          f"every replica; {args.clients} {kind} clients in "
          f"{max(1, min(args.client_procs, args.clients))} processes, {args.duration:.0f} s "
          f"per phase; PostgreSQL: {where}")  # fmt: skip
    print("CPU in cores used on average over the phase (of the machine's "
          f"{cores}); 'machine busy' counts every process on it, ours or not.")  # fmt: skip
    head = ("replicas", "hits/s", "p50 ms", "p99 ms", "not hits", "errors", "replicas CPU",
            "postgres CPU", "clients CPU", "machine busy")  # fmt: skip
    print("  ".join(f"{h:>12}" for h in head))
    for n, rate, r in ((1, rates[0], one), (args.replicas, rates[1], many)):
        p50, p99 = summary(r["hit_lat"])
        cells = (str(n), f"{rate:.0f}", f"{p50:.1f}", f"{p99:.1f}", str(r["not_hits"]),
                 str(len(r["errors"])), f"{r['replicas_cores']:.2f}",
                 f"{r['postgres_cores']:.2f}", f"{r['clients_cores']:.2f}",
                 f"{r['machine_busy'] * 100:.0f} %")  # fmt: skip
        print("  ".join(f"{c:>12}" for c in cells))
    for line in (one["errors"] + many["errors"])[:5]:
        print(f"  error: {line}")
    bound = max(one["machine_busy"], many["machine_busy"])
    if bound > 0.9:
        print(f"CPU bound: the machine's {cores} cores were {bound * 100:.0f} % busy (clients, "
              "replicas, PostgreSQL and everything else on it): more replicas cannot add "
              "throughput here; the ratio is the machine's, not the design's.")  # fmt: skip
    print(
        f"replicas={args.replicas} one_replica_rps={rates[0]:.0f} replicas_rps={rates[1]:.0f} "
        f"replica_ratio={ratio:.2f} machine_busy_pct={bound * 100:.0f} cores={cores} "
        f"errors={errors}"
    )


def _figures(line: str) -> dict[str, float]:
    return {k: float(v) for k, v in (part.split("=", 1) for part in line.split())}


def compare_main(old: Path, argv: list[str]) -> None:
    """``--old``: this benchmark run with the old code and the new, in the order old, new, new,
    old (a machine whose speed drifts moves both alike); each run's table, then the two
    versions side by side (means of their two runs). Last line: ``old_hit_rps=...
    new_hit_rps=... old_hit_p99_ms=... new_hit_p99_ms=... old_in_process_ratio=...
    new_in_process_ratio=... rps_ratio=... old_service_cpu_ms_per_hit=...
    new_service_cpu_ms_per_hit=... errors=N`` (``rps_ratio``: new / old)."""
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for label in ("old", "new", "new", "old"):
        src = old.resolve() if label == "old" else ROOT / "src"
        env = {**os.environ, "PYTHONPATH": str(src)}
        print(f"== {label} ({src}), load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        print(done.stdout.rstrip())
        if done.returncode:
            raise SystemExit(f"{label}: exit {done.returncode}\n{done.stderr[-2000:]}")
        runs[label].append(_figures(done.stdout.strip().splitlines()[-1]))
    mean = {
        label: {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]} for label, rs in runs.items()
    }
    print(
        f"\n{'':<8} {'hits/s':>8} {'p99 ms':>8} {'of in-process':>14} {'CPU ms/hit':>11}"
        "   (each run)"
    )
    for label in ("old", "new"):
        m = mean[label]
        each = ", ".join(
            f"{r['hit_rps']:.0f}/s {r['hit_p99_ms']:.0f} ms {r['service_cpu_ms_per_hit']:.2f}"
            for r in runs[label]
        )
        print(
            f"{label:<8} {m['hit_rps']:8.0f} {m['hit_p99_ms']:8.1f} {m['in_process_ratio']:14.2f}"
            f" {m['service_cpu_ms_per_hit']:11.2f}   ({each})"
        )
    errors = sum(r["errors"] for rs in runs.values() for r in rs)
    print(
        f"old_hit_rps={mean['old']['hit_rps']:.0f} new_hit_rps={mean['new']['hit_rps']:.0f} "
        f"old_hit_p99_ms={mean['old']['hit_p99_ms']:.1f} "
        f"new_hit_p99_ms={mean['new']['hit_p99_ms']:.1f} "
        f"old_in_process_ratio={mean['old']['in_process_ratio']:.2f} "
        f"new_in_process_ratio={mean['new']['in_process_ratio']:.2f} "
        f"rps_ratio={mean['new']['hit_rps'] / mean['old']['hit_rps']:.2f} "
        f"old_service_cpu_ms_per_hit={mean['old']['service_cpu_ms_per_hit']:.2f} "
        f"new_service_cpu_ms_per_hit={mean['new']['service_cpu_ms_per_hit']:.2f} "
        f"errors={errors:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=20, help="Questions warmed (N).")
    parser.add_argument("--clients", type=int, default=32, help="Concurrent hit clients (C).")
    parser.add_argument(
        "--duration",
        type=float,
        default=10.0,
        help="Seconds of HTTP load (and as many of in-process hits), over all rounds.",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="HTTP load and in-process baseline alternate this many times (the ratio compares "
        "the two over the same stretch of the machine's time).",
    )
    parser.add_argument("--llm-delay", type=float, default=0.5, help="Seconds per LLM answer.")
    parser.add_argument("--no-research", action="store_true", help="No research job beside.")
    parser.add_argument("--no-misses", action="store_true", help="No miss stream beside.")
    parser.add_argument(
        "--research-in-server",
        action="store_true",
        help="Research jobs on the service's own event loop (service.research_process false), "
        "as before the research process: to compare.",
    )
    parser.add_argument(
        "--client-procs",
        type=int,
        default=4,
        help="Processes the clients are spread over (an httpx client costs more CPU per "
        "request than a cached answer: one process could not load the server).",
    )
    kind = parser.add_mutually_exclusive_group()  # what the hit clients are
    kind.add_argument(
        "--raw-clients",
        action="store_true",
        help="Bare HTTP/1.1 connections instead of httpx for the hit clients (the server's own "
        "capacity, without the clients' CPU); the miss stream still uses httpx.",
    )
    kind.add_argument(
        "--full-client",
        action="store_true",
        help="A whole httpx.AsyncClient per hit client (cookie jar, redirect and auth steps, "
        "default headers) instead of httpx's transport: a quarter more client CPU per request.",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="R >= 2: R medlit serve processes on one PostgreSQL; hit throughput of one "
        "replica, then of all R, in the same run (hits only).",
    )
    parser.add_argument(
        "--database-url",
        help="PostgreSQL for --replicas (default: a pgserver in a temp dir; give an empty "
        "database).",
    )
    parser.add_argument(
        "--old",
        type=Path,
        help="Another version's src directory: run this benchmark with it and with this tree's "
        "src in turn (old, new, new, old; each a process of its own with PYTHONPATH set) and "
        "compare the two in one run.",
    )
    args = parser.parse_args()
    if args.old is not None:
        compare_main(args.old, [a for a in sys.argv[1:] if a not in ("--old", str(args.old))])
        return
    if args.replicas > 1:
        replicas_main(args)
        return
    configure_logging("error")
    with tempfile.TemporaryDirectory() as tmp, fakes_process(args.llm_delay) as fakes:
        questions, corpus_name = fakes.questions, fakes.corpus_name
        random.Random(7).shuffle(questions)
        warm, misses = questions[: args.warm], questions[args.warm :]
        settings = Settings(home=Path(tmp) / "home")
        settings.pubmed.base_url = fakes.eutils_url
        settings.pubmed.requests_per_second = 50.0
        settings.europepmc.enabled = False
        settings.local.enabled = False
        settings.llm.base_url = fakes.llm_url
        settings.llm.model = "fake-model"
        settings.service.research_process = not args.research_in_server
        with ServiceServer(settings, uvloop=True) as server:
            with httpx.Client(base_url=server.url, timeout=120) as client:
                hits = []
                for question in warm:
                    client.post("/v1/ask", json={"question": question}).raise_for_status()
                    again = client.post("/v1/ask", json={"question": question}).json()
                    if again["cache"]["tier1"] == "hit":
                        hits.append(question)
                if not args.no_research:  # one job first: the research process is up and warm
                    warm_research(client)
            if not hits:
                raise SystemExit("no warmed question was admitted to the answer cache")
            procs = max(1, min(args.client_procs, args.clients))
            research = server.app.state.medlit.extras.get("research_process")
            watch = [research.pid] if research is not None and research.pid else []
            rounds = max(1, args.rounds)
            span = args.duration / rounds
            loads, bases = [], []
            for r in range(rounds):
                parts = [
                    {
                        "clients": args.clients // procs + (i < args.clients % procs),
                        # one stream of misses and one of research jobs, from the first process
                        "misses": [] if args.no_misses or i else misses[r::rounds],
                        "research": None if args.no_research or i else RESEARCH_QUESTION,
                    }
                    for i in range(procs)
                ]
                plan = Path(tmp) / f"plan-{r}.json"
                plan.write_text(
                    json.dumps(
                        {
                            "url": server.url,
                            "hits": hits,
                            "parts": parts,
                            "duration": span,
                            "clients": client_kind(args),
                        }
                    )
                )
                loads.append(drive_all(plan, procs, span + 300, watch, window=span))
                # The baseline right after, the service idle: a machine that slows down or
                # speeds up for a minute moves both sides of the ratio alike.
                bases.append(uvloop.run(in_process(settings, hits, args.clients, span)))
            llm_calls_http = fakes.llm_calls()
    load = merge_loads(loads)
    base_lat = [x for lat, _, _ in bases for x in lat]
    base_not_hits = sum(n for _, n, _ in bases)
    base_wall = sum(wall for _, _, wall in bases)
    by_round = [
        (len(ld["hit_lat"]) / ld["wall"]) / (len(lat) / wall)
        for ld, (lat, _, wall) in zip(loads, bases, strict=True)
    ]
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
        (
            "clients, processes, duration",
            f"{args.clients} {KINDS[client_kind(args)]}, {procs}, "
            f"{args.duration:.0f} s in {rounds} rounds",
        ),
        ("HTTP hits", f"{len(hit_lat)} ({load['not_hits']} not tier-1 hits)"),
        ("HTTP hit throughput", f"{hit_rps:.0f} req/s"),
        ("HTTP hit p50 / p99", f"{h50:.1f} / {h99:.1f} ms"),
        ("misses beside (p50)", f"{len(load['miss_lat'])} ({m50:.0f} ms)"),
        ("research jobs beside", f"{len(load['research_done'])} {load['research_done']}"),
        (
            "CPU: service / clients, in the hits' window",
            f"{load['server_cpu_s'] / load['elapsed']:.2f} / "
            f"{load['clients_cpu_s'] / load['elapsed']:.2f} cores "
            f"({load['server_cpu_s'] / max(len(hit_lat), 1) * 1e3:.2f} / "
            f"{load['clients_cpu_s'] / max(len(hit_lat), 1) * 1e3:.2f} ms per hit)",
        ),
        ("CPU: research process", f"{load['watched_cpu_s'] / load['elapsed']:.2f} cores"),
        ("machine busy", f"{load['machine_busy'] * 100:.0f} % of {os.cpu_count()} cores"),
        ("LLM requests during the run", str(llm_calls_http)),
        ("in-process hits", f"{len(base_lat)} ({base_not_hits} not tier-1 hits)"),
        ("in-process throughput", f"{base_rps:.0f} req/s"),
        ("in-process p50 / p99", f"{b50:.1f} / {b99:.1f} ms"),
        ("ratio by round", " ".join(f"{x:.2f}" for x in by_round)),
        ("errors", str(errors)),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for line in load["errors"][:5]:
        print(f"  error: {line}")
    service_ms = load["server_cpu_s"] / max(len(hit_lat), 1) * 1e3
    print(
        f"hit_rps={hit_rps:.0f} hit_p99_ms={h99:.1f} "
        f"in_process_ratio={hit_rps / base_rps:.2f} service_cpu_ms_per_hit={service_ms:.2f} "
        f"errors={errors}"
    )


if __name__ == "__main__":
    main()
