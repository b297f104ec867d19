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

With the model (``--llm``)::

    export MEDLIT_LLM_BASE_URL=http://127.0.0.1:18800/v1 MEDLIT_LLM_API_KEY=local \\
        MEDLIT_LLM_MODEL=local-qwen MEDLIT_LLM_SEED=7
    python benchmarks/moved_populations.py --llm [--half tune|check|both] [--limit N]
        [--compare OLD/src] [--block 4] [--show] [--dump answers.jsonl]

each question, as written and moved, is asked through ``medlit ask``'s engine
(:meth:`medlit.assistant.Assistant.ask`, no cache: plan, search, score, the model configured
by the ``MEDLIT_LLM_*`` settings, the checks, the verdict) in a fresh medlit home against the
fake E-utilities server (``tests/fakes``) holding that question's corpus alone: the row's
article and the :data:`NEAREST` records saying most of the question's words, as the digest
path reads them (the records of ``pqal_dev_pubmed.xml``; no Europe PMC, no full text). Each
version of the code asks in child processes of its own (:func:`reworded_search.run_child`,
the environment's ``MEDLIT_LLM_`` and ``MEDLIT_AGENT_`` settings kept, the others left out);
with ``--compare`` old and new take turns to go first, ``--block`` pairs at a time, so the
drift of a shared machine falls on both alike. ``--limit N`` asks the first N pairs of a
half only. An answer is *caveated* when its result (the ask's ``--json``) says a population
of the question is unspoken: the checks' ``populations-unspoken`` note among its findings,
its verdict withheld for a population (``verdict_cause``: that check, or the digest's
``population-unspoken`` rule), or, where the digest answered for the model, the digest's
population line. Printed per half, for each version and form: the questions asked, the
verdicts given (yes or no), the caveated answers, the moved verdicts with no caveat
(``llm_moved_bare``: 0 is right), the caveats on as-written questions
(``llm_false_caveats``), the answers citing the row's article (``cited``); then model calls
a question, the answers the digest gave (the model's did not stand, or it was unreachable),
errors, and the questions left without a yes or no by cause (the check or rule of
``verdict_cause``). ``--show`` lists each miss with what it cited (``*``: the row's
article); ``--dump`` appends every answer (JSONL). Last line: ``llm_given_written=...
llm_caveats_written=... llm_cited_written=...`` (the same for ``moved``)
``llm_moved_bare=... llm_false_caveats=... llm_digest_answers=... llm_errors=...
llm_calls_per_question=...`` (``old_`` for ``--compare``), suffixed ``_tune`` and ``_check``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# medlit and the benchmarks that import it are imported where used: a child asking with
# another version's code (``--llm --compare``) imports only what that version has.
from reworded_search import pubmed_home, rows_of, run_child

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


def _said(every: dict[str, Any]) -> dict[str, set[str]]:
    """Each record's word stems (its question and abstract), by PMID: what
    :func:`digest_verdicts.nearest_others` ranks the records by."""
    from medlit.words.grounding import word_stems

    return {p: word_stems(f"{r['QUESTION']} {' '.join(r['CONTEXTS'])}") for p, r in every.items()}


def measure(pairs: list[Pair], every: dict[str, Any]) -> list[dict[str, Any]]:
    """For each pair and form: the digest's verdicts (one source, default policy), whether
    each is caveated, and whether the checks caveat an answer citing the article alone."""
    from digest_verdicts import nearest_others, record_evidence
    from medlit.checks.cited_subjects import populations_unspoken

    try:
        from medlit.digest import build_evidence_digest
    except ImportError:  # older code
        from medlit.llm import build_evidence_digest  # type: ignore[attr-defined,no-redef]

    said = _said(every)
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


# -- with the model (--llm) ---------------------------------------------------------------------

#: The checks' note on a population no cited article speaks of, and the digest's rule that
#: withholds a verdict for one.
_NOTE, _RULE = "populations-unspoken", "population-unspoken"
#: The digest's population lines (an answer the digest gave when the model's did not stand).
_DIGEST_LINES = (_CAVEAT, "None of the articles the leaning is read from speaks of")
#: The ``MEDLIT_`` settings a child keeps from this environment: the model's, and the agent's
#: (a small model's context, ``MEDLIT_AGENT_MAX_CONTEXT_CHARS``).
_KEPT = ("MEDLIT_LLM_", "MEDLIT_AGENT_")
_ASKED = ("id", "half", "kind", "form", "pmid", "corpus", "question")


def asked_rows(pairs: list[Pair], every: dict[str, Any]) -> list[dict[str, str]]:
    """Each pair's questions as asked, as written then moved, each with its corpus: the row's
    article and the :data:`NEAREST` records saying most of that question's words."""
    from digest_verdicts import nearest_others

    said = _said(every)
    return [
        {
            "id": pair.id,
            "half": pair.half,
            "kind": pair.kind,
            "form": form,
            "pmid": pair.pmid,
            "corpus": " ".join([pair.pmid, *nearest_others(question, pair.pmid, said, NEAREST)]),
            "question": question,
        }
        for pair in pairs
        for form, question in (("written", pair.written), ("moved", pair.moved))
    ]


def caveats_of(result: Any) -> list[str]:
    """How an ask's result (:class:`medlit.assistant.AskResult`) caveats a population: the
    checks' note among its findings (``note``), its verdict withheld for a population by the
    checks or by the digest's rule (``withheld``), the digest's population line in an answer
    the digest gave (``digest``)."""
    how = []
    if any(f.check == _NOTE for f in getattr(result, "findings", [])):
        how.append("note")
    cause = getattr(result, "verdict_cause", None)
    if cause is not None and (cause.check == _NOTE or cause.rule == _RULE):
        how.append("withheld")
    if result.mode == "evidence_digest" and any(line in result.answer for line in _DIGEST_LINES):
        how.append("digest")
    return how


def _pubmed_records(xml: Path) -> dict[str, bytes]:
    """Each PubmedArticle of ``xml``, by PMID."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    found = {}
    for element in etree.fromstring(xml.read_bytes(), parser):
        element.tail = None
        found[(element.findtext(".//PMID") or "").strip()] = etree.tostring(element)
    return found


async def _ask_each(rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """Ask each question of ``rows`` with the code on ``sys.path`` and the model of the
    environment, each in a fresh medlit home against a fake E-utilities server holding its
    corpus alone (no cache, no Europe PMC, no full text); what each answer gave."""
    from medlit.assistant import Assistant
    from medlit.config import Settings
    from medlit.errors import MedlitError
    from medlit.log import configure_logging

    configure_logging("error")
    records = _pubmed_records(xml)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            corpus = Path(tmp) / "corpus.xml"
            held = b"".join(records[p] for p in row["corpus"].split())
            corpus.write_bytes(b"<PubmedArticleSet>" + held + b"</PubmedArticleSet>")
            started = time.perf_counter()
            done: dict[str, Any] = {k: row[k] for k in ("id", "kind", "form", "pmid", "question")}
            with pubmed_home(corpus):
                async with Assistant(Settings()) as assistant:
                    try:
                        result = await assistant.ask(row["question"], use_cache=False)
                    except MedlitError as exc:
                        done.update(error=str(exc)[:200], verdict=None, caveats=[], cited=[])
                        out.append(done)
                        continue
            cause = getattr(result, "verdict_cause", None)
            done.update(
                verdict=result.verdict,
                caveats=caveats_of(result),
                cited=[c.pmid for c in result.citations if c.pmid],
                mode=result.mode,
                llm_calls=result.api_calls.llm,
                pubmed_calls=result.api_calls.pubmed,
                cause=None if cause is None else cause.check or cause.rule or cause.kind,
                seconds=round(time.perf_counter() - started, 1),
                answer=result.answer,
            )
            out.append(done)
            print(
                f"  {row['id']} {row['form']:7} verdict={done['verdict']} "
                f"caveats={','.join(done['caveats']) or '-'} llm_calls={done['llm_calls']} "
                f"{done['seconds']}s",
                file=sys.stderr,
                flush=True,
            )
    return out


def _child_main(argv: list[str]) -> int:
    """A child of :func:`reworded_search.run_child`: ``--child OUT --data ROWS --xml XML``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--xml", type=Path, required=True)
    args = parser.parse_args(argv)
    answers = asyncio.run(_ask_each(rows_of(args.data), args.xml))
    args.child.write_text("\n".join(json.dumps(a) for a in answers))
    return 0


def _ask_block(src: Path, rows: list[dict[str, str]], xml: Path) -> list[dict[str, Any]]:
    """The answers of ``rows`` by the code of ``src``, in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "asked.tsv"
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, _ASKED, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        return run_child(__file__, src, path, xml, _KEPT)


def llm_figures(answers: list[dict[str, Any]]) -> dict[str, float]:
    """The model path's counts of one half (see the module doc)."""
    f: dict[str, float] = {}
    for form in FORMS:
        mine = [a for a in answers if a["form"] == form]
        f[f"llm_given_{form}"] = sum(a["verdict"] in ("yes", "no") for a in mine)
        f[f"llm_caveats_{form}"] = sum(bool(a["caveats"]) for a in mine)
        f[f"llm_cited_{form}"] = sum(a["pmid"] in a["cited"] for a in mine)
    moved = [a for a in answers if a["form"] == "moved"]
    f["llm_moved_bare"] = sum(a["verdict"] in ("yes", "no") and not a["caveats"] for a in moved)
    f["llm_false_caveats"] = sum(bool(a["caveats"]) for a in answers if a["form"] == "written")
    f["llm_digest_answers"] = sum(a.get("mode") == "evidence_digest" for a in answers)
    f["llm_errors"] = sum("error" in a for a in answers)
    f["llm_calls_per_question"] = round(
        sum(a.get("llm_calls", 0) for a in answers) / max(len(answers), 1), 2
    )
    f["llm_n"] = len(moved)
    return f


def _llm_table(name: str, f: dict[str, float]) -> None:
    for form in FORMS:
        bare = f["llm_moved_bare"] if form == "moved" else ""
        false = f["llm_false_caveats"] if form == "written" else ""
        print(
            f"{name:4} {form:8} {f['llm_n']:>5} {f[f'llm_given_{form}']:>9} "
            f"{f[f'llm_caveats_{form}']:>8} {bare:>11} {false:>14} {f[f'llm_cited_{form}']:>6}"
        )


def _ask_versions(
    versions: dict[str, Path], asked: list[dict[str, str]], xml: Path, block: int
) -> dict[str, list[dict[str, Any]]]:
    """Each version's answers to ``asked``, the versions taking turns to go first, a block of
    ``block`` pairs (a child process each) at a time, so a shared machine's drift falls on
    both alike."""
    answers: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
    size = 2 * block  # both forms of a pair in one block
    for number, first in enumerate(range(0, len(asked), size)):
        order = list(versions) if number % 2 == 0 else list(reversed(versions))
        for name in order:
            last = min(first + size, len(asked))
            print(f"--- {name}: questions {first + 1}..{last}", file=sys.stderr, flush=True)
            answers[name] += _ask_block(versions[name], asked[first : first + size], xml)
    return answers


def llm_main(args: argparse.Namespace) -> int:
    """Ask the half's questions, both forms, with the model (and ``--compare``'s code too, in
    alternating blocks); print the table and the last line."""
    model = os.environ.get("MEDLIT_LLM_MODEL")
    if not model or not os.environ.get("MEDLIT_LLM_BASE_URL"):
        print("--llm needs a model: set MEDLIT_LLM_BASE_URL and MEDLIT_LLM_MODEL", file=sys.stderr)
        return 2
    xml = args.xml or args.data.with_name(args.data.stem + "_pubmed.xml")
    every = json.loads(args.data.read_text())
    pairs = [p for p in load(args.pairs, every) if p.half == args.half][: args.limit]
    versions = {"new": ROOT / "src"}
    if args.compare is not None:
        versions["old"] = args.compare.resolve()
    answers = _ask_versions(versions, asked_rows(pairs, every), xml, args.block)
    if args.dump is not None:
        with args.dump.open("a") as out:
            for name, found in answers.items():
                out.writelines(
                    json.dumps({"code": name, "half": args.half, **a}) + "\n" for a in found
                )
    figures = {name: llm_figures(found) for name, found in answers.items()}
    print(f"{len(pairs)} pairs of the {args.half} half, as written and moved, with {model}\n")
    print(
        f"{'code':4} {'form':8} {'asked':>5} {'verdicts':>9} {'caveats':>8} "
        f"{'moved_bare':>11} {'false_caveats':>14} {'cited':>6}"
    )
    names = [name for name in ("old", "new") if name in figures]
    for name in names:
        _llm_table(name, figures[name])
    for name in names:
        f = figures[name]
        print(
            f"{name}: {f['llm_calls_per_question']} model calls a question, "
            f"{f['llm_digest_answers']} answers by the digest, {f['llm_errors']} errors"
        )
    for name in names:
        for form in FORMS:
            causes = Counter(
                a.get("cause") or a.get("error", "none")[:40]
                for a in answers[name]
                if a["form"] == form and a["verdict"] not in ("yes", "no")
            )
            told = ", ".join(f"{cause} {n}" for cause, n in causes.most_common()) or "none"
            print(f"{name}: {form} questions left without a yes or no, by cause: {told}")
    if args.show:
        print()
        for name in names:
            _llm_show(name, answers[name])
    out = {k: v for k, v in figures["new"].items() if k != "llm_n"}
    if "old" in figures:
        out.update({f"old_{k}": v for k, v in figures["old"].items() if k != "llm_n"})
    print("\n" + " ".join(f"{k}={v}" for k, v in out.items()))
    return 0


def _llm_show(name: str, answers: list[dict[str, Any]]) -> None:
    """Each miss of the model path: a moved question given a verdict with no caveat, an
    as-written question caveated; with the verdict and the PMIDs cited (``*``: the row's)."""
    for a in answers:
        cited = " ".join(f"{p}*" if p == a["pmid"] else p for p in a["cited"])
        bare = a["verdict"] in ("yes", "no") and not a["caveats"]
        if a["form"] == "moved" and bare:
            print(
                f"  {name} moved bare  {a['id']} {a['kind']:9} {a['verdict']} [{cited}] "
                f"{a['question']}"
            )
        if a["form"] == "written" and a["caveats"]:
            print(
                f"  {name} false cav.  {a['id']} {a['kind']:9} {','.join(a['caveats'])} "
                f"[{cited}] {a['question']}"
            )
        if "error" in a:
            print(f"  {name} error       {a['id']} {a['form']} {a['error']}")


def main(argv: list[str] | None = None) -> int:
    """Measure each half in turn (:func:`pubmedqa_cases.both_halves`), or the one asked."""
    from pubmedqa_cases import both_halves

    return both_halves(_main)(argv)


def _main(argv: list[str] | None = None) -> int:
    from digest_verdicts import DEFAULT_DATA
    from pubmedqa_cases import add_half

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show", action="store_true", help="list each miss")
    parser.add_argument("--compare", type=Path, help="another version's src, run the same")
    parser.add_argument("--rows", action="store_true", help=argparse.SUPPRESS)  # JSON rows
    parser.add_argument("--llm", action="store_true", help="ask with MEDLIT_LLM_*'s model")
    parser.add_argument("--limit", type=int, help="--llm: the first N pairs of a half only")
    parser.add_argument("--block", type=int, default=4, help="--llm: pairs per child process")
    parser.add_argument("--xml", type=Path, help="--llm: PubMed XML (default: beside --data)")
    parser.add_argument("--dump", type=Path, help="--llm: append every answer here (JSONL)")
    add_half(parser)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is absent (needs ../shared/data)", file=sys.stderr)
        return 0
    if args.llm:
        return llm_main(args)
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
    raise SystemExit(_child_main(sys.argv[1:]) if "--child" in sys.argv else main())
