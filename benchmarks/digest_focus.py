"""Does the evidence digest quote the articles about the question, and only them?

The digest (the answer without a model, or when the model's answer is set aside) quotes the
best sentences of the retrieved articles. When some of them say half the question's words
(:func:`medlit.digest.about_question`), it quotes only those. Over the 500
expert-labelled PubMedQA questions of ``../shared``, with the evidence of each question's own
article and of the three other articles sharing the most of its subject words (what a search
returns around the one that answers):

- **own article quoted**: digests quoting at least one sentence of the answering article;
- **off-question sentences**: sentences quoted from articles not saying half the question's
  words (an article about something else shown as evidence);
- **verdicts**: the digest's yes/no verdicts and how many equal the label (the verdict leans
  on articles about the question only, as before).

Usage::

    python benchmarks/digest_focus.py [--data ../shared/data/pubmedqa/pqal_dev.json]

Last line: ``questions=... own_quoted=... sentences=... off_question=... verdicts=... right=...``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from digest_verdicts import DEFAULT_DATA, nearest_others, records_as_evidence
from medlit.digest import about_question, build_evidence_digest
from medlit.types import Evidence
from medlit.words.grounding import word_stems
from pubmedqa_cases import add_half, both_halves

NEAREST = 3


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_half(parser)
    args = parser.parse_args(argv)
    loaded = records_as_evidence(args.data, args.half)
    if loaded is None:
        return 1
    records, evidence, articles = loaded
    said = {pmid: word_stems(a.everything_said.lower()) for pmid, a in articles.items()}
    counts: Counter[str] = Counter()
    for pmid, record in records.items():
        question, truth = str(record["QUESTION"]), str(record["final_decision"])
        others = nearest_others(question, pmid, said, NEAREST)
        given: list[Evidence] = [item for p in [pmid, *others] for item in evidence[p]]
        digest = build_evidence_digest(question, given)
        about = about_question(question)
        counts["questions"] += 1
        counts["own_quoted"] += any(s.pmid == pmid for s in digest.sentences)
        for sentence in digest.sentences:
            counts["sentences"] += 1
            counts["off_question"] += not about(articles[str(sentence.pmid)])
        if digest.verdict in ("yes", "no"):
            counts["verdicts"] += 1
            counts["right"] += digest.verdict == truth
    rows = (
        ("questions (own article + 3 nearest others)", counts["questions"]),
        ("  digests quoting the answering article", counts["own_quoted"]),
        ("sentences quoted", counts["sentences"]),
        ("  from articles not about the question", counts["off_question"]),
        ("yes/no verdicts", counts["verdicts"]),
        ("  equal to the label", counts["right"]),
    )
    for label, value in rows:
        print(f"{label:<46} {value:>6}")
    print(
        f"questions={counts['questions']} own_quoted={counts['own_quoted']} "
        f"sentences={counts['sentences']} off_question={counts['off_question']} "
        f"verdicts={counts['verdicts']} right={counts['right']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
