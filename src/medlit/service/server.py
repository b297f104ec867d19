"""Run the service under uvicorn, with the rule on where it may listen.

Before any API key was created every caller is tenant ``default`` with full access, so the
server then listens on loopback only and says so; asked to listen anywhere else, it refuses to
start. The same rule is enforced on every request (:mod:`medlit.service.auth`), so a server
whose keys are all revoked does not open up.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from medlit.config import Settings
from medlit.errors import ConfigError

if TYPE_CHECKING:
    import uvicorn

__all__ = ["check_bind", "is_loopback", "ready_line", "serve", "uvicorn_config"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, active_keys: int, *, keys_created: bool | None = None) -> str:
    """The start-up notice for listening on ``host`` with ``active_keys`` usable keys
    (``keys_created``: whether any key was ever created; default: whether any is active).

    Raises:
        ConfigError: a non-loopback address and no key ever created.
    """
    if keys_created is None:
        keys_created = active_keys > 0
    if active_keys:
        return f"API keys required ({active_keys} active); listening on {host}"
    if keys_created:
        return (
            f"API keys required, but none is active (all revoked or expired): every request "
            f"will get a 401 until you create one (medlit keys create); listening on {host}"
        )
    if not is_loopback(host):
        raise ConfigError(
            f"refusing to listen on {host} without API keys: anyone who can reach it would "
            "have full access. Create a key first (medlit keys create --tenant NAME) or "
            "listen on 127.0.0.1"
        )
    return (
        "no API keys: every request runs as tenant 'default', so listening on loopback only "
        f"({host}); create keys with 'medlit keys create --tenant NAME'"
    )


def uvicorn_config(app: Any, *, host: str, port: int, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration of the service (``medlit serve``, and the tests and benchmarks
    that serve it): quiet logs, the app's lifespan, and uvicorn's httptools protocol sending
    each response in one write (:mod:`medlit.service.http_protocol`), its log lines redacted
    (:func:`medlit.log.stdlib_log_config`). ``options`` add to or
    override uvicorn's settings."""
    import uvicorn

    from medlit.log import stdlib_log_config
    from medlit.service.http_protocol import CorkedHttpToolsProtocol

    settings: dict[str, Any] = {
        "log_level": "warning",
        "log_config": stdlib_log_config("warning"),  # redacted, one traceback per failure kind
        "access_log": False,
        "lifespan": "on",
        "http": CorkedHttpToolsProtocol,
    }
    return uvicorn.Config(app, host=host, port=port, **{**settings, **options})


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    research_workers: int | None = None,
    notify: Callable[[str], None] = print,
) -> None:
    """Open the runtime, check the bind rule, and serve until interrupted."""
    import uvicorn

    from medlit.runtime import Runtime
    from medlit.service.app import create_app
    from medlit.service.keys import KeyStore

    if research_workers is not None:
        settings.service.research_workers = research_workers
    runtime = Runtime.open(settings)
    try:
        keys = KeyStore(runtime.store)
        notice = check_bind(host, keys.active_count(), keys_created=keys.ever_created())
    except BaseException:
        runtime.store.close()
        raise
    notify(notice)
    # The app closes the runtime at shutdown: uvicorn re-raises SIGTERM/SIGINT once it has
    # shut down, so nothing after run() is sure to execute.
    app = create_app(runtime, close_runtime=True)
    config = uvicorn_config(app, host=host, port=port)

    class Server(uvicorn.Server):
        """uvicorn's server, saying where it serves once it does (its own line is an INFO
        log, below the warning level the service logs at)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                bound = [s.getsockname() for server in self.servers for s in server.sockets]
                notify(ready_line(host, int(bound[0][1]) if bound else port))

    Server(config).run()


def ready_line(host: str, port: int) -> str:
    """What ``medlit serve`` prints once it answers: where the page, the API and its docs are."""
    everywhere = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}
    shown = everywhere.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"  # an IPv6 address
    base = f"http://{shown}:{port}"
    where = ""
    if host in everywhere:
        where = f" (and on every address of this host, as {host or '0.0.0.0'})"
    return (
        f"serving on {base}/ (the web page){where}; the API under {base}/v1, its docs at "
        f"{base}/docs; Ctrl-C stops"
    )
