"""Structured logging (structlog) to stderr, configured once at the edge.

Two rules hold for every line written, whatever failed:

- **No secret.** The rendered line (its traceback included) passes :func:`redact`: an API key
  keeps only its public id (``mlk_<key id>_[redacted]``), a ``Bearer``/``Basic`` credential, an
  ``Authorization``/``api_key``/``password`` value and the password of a URL become
  ``[redacted]``. The standard library's loggers (uvicorn's, libraries') write through the same
  redaction (:class:`RedactingFormatter`, :func:`stdlib_log_config`).
- **One traceback per kind of failure.** The first time an exception of one kind (its type and
  the line it was raised at, under one event name) is logged, its traceback is written, plain
  (no local variables); afterwards, for an hour, the event is logged without it and says how
  many times the kind has been seen (:class:`TracebackOnce`). A failure repeated per request
  cannot flood the log.

structlog is imported by the first event at or above the configured level (a cached answer
logs nothing and never pays for its import).
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections.abc import MutableMapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    import structlog

__all__ = [
    "TRACEBACKS",
    "RedactingFormatter",
    "TracebackOnce",
    "configure_logging",
    "get_logger",
    "redact",
    "stdlib_log_config",
]

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}

REDACTED = "[redacted]"

# A credential after an auth scheme (not an mlk_ key: that keeps its public id, below).
_SCHEME = re.compile(r"(?i)\b(bearer|basic|digest|token)(\s+|%20|\+)(?!mlk_)[^\s'\"\\,;)\]}>]+")
# medlit's keys: mlk_<12 hex id>_<secret>; anything else that starts like one goes whole.
_KEY = re.compile(r"mlk_[A-Za-z0-9_\-]+(?:\[redacted\])?")
_KEY_ID = re.compile(r"mlk_([0-9a-f]{12})_")
# A named secret: authorization: ..., 'x-api-key': b'...', password=..., api_key="..."
_NAMED = re.compile(
    r"(?i)((?:\b(?:authorization|token)|x-api-key|api[_-]?key|password|passwd|secret)"
    r"(?:['\"]?\s*[:=]|['\"]\s*,)\s*\(?\s*(?:b?['\"])?+)"
    r"(?!\[redacted\]|bearer\b|basic\b|mlk_)([^\s'\"\\,;)\]}>]+)"
)
# The password of a URL: scheme://user:password@host
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^:/@\s]+:)[^@\s/]+@")


def _key(match: re.Match[str]) -> str:
    if match.group(0).endswith(REDACTED):
        return match.group(0)  # redacted already
    known = _KEY_ID.match(match.group(0))
    return f"mlk_{known.group(1)}_{REDACTED}" if known else f"mlk_{REDACTED}"


def redact(text: str) -> str:
    """``text`` with every credential it shows replaced by ``[redacted]`` (an API key keeps
    its public id)."""
    if not text:
        return text
    text = _SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _KEY.sub(_key, text)
    text = _NAMED.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)


class TracebackOnce:
    """Decides whether a failure's traceback is written: once per kind of failure (the
    exception's type, the file and line it was raised at, and the event logging it) every
    ``period_s`` seconds; thread-safe, and bounded in memory.

    Args:
        period_s: after this long, a kind's traceback is written again (once).
        max_kinds: kinds remembered at most (then it starts afresh).
    """

    def __init__(self, period_s: float = 3600.0, max_kinds: int = 1024) -> None:
        self.period_s = period_s
        self.max_kinds = max_kinds
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, ...], tuple[float, int]] = {}

    def count(self, event: str, exc: BaseException) -> int:
        """How many times this kind was seen, this one included (1: write the traceback)."""
        kind = (event, *_where(exc))
        now = time.monotonic()
        with self._lock:
            first, n = self._seen.get(kind, (now, 0))
            if now - first > self.period_s:
                first, n = now, 0
            if len(self._seen) >= self.max_kinds and kind not in self._seen:
                self._seen.clear()
            self._seen[kind] = (first, n + 1)
        return n + 1

    def reset(self) -> None:
        """Forget every kind seen (tests)."""
        with self._lock:
            self._seen.clear()


def _where(exc: BaseException) -> tuple[str, str]:
    """The exception's type and where it was raised (the innermost frame of its traceback)."""
    tb: TracebackType | None = exc.__traceback__
    place = ""
    while tb is not None:
        place = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{type(exc).__module__}.{type(exc).__qualname__}", place


TRACEBACKS = TracebackOnce()


def _exception_of(exc_info: Any) -> BaseException | None:
    if isinstance(exc_info, BaseException):
        return exc_info
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        return exc_info[1] if isinstance(exc_info[1], BaseException) else None
    if exc_info is True:
        return sys.exc_info()[1]
    return None


def _traceback_once(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: drop the traceback of a failure kind already logged."""
    exc_info = event_dict.get("exc_info")
    if not exc_info:
        return event_dict
    exc = _exception_of(exc_info)
    if exc is None:
        event_dict.pop("exc_info", None)
        return event_dict
    event_dict["exc_info"] = exc  # the renderer must not read sys.exc_info() later
    n = TRACEBACKS.count(str(event_dict.get("event", "")), exc)
    if n > 1:
        event_dict.pop("exc_info")
        event_dict["error"] = redact(f"{type(exc).__name__}: {exc}")[:500]
        event_dict["traceback"] = f"as logged before (seen {n} times)"
    return event_dict


def _redact_rendered(_logger: Any, _method: str, rendered: Any) -> Any:
    """structlog's last step: the rendered line, redacted."""
    if isinstance(rendered, str):
        return redact(rendered)
    if isinstance(rendered, bytes):
        return redact(rendered.decode("utf-8", "replace")).encode("utf-8")
    return rendered


class RedactingFormatter(logging.Formatter):
    """A :class:`logging.Formatter` whose output (the traceback too) passes :func:`redact`,
    and which writes one traceback per kind of failure (:class:`TracebackOnce`)."""

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info and record.exc_info[1] is not None:
            n = TRACEBACKS.count(record.getMessage(), record.exc_info[1])
            if n > 1:
                exc = record.exc_info[1]
                record = logging.makeLogRecord(record.__dict__)
                record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc}; traceback "
                record.msg += f"as logged before, seen {n} times)"
                record.args = None
                record.exc_info = None
                record.exc_text = None
        return redact(super().format(record))


class _Stderr:
    """Writes to whatever ``sys.stderr`` is now (pytest swaps it; never hold a stale one)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_STDLIB_FORMAT = "%(asctime)s [%(levelname)s] %(name)s: %(message)s"


def stdlib_log_config(level: str = "warning") -> dict[str, Any]:
    """A :func:`logging.config.dictConfig` for uvicorn's loggers (``uvicorn.Config``'s
    ``log_config``) that writes through :class:`RedactingFormatter` to stderr."""
    name = logging.getLevelName(_LEVELS.get(level, logging.WARNING))
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"redacting": {"()": RedactingFormatter, "fmt": _STDLIB_FORMAT}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "redacting",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            logger: {"handlers": ["stderr"], "level": name, "propagate": False}
            for logger in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }


def _install_last_resort() -> None:
    """Library records that no handler takes reach stderr through :func:`redact`: the
    standard library's last-resort handler (WARNING and up, as it was) is replaced, and the
    root logger is left as it is."""
    if getattr(logging.lastResort, "_medlit", False):
        return
    handler = logging.StreamHandler(cast(TextIO, _Stderr()))
    handler.setFormatter(RedactingFormatter("%(message)s"))
    handler.setLevel(logging.WARNING)
    handler._medlit = True  # type: ignore[attr-defined]
    logging.lastResort = handler


# The level and format :func:`configure_logging` was last asked for. structlog (about 80 ms of
# imports, most of a cached answer's logging) is imported by the first event at or above the
# level, and configured then: a process that logs nothing never imports it.
_settings: dict[str, Any] = {"level": logging.WARNING, "json": False}


def configure_logging(level: str = "warning", *, json: bool = False) -> None:
    """Route structlog events at ``level`` and above to stderr (key=value, or JSON lines),
    every line redacted and each kind of failure's traceback written once."""
    _settings.update(level=_LEVELS.get(level, logging.WARNING), json=json, done=False)
    _install_last_resort()
    if "structlog" in sys.modules:  # in use already: configured now
        _configure_structlog()


def _configure_structlog() -> None:
    import structlog

    json = bool(_settings["json"])
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
    )
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _traceback_once,
    ]
    if json:
        processors.append(structlog.processors.format_exc_info)
    structlog.configure(
        processors=[*processors, renderer, _redact_rendered],
        wrapper_class=structlog.make_filtering_bound_logger(int(_settings["level"])),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _Stderr())),
        cache_logger_on_first_use=False,
    )
    _settings["done"] = True


class _Logger:
    """A component's logger: an event below the configured level returns at once; the first
    one at or above it imports and configures structlog, which writes it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def _emit(self, level: int, method: str, event: str, args: tuple[Any, ...], kw: Any) -> None:
        if level >= int(_settings["level"]):
            getattr(self._structlog(), method)(event, *args, **kw)

    def _structlog(self) -> Any:
        if not _settings.get("done"):
            _configure_structlog()
        import structlog

        return structlog.get_logger(component=self._name)

    def debug(self, event: str, *args: Any, **kw: Any) -> None:
        self._emit(logging.DEBUG, "debug", event, args, kw)

    def info(self, event: str, *args: Any, **kw: Any) -> None:
        self._emit(logging.INFO, "info", event, args, kw)

    def warning(self, event: str, *args: Any, **kw: Any) -> None:
        self._emit(logging.WARNING, "warning", event, args, kw)

    def error(self, event: str, *args: Any, **kw: Any) -> None:
        self._emit(logging.ERROR, "error", event, args, kw)

    def exception(self, event: str, *args: Any, **kw: Any) -> None:
        self._emit(logging.ERROR, "exception", event, args, kw)

    def __getattr__(self, name: str) -> Any:  # anything else structlog's logger offers
        return getattr(self._structlog(), name)


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger bound to a component name (stderr, warnings and up, until configured)."""
    _install_last_resort()
    return cast("structlog.typing.FilteringBoundLogger", _Logger(name))
