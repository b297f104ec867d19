"""The per-host rate limiter holds NCBI's limit for concurrent callers and processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from medlit.config import Settings
from medlit.sources.pubmed import PubMedSource
from medlit.sources.ratelimit import RateLimiter
from medlit.types import SearchQuery
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.fixtures import sample_articles

TERMS = ["aspirin", "statins", "metformin", "vitamin", "mammography"]


@pytest.mark.slow
async def test_forty_concurrent_searches_stay_under_the_limit(
    settings: Settings, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    fake = make_fake_eutils(articles=sample_articles())  # 3/s, 10/s with an api_key
    settings.pubmed.base_url = fake.base_url
    settings.pubmed.api_key = "test-key"  # type: ignore[assignment]
    started = time.monotonic()
    async with PubMedSource(settings) as source:
        results = await asyncio.gather(
            *(source.search(SearchQuery(term=TERMS[i % len(TERMS)], limit=5)) for i in range(40))
        )
    elapsed = time.monotonic() - started
    assert all(len(r) >= 1 for r in results)
    assert [r.status for r in fake.history].count(429) == 0
    peak = fake.max_in_window(1.0)
    assert peak <= 10
    assert len(fake.history) == 80  # an esearch and an efetch per search, nothing retried
    print(f"\n40 searches: {len(fake.history)} requests, peak {peak}/s, {elapsed:.2f}s")


async def test_without_a_shared_limiter_the_fake_sees_too_many(
    tmp_path: Path, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    """The control: two homes mean two limiters, and the fake's 429s show it."""
    fake = make_fake_eutils(articles=sample_articles())
    sources = []
    for name in ("a", "b"):
        s = Settings(home=tmp_path / name)
        s.pubmed.base_url = fake.base_url
        s.pubmed.max_retries = 0
        sources.append(PubMedSource(s))
    outcomes = await asyncio.gather(
        *(src.esearch(SearchQuery(term="aspirin")) for src in sources for _ in range(3)),
        return_exceptions=True,
    )
    for src in sources:
        await src.aclose()
    assert fake.max_in_window(1.0) == 6
    assert any(isinstance(o, Exception) for o in outcomes)


#: How long a slot left pending by a dead process holds its place (the expiry tests).
HOLD_S = 1.0


async def test_two_limiters_on_one_file_share_the_budget(tmp_path: Path) -> None:
    db = tmp_path / "ratelimit.sqlite3"
    first, second = RateLimiter(db, "h", 4, window_s=0.5), RateLimiter(db, "h", 4, window_s=0.5)
    stamps: list[float] = []

    async def take(limiter: RateLimiter) -> None:
        async with limiter.slot(hold_s=5):
            stamps.append(time.monotonic())

    started = time.monotonic()
    await asyncio.gather(*(take(lim) for lim in [first, second] * 6))
    stamps.sort()
    # 12 requests at 4 per 0.5 s: no 5 of them inside one window, and no needless waiting.
    assert all(b - a >= 0.49 for a, b in zip(stamps, stamps[4:], strict=False))
    # About 1 s; the mistakes this guards against (one request a window, or waiting out
    # hold_s) take over 5 s. A loaded machine stretches the 1 s; 4 s leaves it room.
    assert time.monotonic() - started < 4.0


async def test_a_slot_left_pending_by_a_dead_process_expires(tmp_path: Path) -> None:
    limiter = RateLimiter(tmp_path / "rl.sqlite3", "h", 1, window_s=0.2)
    # Timed from before the slot is taken: it cannot be free again sooner than hold_s after
    # that, however slowly this runs; a slot that never expired would hang, hence the bound.
    started = time.monotonic()
    wait, slot = limiter.try_acquire(hold_s=HOLD_S)  # taken and never released
    assert wait == 0.0 and slot is not None
    assert limiter.try_acquire()[1] is None
    await asyncio.wait_for(limiter.acquire(), timeout=HOLD_S + 60)
    assert time.monotonic() - started >= HOLD_S - 0.01


async def test_a_cancelled_request_releases_its_slot(tmp_path: Path) -> None:
    """The release runs in a worker thread (off the event loop) and still happens when the
    request's task is cancelled: the next request waits the window, not ``hold_s``."""
    limiter = RateLimiter(tmp_path / "rl.sqlite3", "h", 1, window_s=0.2)
    entered = asyncio.Event()

    async def request() -> None:
        async with limiter.slot(hold_s=30):
            entered.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(request())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    wait, slot = limiter.try_acquire()
    # Released: only the window remains, or (on a machine slow enough) it has passed already.
    assert slot is not None or 0.0 < wait <= 0.2, wait
    if slot is not None:
        limiter.release(slot)
    started = time.monotonic()
    await limiter.acquire()
    # A window (0.2 s) at most; a slot never released would take hold_s (30 s).
    assert time.monotonic() - started < 15


_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from medlit.config import Settings
    from medlit.sources.pubmed import PubMedSource
    from medlit.types import SearchQuery
    from medlit.log import configure_logging
    configure_logging("error")

    async def main() -> None:
        settings = Settings()  # MEDLIT_HOME and MEDLIT_PUBMED_BASE_URL from the environment
        async with PubMedSource(settings) as source:
            for term in sys.argv[1:]:
                result = await source.esearch(SearchQuery(term=term))
                print(term, result.count, flush=True)

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_processes_sharing_a_home_share_the_limit(
    tmp_path: Path, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    fake = make_fake_eutils(articles=sample_articles())  # 3 per second, 429 beyond
    env = {
        **os.environ,
        "MEDLIT_HOME": str(tmp_path / "shared-home"),
        "MEDLIT_PUBMED_BASE_URL": fake.base_url,
        "MEDLIT_PUBMED_MAX_RETRIES": "0",  # a 429 would fail the worker, not hide in a retry
        "MEDLIT_LOG_LEVEL": "error",
    }
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, *TERMS[:4]],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [w.communicate(timeout=60) for w in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert len(out.splitlines()) == 4
    assert len(fake.history) == 12
    assert [r.status for r in fake.history].count(429) == 0
    assert fake.max_in_window(1.0) <= 3


# -- the limit across hosts: state in PostgreSQL ---------------------------------------
async def test_two_limiters_on_one_database_share_the_budget(pg_url: str) -> None:
    """Two limiters on separate connections (as on two hosts) never exceed the rate."""
    first = RateLimiter(pg_url, "h", 4, window_s=0.5)
    second = RateLimiter(pg_url, "h", 4, window_s=0.5)
    other = RateLimiter(pg_url, "other-host", 4, window_s=0.5)
    stamps: list[float] = []

    async def take(limiter: RateLimiter) -> None:
        async with limiter.slot(hold_s=5):
            stamps.append(time.monotonic())

    started = time.monotonic()
    await asyncio.gather(*(take(lim) for lim in [first, second] * 6))
    stamps.sort()
    assert all(b - a >= 0.49 for a, b in zip(stamps, stamps[4:], strict=False))
    assert time.monotonic() - started < 4.0  # about 1 s; see the SQLite test
    assert other.try_acquire()[0] == 0.0  # another host's budget is its own


async def test_a_pending_slot_in_the_database_expires(pg_url: str) -> None:
    limiter = RateLimiter(pg_url, "h", 1, window_s=0.2)
    started = time.monotonic()
    wait, slot = limiter.try_acquire(hold_s=HOLD_S)
    assert wait == 0.0 and slot is not None
    assert limiter.try_acquire()[1] is None
    await asyncio.wait_for(limiter.acquire(), timeout=HOLD_S + 60)
    assert time.monotonic() - started >= HOLD_S - 0.01


@pytest.mark.slow
def test_processes_on_separate_homes_share_the_limit_through_the_database(
    tmp_path: Path, pg_url: str, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    """Three processes with their own MEDLIT_HOME (as on three hosts), one database."""
    fake = make_fake_eutils(articles=sample_articles())  # 3 per second, 429 beyond
    workers = []
    for i in range(3):
        env = {
            **os.environ,
            "MEDLIT_HOME": str(tmp_path / f"home-{i}"),
            "MEDLIT_DATABASE_URL": pg_url,
            "MEDLIT_PUBMED_BASE_URL": fake.base_url,
            "MEDLIT_PUBMED_MAX_RETRIES": "0",
            "MEDLIT_LOG_LEVEL": "error",
        }
        workers.append(
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, *TERMS[:4]],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [w.communicate(timeout=90) for w in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert len(out.splitlines()) == 4
    assert len(fake.history) == 12
    assert [r.status for r in fake.history].count(429) == 0
    assert fake.max_in_window(1.0) <= 3
    assert not any((tmp_path / f"home-{i}" / "ratelimit.sqlite3").exists() for i in range(3))
