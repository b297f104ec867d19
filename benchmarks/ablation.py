"""What each answer check earns: the recorded model answers replayed with each check off.

Replays ``benchmarks/data/recorded_answers.jsonl`` (``record_answers.py``: a real model's
answers to check-half PubMedQA questions, before their checks, with the PMIDs retrieved)
through :func:`medlit.checks.answer.check_answer` with every check on, then with each check of
the registry off in turn, and reports per check, over the answers of the chosen half:

- ``fired``: answers in which it found something;
- ``right`` / ``wrong``: answers whose verdict it turned right / wrong against the expert
  label (every check on, against that check off; a digest fallback counts with the digest's
  verdict);
- ``false_drops``: sentences or citations it took out that the cited article does say (at
  least :data:`SAID` of the sentence's content words are the cited articles');
- ``caught``: the other sentences or citations it took out (errors caught).

A verdict the model read off a checked text is replayed from the recording. A text the
recording never had read (the answer changed with a check off) has no verdict to judge: when
the verdict then differs, the answer counts in the check's ``unread``, not in ``right`` or
``wrong``.

``--model`` reads those verdicts: the configured model (``MEDLIT_LLM_*``, as
``benchmarks/verdicts.py`` takes them) is asked what each changed text concludes, through the
assistant's own verdict call (:func:`medlit.checks.verdict.read_verdict`), and each read is
appended at once to ``benchmarks/data/recorded_reads.jsonl`` (question, text, verdict, model).
The replay takes the reads of that file as it takes the recording's, so a rerun, with or without
``--model``, asks the model only for texts it has not read yet: a stopped run resumes where it
stopped. A read that fails (the model unreachable, a timeout) is not kept; three in a row stop
the reading, and the figures count what is still unread.

Usage::

    python benchmarks/ablation.py [--data ../shared/data/pubmedqa/pqal_dev.json] [--half check]
    MEDLIT_LLM_BASE_URL=http://127.0.0.1:18800/v1 MEDLIT_LLM_MODEL=local-qwen \
        MEDLIT_LLM_API_KEY=local MEDLIT_LLM_TIMEOUT_S=900 python benchmarks/ablation.py --model

``replayed_as_recorded`` counts the answers whose verdict, every check on, is the one the
assistant gave when it was recorded (the replay is the live check node's). With every check on,
``accuracy_all_on`` is the share of answers whose verdict is the label, ``committed`` the yes or
no verdicts given, ``precision_all_on`` the share of those that are right and
``coverage_all_on`` their share of the answers. ``--recorded
benchmarks/data/recorded_expert.jsonl`` (``record_answers.py --expert``) replays the
expert-style questions.

Last line: ``answers=... accuracy_all_on=... committed=... precision_all_on=...
coverage_all_on=... replayed_as_recorded=... unread=... reads_kept=...`` and, per check,
``<id>_right=... <id>_wrong=... <id>_false_drops=... <id>_caught=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_verdicts import DEFAULT_DATA
from medlit.checks import ORDER, REGISTRY, read_verdict
from medlit.checks.answer import CheckedAnswer, check_answer
from medlit.config import Settings
from medlit.digest import build_evidence_digest
from medlit.llm.client import LLMClient
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.types import Article, Chunk, Evidence
from medlit.words.grounding import word_stems
from pubmedqa_cases import half_of

#: The checks of an answer (the claim and report checks are research's).
ASK = tuple(check for check in ORDER if REGISTRY[check].stage not in ("claim", "report"))
RECORDED = Path(__file__).resolve().parent / "data" / "recorded_answers.jsonl"
#: The verdicts ``--model`` read off texts the recording never had read.
READS = Path(__file__).resolve().parent / "data" / "recorded_reads.jsonl"
#: Failed reads in a row after which ``--model`` stops reading.
GIVE_UP = 3
#: Share of a sentence's content words the cited articles must say for it to be theirs.
SAID = 0.8
_TAKEN = ("drop", "uncite")


def _evidence(articles: list[Article]) -> list[Evidence]:
    """The articles as retrieved evidence, one chunk per abstract section."""
    return [
        Evidence(
            chunk=Chunk(
                id=f"{a.key}#{i + 1}",
                article_key=a.key,
                ordinal=i + 1,
                section=s.label,
                text=s.text,
                is_conclusion=s.category == "CONCLUSIONS",
            ),
            article=a,
            similarity=1.0 - rank / 100,
        )
        for rank, a in enumerate(articles)
        for i, s in enumerate(a.abstract)
    ]


class Reads:
    """The verdicts a model read off changed texts, kept in a JSONL file (one read a line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[tuple[str, str], str] = {}
        self.models: Counter[str] = Counter()
        lines = path.read_text().splitlines() if path.exists() else []
        for line in filter(str.strip, lines):
            read = json.loads(line)
            self.known[read["question"], read["text"]] = read["verdict"]
            self.models[read["model"]] += 1

    def keep(self, pmid: str, question: str, text: str, verdict: str, model: str) -> None:
        """Add one read, written to the file at once (a stopped run loses no read)."""
        self.known[question, text] = verdict
        self.models[model] += 1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        read = {"pmid": pmid, "question": question, "text": text, "verdict": verdict}
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({**read, "model": model}) + "\n")


def _framed(question: str) -> dict[str, Any]:
    """The question's frame as the ask reads it, for code whose checks take one."""
    import inspect

    from medlit.words.frame import read_frame

    if "frame" not in inspect.signature(check_answer).parameters:
        return {}  # code from before the checks read the frame
    return {"frame": read_frame(question)}


@functools.cache
def _embedded() -> dict[str, Any]:
    """The shipped embedder, as the ask hands it to the checks (one for the run), for code
    whose checks take one."""
    import inspect

    from medlit.embeddings.onnx import OnnxEmbedder

    if "embedder" not in inspect.signature(check_answer).parameters:
        return {}
    return {"embedder": OnnxEmbedder()}


def _unremarked(text: str) -> str:
    """``text`` without its remarks on the question's form, its spacing folded."""
    from medlit.checks.question_remarks import without_question_remark
    from medlit.text import split_sentences

    return " ".join(" ".join(without_question_remark(s) for s in split_sentences(text)).split())


class Replay:
    """One recorded answer, checked with some checks off."""

    def __init__(self, row: dict[str, Any], articles: dict[str, Article], kept: Reads) -> None:
        self.row = row
        self.articles = {p: articles[p] for p in dict.fromkeys(row["evidence"])}
        self.reads = {text: verdict for text, verdict in row.get("reads", [])}
        self.kept = kept
        self.unread = 0
        #: The texts no read is known for (question, text).
        self.wanted: set[tuple[str, str]] = set()

    async def _read(self, question: str, text: str) -> Any:
        if text in self.reads:
            return self.reads[text]
        if (question, text) in self.kept.known:
            return self.kept.known[question, text]
        # A text read before the question-remarks check took a remark on the question's form
        # out ("This is a yes/no question."): the same text to a reader, the same read.
        for read, verdict in self.reads.items():
            if _unremarked(read) == _unremarked(text):
                return verdict
        self.unread += 1
        self.wanted.add((question, text))
        return self.row.get("drafted_verdict") or "uncertain"

    async def checked(self, disabled: frozenset[str]) -> tuple[CheckedAnswer, str | None]:
        """The checked answer, and the verdict shown (the digest's on a fallback)."""
        row = self.row
        answer = await check_answer(
            row["standalone"],
            row["drafted"],
            row.get("drafted_verdict"),
            self.articles,
            next(iter(self.articles.values())),
            is_yes_no=row["is_yes_no"],
            read_verdict=self._read,
            nothing_supported="Nothing the evidence supports is left.",
            disabled=disabled,
            **_framed(row["standalone"]),
            **_embedded(),
        )
        if answer.fallback is None:
            return answer, answer.verdict
        digest = build_evidence_digest(row["standalone"], _evidence(list(self.articles.values())))
        return answer, digest.verdict if row["is_yes_no"] else None


def _said(sentence: str, pmids: tuple[str, ...], articles: dict[str, Article]) -> bool:
    words = word_stems(sentence)
    cited = set().union(*(word_stems(articles[p].everything_said) for p in pmids if p in articles))
    return bool(words) and len(words & cited) >= SAID * len(words)


async def ablate(
    rows: list[dict[str, Any]], articles: dict[str, Article], kept: Reads
) -> dict[str, Any]:
    """Every check's figures over ``rows`` (see the module doc); ``wanted`` maps each text no
    read is known for (question, text) to its PMID."""
    per: dict[str, Counter[str]] = {check: Counter() for check in ASK}
    right_all = unread = as_recorded = committed = committed_right = 0
    wanted: dict[tuple[str, str], str] = {}
    for row in rows:
        replay = Replay(row, articles, kept)
        full, verdict = await replay.checked(frozenset())
        gold = row["gold"]
        right_all += verdict == gold
        committed += verdict in ("yes", "no")
        committed_right += verdict in ("yes", "no") and verdict == gold
        as_recorded += verdict == row.get("verdict")
        for finding in full.findings:
            counts = per[finding.check]
            if finding.action in _TAKEN:
                sentence_pmids = finding.pmids or ()
                said = _said(finding.text, sentence_pmids, replay.articles)
                counts["false_drops" if said else "caught"] += 1
        for check in {f.check for f in full.findings}:
            per[check]["fired"] += 1
        for check in ASK:
            before = replay.unread
            _, without = await replay.checked(frozenset({check}))
            if replay.unread > before and without != verdict:
                per[check]["unread"] += 1  # the model never read that text: no verdict to judge
            elif without != verdict:
                per[check][
                    "right" if verdict == gold else "wrong" if without == gold else "moved"
                ] += 1
        unread += replay.unread
        wanted.update(dict.fromkeys(sorted(replay.wanted), row["pmid"]))
    return {
        "per": per,
        "right_all": right_all,
        "committed": committed,
        "committed_right": committed_right,
        "unread": unread,
        "as_recorded": as_recorded,
        "wanted": wanted,
    }


async def read_all(wanted: dict[tuple[str, str], str], settings: Settings, kept: Reads) -> int:
    """Ask the configured model the verdict of every text of ``wanted``, as the assistant asks
    it (:func:`read_verdict`), keeping each read as it comes; the count read."""
    done = failed = 0
    async with LLMClient.from_settings(settings) as llm:
        model = llm.model_for("answer") or "unknown"
        for number, ((question, text), pmid) in enumerate(wanted.items(), 1):
            started = time.perf_counter()
            verdict = await read_verdict(llm, question, text)
            seconds = time.perf_counter() - started
            print(f"read {number:>3}/{len(wanted)} {pmid:>9} {verdict} {seconds:.1f}s", flush=True)
            if verdict is None:  # the call failed (read_verdict logs why, --log warning)
                failed += 1
                if failed >= GIVE_UP:
                    print(f"{GIVE_UP} reads failed in a row: stopped (rerun to resume)")
                    break
                continue
            failed = 0
            kept.keep(pmid, question, text, verdict, model)
            done += 1
    return done


def read_wanted(
    rows: list[dict[str, Any]], articles: dict[str, Article], kept: Reads, result: dict[str, Any]
) -> dict[str, Any] | None:
    """``--model``: read the texts ``result`` wants and replay again; None without a model."""
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home))
        if not settings.llm.model:
            return None
        wanted = result["wanted"]
        print(
            f"{len(wanted)} texts never read ({len(kept.known)} reads kept in {kept.path}); "
            f"asking {settings.llm.model} at {settings.llm.base_url}",
            flush=True,
        )
        if not asyncio.run(read_all(wanted, settings, kept)):
            return result
    return asyncio.run(ablate(rows, articles, kept))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--recorded", type=Path, default=RECORDED)
    parser.add_argument("--half", choices=("tune", "check", "both"), default="check")
    parser.add_argument("--reads", type=Path, default=READS, help="The kept reads (JSONL).")
    parser.add_argument("--log", default="error", help="Log level (warning: why a read failed).")
    parser.add_argument(
        "--model",
        action="store_true",
        help="Ask the configured model (MEDLIT_LLM_*) the verdicts never read, keeping them.",
    )
    args = parser.parse_args(argv)
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    if not (args.recorded.exists() and xml.exists()):
        print(f"no recorded answers at {args.recorded} or no data at {xml}: see record_answers.py")
        return 1
    configure_logging(args.log)
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    rows = [json.loads(line) for line in args.recorded.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.half == "both" or half_of(r["pmid"]) == args.half]
    kept = Reads(args.reads)
    result = asyncio.run(ablate(rows, articles, kept))
    if args.model:
        read = read_wanted(rows, articles, kept, result)
        if read is None:
            print("--model needs a configured model: set MEDLIT_LLM_MODEL (and _BASE_URL)")
            return 2
        result = read
    per = result["per"]
    models = ", ".join(f"{m} ({n})" for m, n in kept.models.items()) or "none"
    print(
        f"{len(rows)} recorded answers ({args.half} half); verdicts never read: "
        f"{result['unread']} ({len(result['wanted'])} texts); reads kept: {len(kept.known)} "
        f"from {args.reads.name}, by {models}"
    )
    heads = "".join(f"{h:>7}" for h in ("fired", "right", "wrong", "moved", "unread"))
    print(f"{'check':26}{heads}{'false drops':>13}{'caught':>8}")
    for check in ASK:
        c = per[check]
        print(
            f"{check:26}{c['fired']:>7}{c['right']:>7}{c['wrong']:>7}{c['moved']:>7}{c['unread']:>7}"
            f"{c['false_drops']:>13}{c['caught']:>8}"
        )
    idle = [check for check in ASK if not per[check]["fired"]]
    print(f"\nfound nothing in these answers ({len(idle)} of {len(ASK)}): {', '.join(idle)}")
    figures = [
        f"answers={len(rows)}",
        f"checks_idle={len(idle)}",
        f"accuracy_all_on={result['right_all'] / max(1, len(rows)):.3f}",
        f"committed={result['committed']}",
        f"precision_all_on={result['committed_right'] / max(1, result['committed']):.3f}",
        f"coverage_all_on={result['committed'] / max(1, len(rows)):.3f}",
        f"replayed_as_recorded={result['as_recorded']}",
        f"unread={result['unread']}",
        f"reads_kept={len(kept.known)}",
    ]
    figures += [
        f"{check}_{name}={per[check][name]}"
        for check in ASK
        for name in ("right", "wrong", "false_drops", "caught")
    ]
    print(" ".join(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
