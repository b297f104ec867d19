"""Research jobs in a process of their own: the service's hits never share a GIL with a job.

::

    process = ResearchProcess(settings, workers=2)   # nothing started yet
    process.wake()      # a job was submitted: start the process if needed, and tell it
    process.stop()      # the pipe closes: the child saves its jobs and exits (blocking)

A research job is seconds of Python work (parsing, sentence splitting, grounding, the stages'
bookkeeping) between its LLM calls. On the server's event loop that work holds the GIL while
cached answers wait, and the jobs wait for the requests in turn: under the load of
``benchmarks/serve_load.py`` (32 hit clients and a miss stream beside), jobs one after another
finished 4 in 10 s on the event loop and 11-12 in a process of their own. So the service hands
jobs to a child process, started (with the ``spawn`` method: the server has threads) the first
time there is a job to run, and kept until the server stops; a job that crashes its process
does not take the service down. The child runs :class:`~medlit.research.worker.ResearchWorkers`
over the same store; jobs, leases, cancels and progress events already travel through the
store, so the server submits, lists, cancels and streams them exactly as before.

One pipe joins the two: the server writes a byte on it when it accepts a job (so the child
claims it at once, not at its next poll), and closes it to stop the child. When the server dies
(even kill -9) the child reads end-of-file, saves what its jobs have done, gives their leases
back and exits; the next server resumes them. A child that dies is started again by the next
:meth:`ResearchProcess.wake` (each submit, and a watchdog while jobs are unfinished).

``medlit research worker`` runs the same loop in the foreground, e.g. on another host sharing a
PostgreSQL store.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from contextlib import suppress
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

from medlit.heavy import lower_thread_priority
from medlit.log import configure_logging, get_logger

if TYPE_CHECKING:
    from medlit.config import Settings

__all__ = ["ResearchProcess", "run_workers"]

log = get_logger("research.process")

STOP_TIMEOUT_S = 30.0


async def run_workers(
    settings: Settings, workers: int, stop: asyncio.Event, wake: asyncio.Event | None = None
) -> None:
    """Run ``workers`` research jobs at once from the store until ``stop`` is set; ``wake``
    (when given) is set by whoever submits a job, so it is claimed at once, and set again
    after ``stop``."""
    from medlit.research.worker import ResearchWorkers
    from medlit.runtime import Runtime

    async with Runtime(settings) as runtime, ResearchWorkers(runtime, workers=workers) as pool:
        log.info("research_process_ready", workers=workers)
        while True:
            if wake is None:
                await stop.wait()
            else:  # whoever sets ``stop`` sets ``wake`` too
                await wake.wait()
                wake.clear()
            if stop.is_set():
                return
            pool.wake()


def _child_main(settings: Settings, workers: int, conn: Connection) -> None:
    """The child process: run the workers until the pipe closes (the server stopped or died).

    It runs below the server's CPU priority (``service.background_nice``): a job's CPU work
    takes what the cached answers leave. Every thread it starts inherits that.
    """
    configure_logging(settings.log_level)
    lower_thread_priority(settings.service.background_nice)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop, wake = asyncio.Event(), asyncio.Event()

        def listen() -> None:
            # A thread of its own (not the default executor's): it blocks for the process's life.
            with suppress(EOFError, OSError):
                while conn.recv_bytes():
                    loop.call_soon_threadsafe(wake.set)
            loop.call_soon_threadsafe(stop.set)
            loop.call_soon_threadsafe(wake.set)

        threading.Thread(target=listen, name="medlit-research-pipe", daemon=True).start()
        await run_workers(settings, workers, stop, wake)

    with suppress(KeyboardInterrupt):  # Ctrl-C reaches the whole process group: the server
        asyncio.run(main())  # stops the child through the pipe right after


class ResearchProcess:
    """The server's research child process (started on first need, stopped with the server).

    Args:
        settings: the server's settings (handed to the child as they are).
        workers: research jobs the child runs at once.
    """

    def __init__(self, settings: Settings, workers: int) -> None:
        self.settings = settings
        self.workers = workers
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        """Whether the child is alive."""
        return self._process is not None and self._process.is_alive()

    def wake(self) -> None:
        """Make sure the child runs (start it, or start it again if it died), and tell it a job
        is waiting. Safe from any thread; a no-op once stopped."""
        with self._lock:
            if self._stopped:
                return
            if not self.running:
                self._start()
            assert self._conn is not None
            with suppress(OSError):  # died just now: the next wake starts it again
                self._conn.send_bytes(b"w")

    def _start(self) -> None:
        if self._process is not None:
            log.warning("research_process_died", exitcode=self._process.exitcode)
            self._close_pipe()
        context = multiprocessing.get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_child_main,
            args=(self.settings, self.workers, receive),
            name="medlit-research",
            daemon=False,  # it stops itself when the pipe closes, after saving its jobs
        )
        process.start()
        receive.close()  # the child holds it now; ours would hide the end-of-file from it
        self._process, self._conn = process, send
        log.info("research_process_started", pid=process.pid, workers=self.workers)

    def _close_pipe(self) -> None:
        if self._conn is not None:
            with suppress(OSError):
                self._conn.close()
            self._conn = None

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Close the pipe and wait for the child to save its jobs and exit (killed after
        ``timeout`` seconds). Blocking: call it from a thread."""
        with self._lock:
            self._stopped = True
            self._close_pipe()
            process, self._process = self._process, None
        if process is None:
            return
        process.join(timeout)
        if process.is_alive():
            log.warning("research_process_kill", pid=process.pid)
            process.kill()
            process.join(5)
        log.info("research_process_stopped", pid=process.pid, exitcode=process.exitcode)
