"""``medlit serve`` as separate processes, as a user (or a deployment) runs them.

::

    proc = serve_process(env, port)                 # returns once /healthz answers
    ...
    stop_process(proc)                               # SIGTERM, then wait

``env`` is the ``MEDLIT_*`` environment of the process (the caller's own ``MEDLIT_*`` variables
are dropped first). ``prelude`` is Python run before the CLI, e.g. to make the process see
another host name (a worker "on another host" whose leases must expire rather than be taken
over at once).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

__all__ = ["free_port", "serve_process", "stop_process"]


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_process(
    env: dict[str, str],
    port: int,
    *args: str,
    prelude: str = "",
    log: Path | None = None,
    timeout_s: float = 180.0,
) -> subprocess.Popen[bytes]:
    """Start ``medlit serve --port PORT ARGS`` and wait until it answers ``/healthz``.

    Args:
        env: the process's ``MEDLIT_*`` variables.
        port: the port to listen on (loopback).
        args: more ``medlit serve`` options.
        prelude: Python statements run before the CLI.
        log: a file for the process's stdout and stderr (default: discarded).
        timeout_s: how long it may take to start.
    """
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    full.update(env)
    code = f"{prelude}\nfrom medlit.cli import main; main()"
    out = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "serve", "--port", str(port), *args],
            env=full,
            stdout=out,
            stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        )
    finally:
        if log is not None:
            out.close()  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except httpx.TransportError:
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:] if log is not None else ""
                raise AssertionError(f"medlit serve exited ({proc.returncode}): {tail}") from None
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("medlit serve did not start") from None
            time.sleep(0.1)


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """SIGTERM (a graceful stop), then SIGKILL if it has not exited in ``timeout_s``."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(120)  # reaped after its teardown: tens of seconds when loaded
