"""Does the contradicted-sentence check take out only sentences their articles contradict?

An answer's cited sentence stating the answer opposite to its verdict goes when every article it
cites contradicts it (the check ``contradicted``). Over the PubMedQA
questions labelled yes or no in ``../shared/data/pubmedqa/pqal_dev.json``, each with its
article from ``pqal_dev_pubmed.xml``, and the label as the verdict:

- **as written**: every sentence of the abstract, cited to its own article, in one answer. A
  sentence that goes is a false alarm: it is the article's own.
- **conclusions read**: what each article's conclusion answers, read from its cues (the
  reading both rules rest on), set against the label: how often a "yes" or "no" reading is
  right.
- **against, as written** (the check ``against-conclusions``, the
  counterpart for a verdict that agrees with its wrong sentence): the same answers, each
  sentence held to the answer it states itself (the verdict Uncertain: both answers checked).
  A sentence that goes is a false alarm.
- **said the other way**: the question said as a statement ("Does maternal obesity have an
  influence on feeding behavior of obese children?" -> "Maternal obesity have an influence on
  feeding behavior of obese children", crude but with the question's words) where the label is
  no, and "There is no evidence that" before it where the label is yes; cited to the article,
  after the abstract's first sentence (also cited), so that one cited sentence stays. One that
  goes is caught: its article answers the question the other way. The same statements with
  the verdict they state (the model's verdict agreeing with its wrong sentence) are caught
  when the counterpart takes them out.

Usage::

    python benchmarks/contradicted_sentences.py [--data ../shared/data/pubmedqa]

Last line: ``sentences=... as_written_dropped=... against_dropped=... said_other_way=...
caught=... against_caught=... read_yes=right/all read_no=right/all``.
"""

from __future__ import annotations

from medlit.checks.contradicted import concludes
from medlit.text import split_sentences
from pubmedqa_cases import both_halves, cases, check_warnings, show_examples, statement


def cited(sentence: str, pmid: str) -> str:
    return f"{sentence.rstrip().rstrip('.')} [PMID:{pmid}]."


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=6)
    if loaded is None:
        return 1
    args, records, articles = loaded
    sentences = dropped = said_other_way = caught = against_dropped = against_caught = 0
    readings: dict[str, list[int]] = {"yes": [0, 0], "no": [0, 0]}  # right, all
    shown: dict[str, list[str]] = {"false alarm": [], "caught": [], "missed": []}
    for pmid, record in records.items():
        verdict, article = record["final_decision"], articles.get(pmid)
        if verdict not in ("yes", "no") or article is None:
            continue
        question, by_pmid = record["QUESTION"], {pmid: article}
        reading = concludes(article, question)
        if reading in readings:
            readings[reading][0] += reading == verdict
            readings[reading][1] += 1
        own = [s for section in article.abstract for s in split_sentences(section.text)]
        if len(own) < 2:
            continue
        sentences += len(own)
        answer = " ".join(cited(s, pmid) for s in own)
        warnings = check_warnings("contradicted", answer, by_pmid, question, verdict)
        dropped += len(warnings)
        if warnings and len(shown["false alarm"]) < args.show:
            shown["false alarm"].append(f"{question} ({verdict}): {len(warnings)} dropped")
        for stated in ("yes", "no"):
            warnings = check_warnings("against-conclusions", answer, by_pmid, question, stated)
            against_dropped += len(warnings)
        said = statement(question)
        denied = f"There is no evidence that {said[0].lower()}{said[1:]}"
        other = said if verdict == "no" else denied
        answer = f"{cited(own[0], pmid)} {cited(other, pmid)}"
        warnings = check_warnings("contradicted", answer, by_pmid, question, verdict)
        said_other_way += 1
        caught += bool(warnings)
        wrong = "no" if verdict == "yes" else "yes"
        against_caught += bool(
            check_warnings("against-conclusions", answer, by_pmid, question, wrong)
        )
        kind = "caught" if warnings else "missed"
        if len(shown[kind]) < args.show:
            shown[kind].append(f"{other} ({verdict})")
    print(f"{'abstract sentences, cited to their own article':<52} {sentences}")
    print(f"{'... dropped':<52} {dropped}")
    print(f"{'... dropped as against their article (either answer)':<52} {against_dropped}")
    print(f"{'questions said as the other answer':<52} {said_other_way}")
    print(f"{'... caught':<52} {caught} ({caught / max(said_other_way, 1):.0%})")
    print(
        f"{'... caught under the verdict they state':<52} {against_caught} "
        f"({against_caught / max(said_other_way, 1):.0%})"
    )
    for reading, (right, read) in readings.items():
        print(f"{'conclusions read ' + reading + ', right':<52} {right} of {read}")
    show_examples(shown)
    print(
        f"sentences={sentences} as_written_dropped={dropped} "
        f"against_dropped={against_dropped} said_other_way={said_other_way} caught={caught} "
        f"against_caught={against_caught} "
        + " ".join(f"read_{r}={right}/{read}" for r, (right, read) in readings.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
