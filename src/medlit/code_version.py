"""Which answering code this installation runs: part of the answer cache's fingerprint.

A cached answer is what the code that wrote it made of the evidence: its prompt, its citation
and claim checks, its verdict, the study designs its references show. When an upgrade changes
that code (a check that now leaves out a misattributed sentence, a trial now read as a trial),
answers cached before are not what this version would answer, and serving them would serve the
old defects for as long as their TTL. So the fingerprint carries a hash of the package's own
source and word tables (``words/data``), front ends left out (the CLI, the HTTP service, the
web page and the MCP server show an answer; they do not shape it): an upgrade that changes
the answering code or a table starts tier 1 afresh, while the evidence (tier 2) stays and
spares the searches. Hashing the code needs no one to remember to bump a version; its cost is
one read of the sources, once per installation: a process after the first finds the hash in
the user's cache (``~/.cache/medlit``, or ``$XDG_CACHE_HOME``), named by the files' sizes
and modification times (:func:`answering_code`; reading the files took a cached question
tens of milliseconds, a process's start).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

__all__ = ["FRONT_ENDS", "TABLES", "answering_code", "cached_code_hash", "code_hash"]

#: Parts of the package (relative to it) that only present answers.
FRONT_ENDS = ("cli", "service", "web", "mcp_server.py", "__main__.py")
#: Folders of data the answering code reads as code: the word tables (stop words, synonyms,
#: cues) decide what the checks, the digest and the cache guard find.
TABLES = ("words/data",)


def code_hash(
    root: Path, *, skip: tuple[str, ...] = FRONT_ENDS, tables: tuple[str, ...] = TABLES
) -> str:
    """A hash of the ``.py`` files under ``root`` and of the files in its ``tables`` folders
    (their paths and bytes), ``skip`` left out: the first part of a file's path relative to
    ``root`` names what is skipped."""
    digest = hashlib.sha256()
    data = [p for folder in tables for p in (root / folder).glob("*") if p.is_file()]
    for path in sorted([*root.rglob("*.py"), *data]):
        relative = path.relative_to(root)
        if relative.parts[0] in skip:
            continue
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _listing(
    root: Path, *, skip: tuple[str, ...] = FRONT_ENDS, tables: tuple[str, ...] = TABLES
) -> str:
    """What :func:`code_hash` reads, named without reading it: each file's path, size and
    modification time (a hash of them)."""
    digest = hashlib.sha256(str(root).encode() + b"\0")
    folders = {os.path.join(root, folder) for folder in tables}
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py") and here not in folders:
                continue
            path = os.path.join(here, name)
            if os.path.relpath(path, root).split(os.sep)[0] in skip:
                continue
            stat = os.stat(path)
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _cache_file(root: Path) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return Path(base) / "medlit" / f"code-hash-{name}.json"


def cached_code_hash(root: Path) -> str:
    """:func:`code_hash` of ``root``, kept in the user's cache under the files' listing
    (:func:`_listing`: their paths, sizes and modification times) and read from there while
    it is unchanged; computed (and kept) when it changed or cannot be read."""
    listing = _listing(root)
    cache = _cache_file(root)
    try:
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if kept.get("listing") == listing and isinstance(kept.get("hash"), str):
            return str(kept["hash"])
    except (OSError, ValueError, AttributeError):
        pass
    found = code_hash(root)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps({"listing": listing, "hash": found}), encoding="utf-8")
        partial.replace(cache)
    except OSError:  # a read-only home: computed again next time
        pass
    return found


@functools.cache
def answering_code() -> str:
    """:func:`code_hash` of the installed medlit package (once per process; read from the
    user's cache while the package's files are unchanged: :func:`cached_code_hash`)."""
    return cached_code_hash(Path(__file__).resolve().parent)
