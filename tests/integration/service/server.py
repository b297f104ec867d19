"""The real service on loopback for tests and benchmarks: uvicorn in a thread, a free port.

::

    with ServiceServer(settings) as server:
        httpx.post(f"{server.url}/v1/ask", json={...})

The runtime is opened and closed on the server's own event loop, like ``medlit serve``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvicorn

from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.app import create_app
from medlit.service.server import uvicorn_config

__all__ = ["ServiceServer"]

T = TypeVar("T")


class ServiceServer:
    """``create_app`` under a real uvicorn on 127.0.0.1 (a free port), in a thread.

    Args:
        settings: the settings of the runtime.
        require_keys: passed to :func:`~medlit.service.app.create_app`.
        uvloop: run on uvloop, as ``medlit serve`` does (default: asyncio, as the tests do).
    """

    def __init__(
        self, settings: Settings, *, require_keys: bool | None = None, uvloop: bool = False
    ) -> None:
        self.settings = settings
        self.uvloop = uvloop
        self.require_keys = require_keys
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.runtime: Runtime | None = None
        self.app: Any = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> ServiceServer:
        """Start serving; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self._run, name="medlit-service", daemon=True)
        self._thread.start()
        if not self._ready.wait(120) or self._error is not None:
            raise RuntimeError(f"the service did not start: {self._error!r}")
        return self

    def _run(self) -> None:
        try:
            if self.uvloop:
                import uvloop

                uvloop.run(self._main())
            else:
                asyncio.run(self._main())
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.runtime = Runtime(self.settings)
        try:
            self.app = create_app(self.runtime, require_keys=self.require_keys)
            config = uvicorn_config(
                self.app, host="127.0.0.1", port=self.port, timeout_keep_alive=30
            )
            self._server = uvicorn.Server(config)
            serving = asyncio.create_task(self._server.serve())
            while not self._server.started and not serving.done():  # noqa: ASYNC110 - uvicorn has no event
                await asyncio.sleep(0.01)
            self._ready.set()
            await serving
        finally:
            await self.runtime.aclose()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the server's event loop (work beside the requests it serves)."""
        assert self.loop is not None, "not started"
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Stop serving and close the runtime."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(120)

    def __enter__(self) -> ServiceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
