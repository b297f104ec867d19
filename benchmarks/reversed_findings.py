"""Does the reversed-comparison check catch "higher" written over "similar", and only that?

A cited answer sentence is set against the sentence of its article that shares the most of what
it compares (:func:`medlit.checks.reversed_findings.matching_sentence`) and its citation goes
when the two state opposite comparisons
(:func:`medlit.checks.comparisons.reverses`: a difference, or none). Over the 500 PubMedQA
abstracts of ``../shared/data/pubmedqa/pqal_dev_pubmed.xml``:

- **as written**: every abstract sentence, cited to its own article. A result or conclusion
  flagged is a false alarm (it should find itself, or a sentence saying the same). A
  background sentence is set against the study's own findings, which may say otherwise ("...
  training may result in better outcomes" in a study finding them similar): counted apart.
- **reversed**: every sentence stating no difference ("was similar", "did not differ", "no
  significant difference", "were comparable", "did not change"), rewritten to state one ("was
  higher", "differed", "a significant difference", ...), and every sentence stating a
  difference with an unnegated "higher"/"lower"/"increased"/"reduced"/"more"/"less"
  rewritten to "similar"; cited to its own article. One not flagged is a miss.

Usage::

    python benchmarks/reversed_findings.py [--xml ../shared/data/pubmedqa/pqal_dev_pubmed.xml]

Last line: ``sentences=... as_written_flagged=... background_flagged=... reversed=...
caught=...``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from medlit.checks.comparisons import comparison
from medlit.log import configure_logging
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.text import split_sentences
from medlit.types import Article
from pubmedqa_cases import add_half, both_halves, check_warnings, in_half, show_examples

DEFAULT_XML = Path(__file__).resolve().parents[2] / "shared/data/pubmedqa/pqal_dev_pubmed.xml"

# No difference -> one (the first pattern that applies).
TO_DIFFER = [
    (r"\b(was|were) (similar|comparable)\b", r"\1 higher"),
    (r"\b(did|does|do) not (significantly )?differ\b", "differed"),
    (r"\bno (statistically )?significant difference", "a significant difference"),
    (
        r"\b(?:did|does|do) not (?:significantly )?(change|affect|influence|reduce|improve)\b",
        lambda m: {"affect": "affected"}.get(m.group(1), m.group(1) + "d"),
    ),
]
# A difference -> none.
TO_SAME = [
    (
        r"\b(was|were) (significantly )?(higher|lower|greater|increased|reduced|decreased)\b",
        r"\1 similar",
    ),
]


def _rewrite(sentence: str, rules: list[tuple[str, str]]) -> str | None:
    for pattern, replacement in rules:
        rewritten = re.sub(pattern, replacement, sentence, count=1, flags=re.IGNORECASE)
        if rewritten != sentence:
            return rewritten
    return None


@both_halves
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xml", type=Path, default=DEFAULT_XML)
    add_half(parser)
    parser.add_argument("--show", type=int, default=6, help="Examples shown of each outcome.")
    args = parser.parse_args(argv)
    if not args.xml.exists():
        print(f"no data at {args.xml}: see ../shared/data/README.md")
        return 1
    configure_logging("error")  # one warning per sentence flagged, otherwise
    articles = [
        a for a in parse_pubmed_xml(args.xml.read_bytes()) if in_half({str(a.pmid): a}, args.half)
    ]
    sentences = flagged = rewritten = caught = 0
    background = background_flagged = 0
    shown: dict[str, list[str]] = {
        "false alarm": [],
        "background flagged": [],
        "missed": [],
        "caught": [],
    }

    def flags(sentence: str, pmid: str, article_by_pmid: dict[str, Article]) -> bool:
        warnings = check_warnings("reversed-findings", f"{sentence} [PMID:{pmid}]", article_by_pmid)
        return bool(warnings)

    for article in articles:
        by_pmid = {article.pmid: article}
        for section in article.abstract:
            for sentence in split_sentences(section.text):
                sentences += 1
                background += not section.is_result
                if flags(sentence, article.pmid, by_pmid):
                    kind = "false alarm" if section.is_result else "background flagged"
                    flagged += section.is_result
                    background_flagged += not section.is_result
                    if len(shown[kind]) < args.show:
                        shown[kind].append(sentence)
                said = comparison(sentence)
                rules = TO_DIFFER if said == "same" else TO_SAME if said == "differ" else []
                changed = _rewrite(sentence, rules)
                if changed is None:
                    continue
                rewritten += 1
                hit = flags(changed, article.pmid, by_pmid)
                caught += hit
                kind = "caught" if hit else "missed"
                if len(shown[kind]) < args.show:
                    shown[kind].append(f"{changed}\n      (as written: {sentence})")
    findings = sentences - background
    print(f"{'abstract sentences, cited to their own article':<52} {sentences}")
    print(f"{'... of its results or conclusion, flagged':<52} {flagged} of {findings}")
    print(f"{'... of its background or methods, flagged':<52} {background_flagged} of {background}")
    print(f"{'rewritten to state the opposite comparison':<52} {rewritten}")
    print(f"{'... caught':<52} {caught} ({caught / max(rewritten, 1):.0%})")
    show_examples(shown)
    print(
        f"sentences={sentences} as_written_flagged={flagged} "
        f"background_flagged={background_flagged} reversed={rewritten} caught={caught}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
