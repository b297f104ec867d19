"""A fresh ``medlit ask`` process on a cached question: wall time, old and new code in one run.

Usage::

    python benchmarks/fresh_ask.py --old OLD/src [--runs 9]

``OLD`` is a worktree of the code to compare with (``git worktree add --detach OLD da54dcc``).
Each version gets its own data directory (``MEDLIT_HOME``) holding the sample corpus that ships
with medlit (``medlit corpus add --sample``: 60 real PubMedQA abstracts, no network), no LLM,
and one answer in the cache: the question below asked once with ``--source local``. Then, in
rounds that alternate which version goes first, each case is one new process of
``medlit ask "<question>" --source local`` timed from start to exit:

* ``repeat``: the cached question again (its vector is stored: the embedder need not load);
* ``reworded``: a rewording the cache's guard serves (an inflection and a function word),
  asked for the first time (the data directory is restored from a copy taken before it was
  asked), so its vector must be computed;
* ``reworded again``: the same rewording when its vector is stored;
* ``refused``: an edit the guard refuses (a population added), asked for the first time: the
  refusal, then an answer from the local corpus;
* ``unreachable source``: a new question, PubMed at a closed port and nothing stored (a
  first run offline): seconds to the error (exit 5), which comes before the embedder loads;
* ``unreachable LLM``: a new question with the answering LLM at a closed port: seconds to the
  answer from the evidence digest, with its warning (the embedder loads: the digest needs it).

Each hit's output must say "answered from cache" and each refusal must not (the run stops
otherwise). Then, for each version, ``python -X importtime`` of one repeat (the modules that
took longest, cumulative) and a cProfile of one repeat (the functions that took longest).

The machine is shared: compare the two versions by their ratio in the same run, and read the
load averages printed at the start and the end. Each process's CPU time (user and system) is
reported beside its wall time: on a loaded machine the wall time is mostly waiting for a core,
while the CPU time is what an idle machine would take (about: plus any wait for the disk).
Last line, for each case: ``<case>_p50_s`` and ``<case>_cpu_p50_s`` of the new code, and
``<case>_ratio`` and ``<case>_cpu_ratio`` (new / old, p50).
"""

from __future__ import annotations

import argparse
import os
import pstats
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "reduce atrial fibrillation after coronary artery bypass grafting"
QUESTION = f"Do preoperative statins {TOPIC}?"
REWORDED = f"Does preoperative statin {TOPIC}?"  # an inflection and a function word
REFUSED = f"Do preoperative statins {TOPIC} in children?"
UNCACHED = "Does metformin lower the risk of dementia in older adults?"
SERVED = "answered from cache"


def _children_cpu() -> float:
    """User and system CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Version:
    """One version of medlit: its source directory and its own data directory."""

    def __init__(self, label: str, src: Path, work: Path) -> None:
        self.label = label
        self.src = src
        self.home = work / label / "home"
        self.snapshot = work / label / "snapshot"
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("MEDLIT_", "PYTHONPATH"))
        }
        self.env.update(PYTHONPATH=str(src), MEDLIT_HOME=str(self.home), COLUMNS="100")

    def command(self, *args: str, python_flags: tuple[str, ...] = ()) -> list[str]:
        return [sys.executable, *python_flags, "-m", "medlit", *args]

    def run(
        self, *args: str, env: dict[str, str] | None = None, python_flags: tuple[str, ...] = ()
    ) -> tuple[tuple[float, float], subprocess.CompletedProcess[str]]:
        """Run medlit: ((wall seconds, CPU seconds of the process), its result)."""
        used = _children_cpu()
        t = time.perf_counter()
        done = subprocess.run(
            self.command(*args, python_flags=python_flags),
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            check=False,
        )
        return (time.perf_counter() - t, _children_cpu() - used), done

    def prepare(self) -> None:
        self.home.mkdir(parents=True)
        for args in (("corpus", "add", "--sample"), ("ask", QUESTION, "--source", "local")):
            _, done = self.run(*args)
            if done.returncode:
                sys.exit(f"{self.label}: medlit {' '.join(args)} failed:\n{done.stderr}")
        shutil.copytree(self.home, self.snapshot)

    def restore(self) -> None:
        shutil.rmtree(self.home)
        shutil.copytree(self.snapshot, self.home)


def ask_case(question: str, *, fresh: bool, served: bool):  # type: ignore[no-untyped-def]
    def case(version: Version) -> tuple[float, float]:
        if fresh:
            version.restore()
        seconds, done = version.run("ask", question, "--source", "local")
        if done.returncode or (SERVED in done.stdout) != served:
            sys.exit(
                f"{version.label}: {question!r} was {'not ' if served else ''}served "
                f"(exit {done.returncode}):\n{done.stdout[-600:]}\n{done.stderr[-600:]}"
            )
        return seconds

    return case


def outage_case(env: dict[str, str], args: tuple[str, ...], code: int, *, empty: bool):  # type: ignore[no-untyped-def]
    def case(version: Version) -> tuple[float, float]:
        port = closed_port()
        filled = {k: v.replace("PORT", str(port)) for k, v in env.items()}
        if empty:  # the first run, offline: nothing stored that could answer instead
            home = version.home.parent / "empty"
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir()
            filled["MEDLIT_HOME"] = str(home)
        seconds, done = version.run("ask", UNCACHED, *args, env=filled)
        if done.returncode != code or "unreachable" not in done.stderr:
            sys.exit(f"{version.label}: exit {done.returncode}, not {code}:\n{done.stderr}")
        return seconds

    return case


CASES = {
    "repeat": ask_case(QUESTION, fresh=False, served=True),
    "reworded": ask_case(REWORDED, fresh=True, served=True),
    "reworded_again": ask_case(REWORDED, fresh=False, served=True),
    "refused": ask_case(REFUSED, fresh=True, served=False),
    "unreachable_source": outage_case(
        {"MEDLIT_PUBMED_BASE_URL": "http://127.0.0.1:PORT/entrez/eutils/"},
        ("--source", "pubmed"),
        5,
        empty=True,
    ),
    "unreachable_llm": outage_case(
        {
            "MEDLIT_LLM_BASE_URL": "http://127.0.0.1:PORT/v1",
            "MEDLIT_LLM_MODEL": "local-qwen",
            "MEDLIT_LLM_API_KEY": "local",
        },
        ("--source", "local"),
        0,
        empty=False,
    ),
}


def import_top(version: Version, n: int) -> list[str]:
    """The ``n`` imports of one repeat that took longest, cumulative (``-X importtime``)."""
    _, done = version.run("ask", QUESTION, "--source", "local", python_flags=("-X", "importtime"))
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    rows.sort(reverse=True)
    return [f"{us / 1000:7.1f} ms {name}" for us, name in rows[:n]]


_ENTRY = {"main", "wrapper", "run_async", "ask_command", "_ask", "ask", "_run_node", "run"}


def profile_top(version: Version, n: int, work: Path) -> list[str]:
    """The ``n`` medlit functions (and lemminflect's, usearch's, onnxruntime's) of one repeat
    with the most cumulative time, module imports included (``<module>``)."""
    out = work / f"{version.label}.prof"
    version.run(
        "ask",
        QUESTION,
        "--source",
        "local",
        python_flags=("-m", "cProfile", "-o", str(out)),
    )
    stats = pstats.Stats(str(out))
    rows = []
    for (path, line, func), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        # medlit's own functions (not the command's entry frames, which hold everything) and
        # the libraries a cached ask may load
        if not any(part in path for part in ("medlit/", "lemminflect", "usearch", "onnx")):
            continue
        if path.endswith("__main__.py") or func in _ENTRY:
            continue
        where = path.split("site-packages/")[-1].split("/src/")[-1]
        rows.append((cumulative, f"{where}:{line}({func})"))
    rows.sort(reverse=True)
    return [f"{seconds * 1000:7.1f} ms {name}" for seconds, name in rows[:n]]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="The old code's src directory.")
    parser.add_argument("--new", type=Path, default=ROOT / "src", help="The new code's src.")
    parser.add_argument("--runs", type=int, default=9, help="Timed processes per case and version.")
    parser.add_argument("--cases", default=",".join(CASES), help="Comma-separated cases.")
    parser.add_argument("--top", type=int, default=14, help="Rows of the import and profile tops.")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    if unknown := set(cases) - set(CASES):
        sys.exit(f"unknown cases: {', '.join(sorted(unknown))}")
    print(f"load average at start: {load()}")
    work = Path(tempfile.mkdtemp(prefix="medlit-fresh-ask-"))
    try:
        versions = [Version("old", args.old, work), Version("new", args.new, work)]
        for version in versions:
            version.prepare()
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.runs):
            order = versions if round_ % 2 == 0 else versions[::-1]
            for case in cases:
                for version in order:
                    times.setdefault((case, version.label), []).append(CASES[case](version))
        print(f"load average at end of timing: {load()}\n")
        print(
            f"{'case':<20} {'old p50':>8} {'old min':>8} {'new p50':>8} {'new min':>8} {'ratio':>6}"
            f" {'old cpu':>8} {'new cpu':>8} {'ratio':>6}"
        )
        figures = []
        for case in cases:
            (old, old_cpu), (new, new_cpu) = (
                list(zip(*times[(case, label)], strict=True)) for label in ("old", "new")
            )
            ratio = statistics.median(new) / statistics.median(old)
            cpu_ratio = statistics.median(new_cpu) / statistics.median(old_cpu)
            print(
                f"{case:<20} {statistics.median(old):8.2f} {min(old):8.2f} "
                f"{statistics.median(new):8.2f} {min(new):8.2f} {ratio:5.2f}x "
                f"{statistics.median(old_cpu):8.2f} {statistics.median(new_cpu):8.2f} "
                f"{cpu_ratio:5.2f}x"
            )
            figures += [
                f"{case}_p50_s={statistics.median(new):.2f}",
                f"{case}_ratio={ratio:.2f}",
                f"{case}_cpu_p50_s={statistics.median(new_cpu):.2f}",
                f"{case}_cpu_ratio={cpu_ratio:.2f}",
            ]
        print(
            f"({args.runs} processes per case and version: wall seconds, p50 and least, and "
            "CPU seconds of the process, p50)"
        )
        for version in versions:
            version.restore()  # the repeat as timed
            print(f"\n{version.label}: slowest imports of one repeat (cumulative)")
            print("\n".join(import_top(version, args.top)))
            print(f"\n{version.label}: cProfile of one repeat (cumulative)")
            print("\n".join(profile_top(version, args.top, work)))
        print(" ".join(figures))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
