"""Tables of sorted ``key<TAB>value`` lines in the package, read by binary search.

A table loads as one ``bytes`` (a gzip member of ``words/data``, its ``#`` header lines taken
off) and a key is found by binary search in it, without building a dictionary: loading costs
the decompression (milliseconds), where a dictionary of the same lines costs a Python object
per line (tenths of a second for the tables here). Used by :mod:`medlit.words.frequency` and
:mod:`medlit.words.forms`.
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["find", "load"]


def load(name: str) -> bytes:
    """The lines of ``words/data/<name>`` (gzip), sorted by bytes, its header taken off."""
    import gzip  # (not at import: a process that never asks pays nothing)

    data = gzip.decompress(files("medlit.words").joinpath("data", name).read_bytes())
    start = 0
    while data.startswith(b"#", start):
        start = data.index(b"\n", start) + 1
    return data[start:]


def find(data: bytes, key: bytes) -> bytes | None:
    """The value of the line of ``data`` (``key<TAB>value`` lines, sorted by bytes, each
    ending in a newline) whose key is ``key``, or None."""
    lo, hi = 0, len(data)  # both the start of a line (or the end)
    while lo < hi:
        mid = (lo + hi) // 2
        start = data.rfind(b"\n", lo, mid) + 1 or lo
        tab = data.index(b"\t", start)
        end = data.index(b"\n", tab)
        word = data[start:tab]
        if word == key:
            return data[tab + 1 : end]
        if word < key:
            lo = end + 1
        else:
            hi = start
    return None
