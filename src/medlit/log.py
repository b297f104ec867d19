"""Structured logging (structlog) to stderr, configured once at the edge."""

from __future__ import annotations

import logging
import sys
from typing import TextIO, cast

import structlog

__all__ = ["configure_logging", "get_logger"]

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class _Stderr:
    """Writes to whatever ``sys.stderr`` is now (pytest swaps it; never hold a stale one)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "warning", *, json: bool = False) -> None:
    """Route structlog events at ``level`` and above to stderr (key=value, or JSON lines)."""
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.WARNING)),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger bound to a component name (stderr, warnings and up, until configured)."""
    if not structlog.is_configured():
        configure_logging()
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(component=name)
    return logger
