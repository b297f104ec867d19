"""Is a verdict on one population given from evidence about another? A labelled contrast set.

::

    python benchmarks/moved_populations.py [--half tune|check|both] [--show] [--compare OLD/src]

The pairs are ``benchmarks/data/moved_populations.tsv`` (its header says how they were
written): a PubMedQA question whose population is an anatomical site, a condition or disease
type, a sex or a setting, *as written* (its article studies it), and *moved* to a population
its article does not study (wrist -> hip fractures, type 1 -> type 2 diabetes, women -> men,
ICU -> home ventilation). A question left empty in the TSV is the record's own, read from
``../shared/data/pubmedqa/pqal_dev.json``. Each question is answered two ways, with no server:

- the *digest* (the no-LLM answer, :func:`medlit.digest.build_evidence_digest`) over the
  row's article and the :data:`NEAREST` records saying most of the question's words, as a
  search returns them, read by one source (``min_sources=1``: every leaning the digest shows)
  and by the default policy. A *verdict* is a yes or no; it is *caveated* when the digest says
  that no article quoted speaks of a population of the question (the verdict is then withheld);
- the *checks* (the LLM answer path): an answer stating the article's conclusion and citing it
  alone, held by :func:`medlit.checks.cited_subjects.populations_unspoken` (the
  ``populations-unspoken`` note); a *caveat* is that note.

Printed per half: for each path and form, the questions, the verdicts given (digest), the
caveated ones, and the verdicts (or answers) on moved questions with no caveat (``moved_bare``:
a verdict on people no cited article studied; 0 is right) and the caveats on as-written
questions (``false_caveats``: low is right). ``--show`` lists each miss. ``--compare OLD/src``
runs the same with another version's ``src`` on the path (a child process), in the same run.

Last line: ``digest_moved_bare=... digest_false_caveats=... checks_moved_bare=...
checks_false_caveats=... digest_given_written=... digest_given_moved=...`` (default policy
figures suffixed ``_default``; ``old_`` for ``--compare``), suffixed ``_tune`` and ``_check``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digest_verdicts import DEFAULT_DATA, nearest_others, record_evidence
from medlit.checks.cited_subjects import populations_unspoken
from medlit.words.grounding import word_stems
from pubmedqa_cases import add_half, both_halves

try:
    from medlit.digest import build_evidence_digest
except ImportError:  # older code
    from medlit.llm import build_evidence_digest  # type: ignore[attr-defined,no-redef]

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "benchmarks/data/moved_populations.tsv"
NEAREST = 4
FORMS = ("written", "moved")
#: How the digest says that no article quoted speaks of a population of the question.
_CAVEAT = "None of the articles quoted speaks of"


@dataclass(frozen=True)
class Pair:
    """One labelled pair: the question as written and moved to another population."""

    id: str
    pmid: str
    half: str
    kind: str
    written: str
    moved: str


def load(path: Path, records: dict[str, Any]) -> list[Pair]:
    """The pairs of ``path``, an empty question filled from its PubMedQA record."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    pairs = []
    for row in csv.DictReader(lines, delimiter="\t"):
        written = row["question_as_written"] or str(records[row["pmid"]]["QUESTION"])
        moved = row["question_moved"] or written
        pairs.append(Pair(row["id"], row["pmid"], row["half"], row["kind"], written, moved))
    return pairs


def _answer(pmid: str, record: dict[str, Any]) -> str:
    """An answer stating the article's conclusion, citing it alone."""
    return f"{str(record['LONG_ANSWER']).strip()} [PMID:{pmid}]"


def measure(pairs: list[Pair], every: dict[str, Any]) -> list[dict[str, Any]]:
    """For each pair and form: the digest's verdicts (one source, default policy), whether
    each is caveated, and whether the checks caveat an answer citing the article alone."""
    said = {p: word_stems(f"{r['QUESTION']} {' '.join(r['CONTEXTS'])}") for p, r in every.items()}
    out = []
    for pair in pairs:
        for form in FORMS:
            question = pair.written if form == "written" else pair.moved
            others = nearest_others(question, pair.pmid, said, NEAREST)
            evidence = [e for p in (pair.pmid, *others) for e in record_evidence(p, every[p])]
            articles = {pair.pmid: evidence[0].article}
            row: dict[str, Any] = {"id": pair.id, "form": form, "kind": pair.kind, "q": question}
            for policy, min_sources in (("single", 1), ("default", 2)):
                digest = build_evidence_digest(question, evidence, min_sources=min_sources)
                row[f"{policy}_verdict"] = digest.verdict
                row[f"{policy}_caveat"] = (
                    _CAVEAT in digest.text or digest.verdict_rule == "population-unspoken"
                )
            answer = _answer(pair.pmid, every[pair.pmid])
            unspoken = populations_unspoken(question, answer, articles)
            row["checks_caveat"] = bool(unspoken)
            row["checks_words"] = unspoken
            out.append(row)
    return out


def figures(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The counts of one half: verdicts given, caveats, moved verdicts bare, false caveats."""
    f: dict[str, int] = {}
    for policy in ("single", "default"):
        suffix = "" if policy == "single" else "_default"
        for form in FORMS:
            mine = [r for r in rows if r["form"] == form]
            given = [r for r in mine if r[f"{policy}_verdict"] in ("yes", "no")]
            f[f"digest_given_{form}{suffix}"] = len(given)
            f[f"digest_caveats_{form}{suffix}"] = sum(r[f"{policy}_caveat"] for r in mine)
        moved = [r for r in rows if r["form"] == "moved"]
        written = [r for r in rows if r["form"] == "written"]
        f[f"digest_moved_bare{suffix}"] = sum(
            r[f"{policy}_verdict"] in ("yes", "no") and not r[f"{policy}_caveat"] for r in moved
        )
        f[f"digest_false_caveats{suffix}"] = sum(r[f"{policy}_caveat"] for r in written)
    moved = [r for r in rows if r["form"] == "moved"]
    written = [r for r in rows if r["form"] == "written"]
    f["checks_moved_bare"] = sum(not r["checks_caveat"] for r in moved)
    f["checks_false_caveats"] = sum(r["checks_caveat"] for r in written)
    f["n"] = len(written)
    return f


def _run(pairs_path: Path, data: Path, half: str, src: Path | None) -> list[dict[str, Any]]:
    """The rows of ``half``, measured by this code, or (``src``) by another version's."""
    if src is None:
        every = json.loads(data.read_text())
        pairs = [p for p in load(pairs_path, every) if p.half == half]
        return measure(pairs, every)
    env = dict(os.environ, PYTHONPATH=f"{src}{os.pathsep}{Path(__file__).parent}")
    argv = [sys.executable, __file__, "--rows", "--half", half, "--pairs", str(pairs_path)]
    done = subprocess.run(
        [*argv, "--data", str(data)], env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout))


def _table(name: str, f: dict[str, int]) -> None:
    print(
        f"{name:6} {'path':15} {'form':8} {'verdicts':>9} {'caveats':>8} {'moved_bare':>11} "
        f"{'false_caveats':>14}"
    )
    for policy, suffix in (("single", ""), ("default", "_default")):
        for form in FORMS:
            print(
                f"{name:6} {'digest ' + policy:15} {form:8} {f[f'digest_given_{form}{suffix}']:>9} "
                f"{f[f'digest_caveats_{form}{suffix}']:>8}",
                end="",
            )
            if form == "moved":
                print(f" {f[f'digest_moved_bare{suffix}']:>11} {'':>14}")
            else:
                print(f" {'':>11} {f[f'digest_false_caveats{suffix}']:>14}")
    print(
        f"{name:6} {'checks':15} {'written':8} {'':>9} {f['checks_false_caveats']:>8} "
        f"{'':>11} {f['checks_false_caveats']:>14}"
    )
    print(
        f"{name:6} {'checks':15} {'moved':8} {'':>9} {f['n'] - f['checks_moved_bare']:>8} "
        f"{f['checks_moved_bare']:>11} {'':>14}"
    )


def _show(rows: list[dict[str, Any]]) -> None:
    """Each miss: a moved question with a bare verdict (``D``: the digest's, one source) or a
    bare answer (``C``: the checks'), an as-written question caveated."""
    for r in rows:
        digest = r["single_verdict"] in ("yes", "no") and not r["single_caveat"]
        paths = ("D" if digest else "-") + ("C" if not r["checks_caveat"] else "-")
        if r["form"] == "moved" and paths != "--":
            print(f"  moved bare  {paths} {r['id']} {r['kind']:9} {r['q']}")
        if r["form"] == "written" and (r["single_caveat"] or r["checks_caveat"]):
            print(f"  false cav.     {r['id']} {r['kind']:9} {r['checks_words']} {r['q']}")


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show", action="store_true", help="list each miss")
    parser.add_argument("--compare", type=Path, help="another version's src, run the same")
    parser.add_argument("--rows", action="store_true", help=argparse.SUPPRESS)  # JSON rows
    add_half(parser)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    rows = _run(args.pairs, args.data, args.half, None)
    if args.rows:
        print(json.dumps(rows))
        return 0
    new = figures(rows)
    print(f"{new['n']} pairs of the {args.half} half\n")
    out = dict(new)
    if args.compare is not None:
        old = figures(_run(args.pairs, args.data, args.half, args.compare.resolve()))
        _table("old", old)
        print()
        out.update({f"old_{k}": v for k, v in old.items()})
    _table("new", new)
    if args.show:
        print()
        _show(rows)
    keys = [k for k in out if not k.startswith(("digest_caveats", "n", "old_n", "old_digest_cav"))]
    print("\n" + " ".join(f"{k}={out[k]}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
