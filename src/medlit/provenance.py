"""Where stored answers and articles came from: the address of the source that served them.

Every tier-1 answer and every tier-2 article records its *origin*: for an article, the address
of the source that returned it (the PubMed E-utilities or Europe PMC base URL as configured, or
``local:<corpus file>`` for the local corpus); for an answer, the addresses of the sources it
was asked of (sorted by source name, joined by ``", "``). A cached answer or article is served
or reused only where its origin is the address the current settings would ask: a store filled
from a test server (``MEDLIT_PUBMED_BASE_URL=http://127.0.0.1:8765/...``) never answers a
question asked of the real PubMed, and the refusal says so in one line (:func:`refusal`).

Rows stored before origins were recorded have the empty origin (:data:`UNKNOWN`): they are
never served or reused (fail closed), and the refusal says the address is unknown.

Cheap on purpose: a keyed tier-1 hit computes an origin, so this module imports nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medlit.config import Settings

__all__ = [
    "UNKNOWN",
    "answer_origin",
    "default_addresses",
    "normalise_address",
    "origin_label",
    "refusal",
    "source_address",
    "source_addresses",
]

#: The origin of a row stored before origins were recorded: never served, never reused.
UNKNOWN = ""


def _base(url: str) -> str:
    """A base URL as the sources use it (with its trailing slash)."""
    url = url.strip()
    return url if url.endswith("/") else url + "/"


def normalise_address(address: str) -> str:
    """An address as typed (``medlit cache list --source``) as it is stored: a base URL with
    its trailing slash; anything else as it is."""
    text = address.strip()
    if text.lower().startswith(("http://", "https://")):
        return _base(text)
    return text


def source_address(settings: Settings, source: str) -> str:
    """The address ``source`` (a source name) is asked at under ``settings``."""
    if source == "pubmed":
        return _base(settings.pubmed.base_url)
    if source == "europepmc":
        return _base(settings.europepmc.base_url)
    if source == "local":
        return f"local:{settings.home / 'corpus.sqlite3'}"
    return source


def source_addresses(settings: Settings) -> dict[str, str]:
    """Every source name's address under ``settings``."""
    return {name: source_address(settings, name) for name in ("pubmed", "europepmc", "local")}


def default_addresses() -> dict[str, str]:
    """The addresses of the remote sources' default settings (a cache made without settings)."""
    from medlit.config import EuropePMCSettings, PubMedSettings

    pubmed = PubMedSettings.model_fields["base_url"].default
    europepmc = EuropePMCSettings.model_fields["base_url"].default
    return {"pubmed": _base(pubmed), "europepmc": _base(europepmc)}


def answer_origin(addresses: Mapping[str, str], sources: Iterable[str]) -> str:
    """The origin of an answer asked of ``sources``: their addresses, in source-name order."""
    return ", ".join(addresses.get(name, name) for name in sorted(set(sources)))


def origin_label(origin: str) -> str:
    """An origin as shown to a person (the empty one is "unknown")."""
    return origin or "unknown"


def refusal(what: str, stored: str, current: str) -> str:
    """One line saying why ``what`` (e.g. "cached answer") stored from ``stored`` is not
    served for a question asked of ``current``."""
    if stored == UNKNOWN:
        return (
            f"{what} has no recorded source address (stored before medlit recorded one), "
            f"not {current}"
        )
    return f"{what} came from {stored} not {current}"
