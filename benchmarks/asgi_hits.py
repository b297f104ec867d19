"""Cached asks through the service's ASGI app in one process: no HTTP, no clients, no load.

::

    python benchmarks/asgi_hits.py --old OLD/src [--hits 4000] [--rounds 3]

What a tier-1 hit costs the service itself, which on a shared machine ``serve_load.py`` can
only see through the service's share of the cores. The app (``create_app`` over a
:class:`~medlit.runtime.Runtime`, its fast path and middlewares as ``medlit serve`` runs them)
answers three questions once each from the fake E-utilities (the miss), then ``--hits``
requests for them, one at a time, each a ``POST /v1/ask`` handed to the app as ASGI messages;
every answer must be a tier-1 hit (status 200). Old and new code alternate, ``--rounds`` times,
each in a process of its own (``PYTHONPATH``). Per version: wall milliseconds per hit (p50)
and the process's CPU milliseconds per hit (its threads included), the least of its rounds.
Last line: ``old_p50_ms=... new_p50_ms=... old_cpu_ms=... new_cpu_ms=... p50_ratio=...
cpu_ratio=...`` (new / old).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "Does aspirin prevent stroke in adults?",
    "Does aspirin reduce the risk of stroke?",
    "Is aspirin effective for secondary stroke prevention?",
]


async def _call(app: Any, body: bytes) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/ask",
        "raw_path": b"/v1/ask",
        "root_path": "",
        "query_string": b"",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)  # the client stays
        return {"type": "http.disconnect"}

    out: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    await app(scope, receive, send)
    return out[0]["status"], b"".join(m.get("body", b"") for m in out[1:])


async def _measure(hits: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from tests.fakes.eutils_server import FakeEutils
    from tests.fakes.fixtures import sample_articles

    from medlit.config import Settings
    from medlit.log import configure_logging
    from medlit.runtime import Runtime
    from medlit.service.app import create_app

    configure_logging("error")
    fake = FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None)
    with tempfile.TemporaryDirectory() as tmp, fake as eutils:
        settings = Settings(home=Path(tmp) / "home")
        settings.pubmed.base_url = eutils.base_url
        settings.pubmed.requests_per_second = 50.0
        settings.europepmc.enabled = False
        settings.local.enabled = False
        async with Runtime(settings) as runtime:
            app = create_app(runtime)
            bodies = []
            for question in QUESTIONS:
                body = json.dumps({"question": question}).encode()
                await _call(app, body)  # the miss
                _, again = await _call(app, body)
                if json.loads(again)["cache"]["tier1"] == "hit":
                    bodies.append(body)
            if not bodies:
                raise SystemExit("no question was admitted to the answer cache")
            rng = random.Random(1)
            for _ in range(200):  # warm
                await _call(app, rng.choice(bodies))
            times = []
            cpu = time.process_time()
            for _ in range(hits):
                start = time.perf_counter()
                status, body = await _call(app, rng.choice(bodies))
                times.append(time.perf_counter() - start)
                if status != 200 or b'"tier1":"hit"' not in body:
                    raise SystemExit(f"not a hit: {status} {body[:300]!r}")
            cpu = time.process_time() - cpu
    times.sort()
    return {"p50_ms": times[len(times) // 2] * 1e3, "cpu_ms": cpu / hits * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, help="The old code's src directory.")
    parser.add_argument("--new", type=Path, default=ROOT / "src", help="The new code's src.")
    parser.add_argument("--hits", type=int, default=4000, help="Hits timed per round.")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds per version.")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_measure(args.hits))))
        return
    if args.old is None:
        parser.error("--old OLD/src is required")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    found: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for label in ("old", "new") if r % 2 == 0 else ("new", "old"):
            src = (args.old if label == "old" else args.new).resolve()
            done = subprocess.run(
                [sys.executable, __file__, "--child", "--hits", str(args.hits)],
                env={**os.environ, "PYTHONPATH": str(src)},
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode:
                sys.exit(f"{label}: exit {done.returncode}\n{done.stderr[-2000:]}")
            found[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {label}: {found[label][-1]}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    best = {
        label: {k: min(run[k] for run in runs) for k in ("p50_ms", "cpu_ms")}
        for label, runs in found.items()
    }
    print(f"{'':<5} {'p50 ms':>8} {'CPU ms':>8}   (least of {args.rounds} rounds of {args.hits})")
    for label in ("old", "new"):
        print(f"{label:<5} {best[label]['p50_ms']:8.3f} {best[label]['cpu_ms']:8.3f}")
    print(
        f"old_p50_ms={best['old']['p50_ms']:.3f} new_p50_ms={best['new']['p50_ms']:.3f} "
        f"old_cpu_ms={best['old']['cpu_ms']:.3f} new_cpu_ms={best['new']['cpu_ms']:.3f} "
        f"p50_ratio={best['new']['p50_ms'] / best['old']['p50_ms']:.2f} "
        f"cpu_ratio={best['new']['cpu_ms'] / best['old']['cpu_ms']:.2f}"
    )


if __name__ == "__main__":
    main()
