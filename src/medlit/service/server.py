"""Run the service under uvicorn, with the rule on where it may listen.

Without API keys every caller is tenant ``default`` with full access, so the server then listens
on loopback only and says so; asked to listen anywhere else without a key, it refuses to start.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from medlit.config import Settings
from medlit.errors import ConfigError

__all__ = ["check_bind", "is_loopback", "serve"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, active_keys: int) -> str:
    """The start-up notice for listening on ``host`` with ``active_keys`` keys.

    Raises:
        ConfigError: a non-loopback address without any API key.
    """
    if active_keys:
        return f"API keys required ({active_keys} active); listening on {host}"
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
        notice = check_bind(host, KeyStore(runtime.store).active_count())
    except BaseException:
        runtime.store.close()
        raise
    notify(notice)
    # The app closes the runtime at shutdown: uvicorn re-raises SIGTERM/SIGINT once it has
    # shut down, so nothing after run() is sure to execute.
    app = create_app(runtime, close_runtime=True)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run()
