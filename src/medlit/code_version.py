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
one read of the sources per process (a few ms).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["FRONT_ENDS", "TABLES", "answering_code", "code_hash"]

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


@functools.cache
def answering_code() -> str:
    """:func:`code_hash` of the installed medlit package (computed once per process)."""
    return code_hash(Path(__file__).resolve().parent)
