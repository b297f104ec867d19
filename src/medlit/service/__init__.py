"""The HTTP service (``medlit serve``): FastAPI over the one :class:`~medlit.runtime.Runtime`.

Modules: ``app`` (the factory), ``ask`` / ``search`` / ``health`` (routes), ``auth`` and
``keys`` (API keys → tenants, rate limits), ``deps`` (route dependencies), ``problems``
(RFC 9457 errors), ``flights`` (single-flight of identical asks), ``metrics`` (Prometheus),
``server`` (uvicorn and the bind rules).
"""

from __future__ import annotations

from medlit.service.app import create_app

__all__ = ["create_app"]
