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
``wrong`` (record the answers again with the check off to judge those).

Usage::

    python benchmarks/ablation.py [--data ../shared/data/pubmedqa/pqal_dev.json] [--half check]

``replayed_as_recorded`` counts the answers whose verdict, every check on, is the one the
assistant gave when it was recorded (the replay is the live check node's).

Last line: ``answers=... accuracy_all_on=... replayed_as_recorded=...`` and, per check,
``<id>_right=... <id>_wrong=... <id>_false_drops=... <id>_caught=...``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_verdicts import DEFAULT_DATA
from medlit.checks.answer import CheckedAnswer, check_answer
from medlit.checks.grounding import word_stems
from medlit.checks.registry import ORDER, REGISTRY
from medlit.llm.extractive import build_evidence_digest
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.types import Article, Chunk, Evidence
from pubmedqa_cases import half_of

#: The checks of an answer (the claim and report checks are research's).
ASK = tuple(check for check in ORDER if REGISTRY[check].stage not in ("claim", "report"))
RECORDED = Path(__file__).resolve().parent / "data" / "recorded_answers.jsonl"
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


class Replay:
    """One recorded answer, checked with some checks off."""

    def __init__(self, row: dict[str, Any], articles: dict[str, Article]) -> None:
        self.row = row
        self.articles = {p: articles[p] for p in dict.fromkeys(row["evidence"])}
        self.reads = {text: verdict for text, verdict in row.get("reads", [])}
        self.unread = 0

    async def _read(self, question: str, text: str) -> Any:
        if text in self.reads:
            return self.reads[text]
        self.unread += 1
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
        )
        if answer.fallback is None:
            return answer, answer.verdict
        digest = build_evidence_digest(row["standalone"], _evidence(list(self.articles.values())))
        return answer, digest.verdict if row["is_yes_no"] else None


def _said(sentence: str, pmids: tuple[str, ...], articles: dict[str, Article]) -> bool:
    words = word_stems(sentence)
    cited = set().union(*(word_stems(articles[p].everything_said) for p in pmids if p in articles))
    return bool(words) and len(words & cited) >= SAID * len(words)


async def ablate(rows: list[dict[str, Any]], articles: dict[str, Article]) -> dict[str, Any]:
    """Every check's figures over ``rows`` (see the module doc)."""
    per: dict[str, Counter[str]] = {check: Counter() for check in ASK}
    right_all = unread = as_recorded = 0
    for row in rows:
        replay = Replay(row, articles)
        full, verdict = await replay.checked(frozenset())
        gold = row["gold"]
        right_all += verdict == gold
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
    return {"per": per, "right_all": right_all, "unread": unread, "as_recorded": as_recorded}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--recorded", type=Path, default=RECORDED)
    parser.add_argument("--half", choices=("tune", "check", "both"), default="check")
    args = parser.parse_args(argv)
    xml = args.data.with_name(args.data.stem + "_pubmed.xml")
    if not (args.recorded.exists() and xml.exists()):
        print(f"no recorded answers at {args.recorded} or no data at {xml}: see record_answers.py")
        return 1
    configure_logging("error")
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    rows = [json.loads(line) for line in args.recorded.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.half == "both" or half_of(r["pmid"]) == args.half]
    result = asyncio.run(ablate(rows, articles))
    per = result["per"]
    print(
        f"{len(rows)} recorded answers ({args.half} half); verdicts read afresh: {result['unread']}"
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
        f"replayed_as_recorded={result['as_recorded']}",
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
