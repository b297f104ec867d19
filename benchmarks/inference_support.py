"""Does the inference check keep the articles' own inferences and hold others'?

An answer's inference (", suggesting that ...", "This suggests that ...") stays only when one
sentence of an article it cites says :data:`~medlit.checks.inferences.INFERENCE_SUPPORT` of its
content words (:func:`medlit.checks.inferences.inference_support`). Over the 500 PubMedQA
abstracts of ``../shared/data/pubmedqa/pqal_dev_pubmed.xml``, every inference an abstract
draws ("... suggest that X", "indicating that X", "... showed that X"):

- **own**: X against its own article. One held is a false alarm.
- **another's**: X against an article picked at random (seeded). One not held is a miss: the
  answer would pass another study's inference off as this one's.

The table gives how many of each fall under a range of thresholds, the one in use marked.

Usage::

    python benchmarks/inference_support.py [--xml ../shared/data/pubmedqa/pqal_dev_pubmed.xml]

Last line: ``inferences=... own_held=... others_held=...`` at the threshold in use.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from medlit.checks.inferences import INFERENCE_SUPPORT, inference_support
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.text import split_sentences
from pubmedqa_cases import add_half, both_halves, in_half

DEFAULT_XML = Path(__file__).resolve().parents[2] / "shared/data/pubmedqa/pqal_dev_pubmed.xml"
_DRAWN = re.compile(
    r"\b(?:suggest(?:s|ed|ing)?|indicat(?:e|es|ed|ing)|impl(?:y|ies|ying)|show(?:s|ed|ing)?"
    r"|demonstrat(?:e|es|ed|ing))\s+that\s+(.+?)\.?$",
    re.IGNORECASE,
)


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xml", type=Path, default=DEFAULT_XML)
    add_half(parser)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not args.xml.exists():
        print(f"no data at {args.xml}: see ../shared/data/README.md")
        return 1
    articles = [
        a for a in parse_pubmed_xml(args.xml.read_bytes()) if in_half({str(a.pmid): a}, args.half)
    ]
    rng = random.Random(args.seed)
    own: list[float] = []
    others: list[float] = []
    for article in articles:
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                drawn = _DRAWN.search(sentence)
                if drawn is None:
                    continue
                other = rng.choice([a for a in articles if a.pmid != article.pmid])
                own.append(inference_support(drawn.group(1), [article]))
                others.append(inference_support(drawn.group(1), [other]))
    print(f"inferences drawn in the abstracts: {len(own)}\n")
    print(f"{'threshold':<12} {'own held':>10} {'another article held':>22}")
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7):
        mark = "  (in use)" if threshold == INFERENCE_SUPPORT else ""
        own_held = sum(v < threshold for v in own)
        others_held = sum(v < threshold for v in others)
        print(f"{threshold:<12} {own_held:>10} {others_held:>22}{mark}")
    own_held = sum(v < INFERENCE_SUPPORT for v in own)
    others_held = sum(v < INFERENCE_SUPPORT for v in others)
    print(f"inferences={len(own)} own_held={own_held} others_held={others_held}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
