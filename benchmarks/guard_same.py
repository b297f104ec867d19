"""Does the cache guard decide as another tree's guard does? Every decision, pair by pair.

Usage::

    python benchmarks/guard_same.py --old OLD/src [--data ../shared/data]

For every pair of the contrast set (``benchmarks/data/cache_contrast.csv``) and of the Medical
Question Pairs (``mqp/mqp_dev.csv`` under ``--data``, when there), both ways round, it asks
this tree's :class:`medlit.cache.guard.QuestionGuard` and the one under ``--old`` (run in a
subprocess with ``PYTHONPATH`` on it) for the word rule's verdict (``check``), the
related-question checks' (``check_related``, with and without the intent check: the verified
band and research's topic tracking) and the word pair between them
(:func:`medlit.cache.word_pairs.pairs_between`), each with its reason, and counts the
decisions that differ. The guard takes the questions as text here: each is read by
:func:`medlit.words.frame.frame_of` where the new guard compares frames. ``stored`` is this
tree's related-question checks on frames stored and loaded as the answer cache keeps them
(:meth:`medlit.words.frame.QuestionFrame.stored`), against the other tree's on the texts.

Last line: ``pairs=... differ=... check_refused=... related_refused=... word_pairs=...``
(the refusals and pairs of this tree).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent


def read_pairs(data: Path | None) -> list[tuple[str, str]]:
    """(new, cached) pairs: the contrast set's and MQP's, both ways round, once each."""
    pairs: list[tuple[str, str]] = []
    with (ROOT / "data" / "cache_contrast.csv").open(newline="") as fh:
        pairs += [(row["asked"], row["cached"]) for row in csv.DictReader(fh)]
    mqp = data / "mqp" / "mqp_dev.csv" if data else None
    if mqp is not None and mqp.exists():
        with mqp.open(newline="") as fh:
            pairs += [(row[2], row[1]) for row in csv.reader(fh) if len(row) >= 4]
    both = pairs + [(b, a) for a, b in pairs]
    return list(dict.fromkeys(both))


def decide(pairs: list[tuple[str, str]]) -> list[list[Any]]:
    """This interpreter's medlit's decisions on ``pairs``."""
    from medlit.cache.guard import QuestionGuard
    from medlit.cache.word_pairs import pairs_between

    guard, topics = QuestionGuard(), QuestionGuard(check_intent=False, word_rule=False)
    out: list[list[Any]] = []
    for new, cached in pairs:
        word = guard.check(new, cached)
        related = guard.check_related(new, cached)
        topic = topics.check(new, cached)
        pair = pairs_between(guard, new, cached)
        out.append(
            [
                [word.ok, word.reason],
                [related.ok, related.reason],
                [topic.ok, topic.reason],
                None if pair is None else [pair.new, pair.cached, pair.context],
            ]
        )
    return out


def decide_stored(pairs: list[tuple[str, str]]) -> list[list[Any]]:
    """This tree's related-question checks on frames loaded from their stored form."""
    from medlit.cache.guard import QuestionGuard
    from medlit.words.frame import frame_of, read_frame

    guard = QuestionGuard()
    out: list[list[Any]] = []
    for new, cached in pairs:
        a, b = (frame_of(q, read_frame(q).stored()) for q in (new, cached))
        verdict = guard.check_related(a, b)
        out.append([verdict.ok, verdict.reason])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="The other tree's src folder.")
    parser.add_argument("--data", type=Path, default=ROOT.parent.parent / "shared" / "data")
    parser.add_argument("--decide", help=argparse.SUPPRESS)  # the subprocess's pairs file
    args = parser.parse_args()
    if args.decide:
        pairs = [tuple(p) for p in json.loads(Path(args.decide).read_text())]
        json.dump(decide(pairs), sys.stdout)  # type: ignore[arg-type]
        return
    pairs = read_pairs(args.data if args.data.exists() else None)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"guard_same_{os.getpid()}.json"
    work.write_text(json.dumps(pairs))
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(args.old).resolve())}
        old_run = subprocess.run(
            [sys.executable, __file__, "--old", args.old, "--decide", str(work)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        work.unlink(missing_ok=True)
    old = json.loads(old_run.stdout)
    new = decide(pairs)
    names = ("check", "check_related", "topics", "pairs_between")
    print(f"{'decision':<14} {'pairs':>6} {'differ':>7} {'refused/pairs new':>18} {'old':>6}")
    differ = 0
    for i, name in enumerate(names):
        changed = [p for p, a, b in zip(pairs, old, new, strict=True) if a[i] != b[i]]
        differ += len(changed)
        counts = [
            sum(r[i] is not None for r in rows)
            if name == "pairs_between"
            else sum(not r[i][0] for r in rows)
            for rows in (new, old)
        ]
        print(f"{name:<14} {len(pairs):>6} {len(changed):>7} {counts[0]:>18} {counts[1]:>6}")
        for new_q, cached_q in changed[:5]:
            print(f"  differs: {new_q!r} / {cached_q!r}")
    stored = decide_stored(pairs)
    changed = [p for p, a, b in zip(pairs, old, stored, strict=True) if a[1] != b]
    differ += len(changed)
    refused = [sum(not r[0] for r in stored), sum(not r[1][0] for r in old)]
    print(f"{'stored':<14} {len(pairs):>6} {len(changed):>7} {refused[0]:>18} {refused[1]:>6}")
    print(
        f"pairs={len(pairs)} differ={differ} "
        f"check_refused={sum(not r[0][0] for r in new)} "
        f"related_refused={sum(not r[1][0] for r in new)} "
        f"word_pairs={sum(r[3] is not None for r in new)}"
    )


if __name__ == "__main__":
    main()
