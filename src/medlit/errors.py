"""The exception tree of medlit.

Every error medlit raises on purpose is a :class:`MedlitError`. Third-party errors (httpx,
openai, sqlite3, lxml...) are translated at the boundary that calls the library, so callers
only ever see these::

    MedlitError
    ├── ValidationError          bad input from the user (CLI exit 2, HTTP 400)
    ├── ConfigError              settings that cannot work (exit 3)
    ├── NotFoundError            a job, session or entry that does not exist (exit 4)
    ├── SourceError              a literature source failed (exit 5)
    │   ├── RateLimited          429 after all retries (carries retry_after)
    │   ├── SourceUnavailable    5xx, timeouts, connection errors after all retries
    │   │   └── SourceUnreachable   the host does not resolve or refuses connections (no retry)
    │   └── SourceResponseError  an error body, truncated or malformed XML/JSON
    │       ├── MalformedResponse   a truncated or unparsable body (retried like a 5xx)
    │       └── QueryNotUnderstood  the source could use no term of the query (PhraseNotFound)
    ├── LLMError                 a language-model call failed (exit 6)
    │   ├── LLMConfigError       no provider configured for a task (message says how)
    │   ├── LLMTimeout           timed out after all retries
    │   │   └── TimeBudgetSpent     a research job's time ran out (call cut off or not sent)
    │   ├── LLMRateLimited       429 after all retries
    │   ├── LLMProviderError     any other provider error (auth, 4xx, 5xx)
    │   │   └── LLMUnreachable      the server does not resolve or refuses connections (no retry)
    │   └── LLMOutputError       the reply could not be parsed/validated (raw text kept)
    ├── StorageError             the store could not read or write (exit 7)
    │   └── CacheAdmissionError  the cache refused an entry (e.g. no citations)
    └── ResearchError            a research job failed (exit 8)
        ├── PlanningError        the planner could not produce a usable plan
        ├── JobBusy              another process or worker is running the job
        ├── JobCancelled         the job was cancelled (raised at its next step)
        └── LeaseLost            the worker's claim on the job expired and was taken over
"""

from __future__ import annotations

__all__ = [
    "CacheAdmissionError",
    "ConfigError",
    "JobBusy",
    "JobCancelled",
    "LLMConfigError",
    "LLMError",
    "LLMOutputError",
    "LLMProviderError",
    "LLMRateLimited",
    "LLMTimeout",
    "LLMUnreachable",
    "LeaseLost",
    "MalformedResponse",
    "MedlitError",
    "NotFoundError",
    "PlanningError",
    "QueryNotUnderstood",
    "RateLimited",
    "ResearchError",
    "SourceError",
    "SourceResponseError",
    "SourceUnavailable",
    "SourceUnreachable",
    "StorageError",
    "TimeBudgetSpent",
    "ValidationError",
]


class MedlitError(Exception):
    """Root of every error medlit raises on purpose."""

    exit_code: int = 1


class ValidationError(MedlitError):
    """The input is not acceptable (empty query, unknown option value, reversed dates...)."""

    exit_code = 2


class ConfigError(MedlitError):
    """The settings cannot work as given."""

    exit_code = 3


class NotFoundError(MedlitError):
    """A named thing (research job, session, cache entry) does not exist."""

    exit_code = 4


class SourceError(MedlitError):
    """A literature source (PubMed, Europe PMC, local corpus) failed.

    Attributes:
        source: name of the provider that failed (``pubmed``, ``europepmc``, ``local``).
    """

    exit_code = 5

    def __init__(self, message: str, *, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class RateLimited(SourceError):
    """The source kept answering 429 after every retry."""

    def __init__(self, message: str, *, source: str = "", retry_after: float | None = None) -> None:
        super().__init__(message, source=source)
        self.retry_after = retry_after


class SourceUnavailable(SourceError):
    """5xx, timeouts or connection failures after every retry."""


class SourceUnreachable(SourceUnavailable):
    """The source's host does not resolve or refuses connections: raised at the first try,
    since no retry can help; the message names the host and the setting to check."""


class SourceResponseError(SourceError):
    """The source answered, but with an error body or a malformed/truncated document."""


class MalformedResponse(SourceResponseError):
    """The body was cut short or could not be parsed: a transport fault, so it is retried within
    the same budget as a 5xx (an error the server *meant*, such as NCBI's ``<ERROR>``, is not)."""


class QueryNotUnderstood(SourceResponseError):
    """The source found nothing because it could use no term of the query (PhraseNotFound).

    Not an outage: ``search_all_providers`` reports it as ``no_match`` with NCBI's words.
    """


class LLMError(MedlitError):
    """A language-model call failed."""

    exit_code = 6


class LLMConfigError(LLMError):
    """No LLM provider is configured for a task that needs one; the message says how."""


class LLMTimeout(LLMError):
    """The LLM did not answer in time after every retry."""


class TimeBudgetSpent(LLMTimeout):
    """A research job's time budget ran out: the call was cut off, or not sent. Every stage
    takes it as a timeout (it goes on without the model); the job records why it stopped."""


class LLMRateLimited(LLMError):
    """The LLM provider kept answering 429 after every retry."""


class LLMProviderError(LLMError):
    """Any other provider failure (authentication, bad request, server error)."""


class LLMUnreachable(LLMProviderError):
    """The LLM server's host does not resolve or refuses connections: raised at the first try.
    ``ask`` answers with the evidence digest instead (one warning)."""


class LLMOutputError(LLMError):
    """The LLM's reply could not be parsed or validated, even after a repair attempt.

    Attributes:
        raw: the raw reply text, kept for the log.
    """

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class StorageError(MedlitError):
    """The store could not read or write."""

    exit_code = 7


class CacheAdmissionError(StorageError):
    """The cache refused an entry (for example, an answer without citations)."""


class ResearchError(MedlitError):
    """A research job failed."""

    exit_code = 8


class JobBusy(ResearchError):
    """Another process (or task) is running this research job right now."""


class PlanningError(ResearchError):
    """The planner could not produce a usable plan."""


class JobCancelled(ResearchError):
    """The research job was cancelled; raised at its next step, it ends the job CANCELLED."""


class LeaseLost(ResearchError):
    """This worker's claim on a job lapsed and another worker holds it now: stop, save nothing."""
