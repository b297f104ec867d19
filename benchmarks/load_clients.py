"""The client processes of ``serve_load.py``: httpx (or bare HTTP/1.1) clients of ``POST /v1/ask``.

::

    python benchmarks/load_clients.py PLAN.json PART     # started by serve_load.py, not by hand

A process reads its part of the plan, opens its clients, prints ``ready`` and waits for ``go`` on
stdin (so every process starts its load at the same moment, none while another is still
importing), drives for the plan's duration and writes its results as JSON to ``result-PART.json``
beside the plan: latencies, errors, non-hits, the hits' wall time and the CPU seconds it used
in that window. (A file, not stdout: tens of thousands of latencies are more than a pipe holds, and
the event loop leaves stdout non-blocking, so a long line was cut at 64 KiB.)

It imports only the standard library, httpx and uvloop: a client process must spend its CPU on
requests, not on loading the project (numpy, the fakes, medlit) that it does not use. Each
hit client has its own connection (one keep-alive connection, as separate users have) through
httpx's transport, or a whole ``httpx.AsyncClient`` (plan ``"clients": "client"``), or a bare
socket (``"raw"``); request bodies are encoded once per question, not once per request.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import uvloop

_JSON = {"content-type": "application/json"}
RESEARCH_POLL_S = 0.25  # how often the research client looks at its job


class HitClient:
    """One hit client: one user's keep-alive connection, through httpx's own transport (its
    connection pool and HTTP/1.1) or, with ``full``, a whole ``httpx.AsyncClient``, whose
    cookie jar, redirect and auth steps and default headers cost the client a quarter more CPU
    per request on the same 2 cores as the service."""

    def __init__(self, url: str, full: bool) -> None:
        self.url = url
        self.transport = httpx.AsyncHTTPTransport()
        # The whole client over the same transport: the two kinds differ by its layer only.
        self.client = httpx.AsyncClient(transport=self.transport, timeout=None) if full else None
        self._urls: dict[str, httpx.URL] = {}  # parsed once per path, not once per request

    async def send(self, method: str, path: str, body: bytes | None = None) -> httpx.Response:
        """The reply to one request, read to its end."""
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = httpx.URL(f"{self.url}{path}")
        headers = _JSON if body is not None else None
        if self.client is not None:
            return await self.client.request(method, url, content=body, headers=headers)
        request = httpx.Request(method, url, content=body, headers=headers)
        reply = await self.transport.handle_async_request(request)
        await reply.aread()
        return reply

    async def aclose(self) -> None:
        await (self.client or self.transport).aclose()  # a client closes its transport


async def open_clients(url: str, n: int, full: bool) -> list[HitClient]:
    """``n`` hit clients, each with its connection open (``GET /healthz``): opening them
    (an SSL context each, even for http) is no part of the measured load."""
    clients = [HitClient(url, full) for _ in range(n)]
    await asyncio.gather(*(c.send("GET", "/healthz") for c in clients))
    return clients


async def drive(
    url: str,
    hits: list[str],
    misses: list[str],
    clients: list[HitClient],
    duration: float,
    research: str | None = None,
) -> Any:
    """One hit worker per client, one miss client and (with ``research``, a question) one
    research client for ``duration`` seconds; JSON-ready results (the clients are closed)."""
    bodies = [json.dumps({"question": q}).encode() for q in hits]
    stop = time.perf_counter() + duration
    hit_lat: list[float] = []
    miss_lat: list[float] = []
    errors: list[str] = []
    not_hits = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:

        async def hit_worker(seed: int, own: HitClient) -> None:
            rng = random.Random(seed)
            try:
                while time.perf_counter() < stop:
                    await one(own, rng.choice(bodies))
            finally:
                await own.aclose()

        async def one(own: HitClient, body: bytes) -> None:
            nonlocal not_hits
            start = time.perf_counter()
            try:
                reply = await own.send("POST", "/v1/ask", body)
            except httpx.HTTPError as exc:
                errors.append(f"hit: {exc!r}")
                return
            elapsed = time.perf_counter() - start
            if reply.status_code != 200:
                errors.append(f"hit: HTTP {reply.status_code} {reply.text[:200]}")
                return
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

        async def research_worker() -> None:
            # Jobs one after another, as a user would: submit, follow until it ends.
            while research is not None and time.perf_counter() < stop:
                try:
                    reply = await client.post(
                        "/v1/research", json={"question": research, "depth": "quick"}
                    )
                    if reply.status_code != 202:
                        errors.append(f"research: HTTP {reply.status_code} {reply.text[:200]}")
                        return
                    job_url = reply.json()["links"]["self"]
                    while True:
                        await asyncio.sleep(RESEARCH_POLL_S)
                        job = (await client.get(job_url)).json()
                        if job["status"] in ("COMPLETED", "FAILED", "CANCELLED"):
                            research_done.append(job["status"])
                            break
                except httpx.HTTPError as exc:
                    errors.append(f"research: {exc!r}")
                    return

        research_done: list[str] = []
        began, cpu = time.perf_counter(), time.process_time()
        beside = asyncio.gather(miss_worker(), research_worker())
        await asyncio.gather(*(hit_worker(i, c) for i, c in enumerate(clients)))
        # The hits' window: a miss sent just before the end may take seconds more.
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
        await beside
    return {
        "hit_lat": hit_lat,
        "miss_lat": miss_lat,
        "research_done": research_done,
        "errors": errors,
        "not_hits": not_hits,
        "wall": wall,
        "cpu_s": cpu,
    }


async def drive_raw(url: str, hits: list[str], clients: int, duration: float) -> Any:
    """The hit clients as bare HTTP/1.1 keep-alive connections (no miss stream): what the
    server sustains when a client costs next to no CPU (``--raw-clients``)."""
    host, port = url.removeprefix("http://").split(":")
    stop = time.perf_counter() + duration
    hit_lat: list[float] = []
    errors: list[str] = []
    not_hits = 0
    requests = []
    for question in hits:
        body = json.dumps({"question": question}).encode()
        head = (
            f"POST /v1/ask HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        requests.append(head + body)

    async def worker(seed: int) -> None:
        nonlocal not_hits
        rng = random.Random(seed)
        reader, writer = await asyncio.open_connection(host, int(port))
        while time.perf_counter() < stop:
            start = time.perf_counter()
            writer.write(rng.choice(requests))
            await writer.drain()
            lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in lines
                if line.lower().startswith(b"content-length")
            )
            body = await reader.readexactly(length)
            if not lines[0].startswith(b"HTTP/1.1 200"):
                errors.append(lines[0].decode())
                continue
            hit_lat.append(time.perf_counter() - start)
            # The answer's JSON is compact (pydantic): its cache object opens with tier1.
            not_hits += b'"cache":{"tier1":"hit"' not in body
        writer.close()

    began, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    return {
        "hit_lat": hit_lat,
        "miss_lat": [],
        "research_done": [],
        "errors": errors,
        "not_hits": not_hits,
        "wall": wall,
        "cpu_s": cpu,  # this process's, the miss stream's included
    }


async def run_part(plan: dict[str, Any], part: dict[str, Any]) -> Any:
    """One process's share of the plan: wait for ``go``, then drive; with its CPU seconds."""
    url = part.get("url", plan["url"])  # --replicas: each part drives one replica
    hits, duration = plan["hits"], plan["duration"]
    # Each hit worker has its own client, as a separate user has: one keep-alive connection.
    # (A pool shared by C workers polls each idle connection's socket on every request.) No
    # timeout: the parent process bounds the run, and a per-request cancel scope costs CPU.
    raw = plan.get("clients") == "raw"
    full = plan.get("clients") == "client"
    clients = [] if raw else await open_clients(url, part["clients"], full)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if raw:
        result, missing = await asyncio.gather(
            drive_raw(url, hits, part["clients"], duration),
            drive(url, hits, part["misses"], [], duration, part.get("research")),
        )
        result["errors"] += missing["errors"]
        result["miss_lat"], result["research_done"] = missing["miss_lat"], missing["research_done"]
    else:
        result = await drive(url, hits, part["misses"], clients, duration, part.get("research"))
    return result


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    part = plan["parts"][int(sys.argv[2])]
    result = uvloop.run(run_part(plan, part))
    result_path(Path(sys.argv[1]), int(sys.argv[2])).write_text(json.dumps(result))


def result_path(plan_path: Path, part: int) -> Path:
    """Where the client process of ``part`` writes its results."""
    return plan_path.with_name(f"result-{part}.json")


if __name__ == "__main__":
    main()
