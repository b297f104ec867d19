"""Does a result sentence stand in for a claim only in its own article?

::

    python benchmarks/result_sentences.py            # the 500 PubMedQA articles of ../shared

A research claim whose quote does not say it may take the sentence of its article's results or
conclusions that does (:func:`medlit.checks.claims.result_sentence_for`). Searching every
sentence must not let a claim pass in an article that is about something close but did not
find it. For each structured PubMedQA article, the first sentence of the conclusions of the
``--nearest`` other articles whose titles are closest to its own (the embedder's cosine; the
hardest claims to tell apart) is offered as a claim: any sentence taken is a false match.
The article's own conclusion is offered too (it is in the article verbatim: a check that the
search finds what is there, not a measure of paraphrase).

Last line: ``articles=N own_found=N other_offered=N other_matched=N``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PQAL = ROOT.parent / "shared" / "data" / "pubmedqa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nearest", type=int, default=3, help="Other articles per article.")
    parser.add_argument("--show", type=int, default=10, help="False matches printed.")
    args = parser.parse_args()
    if not (PQAL / "pqal_dev.json").exists():
        raise SystemExit(f"PubMedQA data not found under {PQAL}")

    from medlit.checks.claims import result_sentence_for
    from medlit.config import Settings
    from medlit.embeddings import load_embedder
    from medlit.sources.pubmed_xml import parse_pubmed_xml
    from medlit.text import split_sentences

    articles = {a.pmid: a for a in parse_pubmed_xml((PQAL / "pqal_dev_pubmed.xml").read_bytes())}
    records = json.loads((PQAL / "pqal_dev.json").read_text())
    pairs = [
        (pmid, split_sentences(record["LONG_ANSWER"])[0])
        for pmid, record in records.items()
        if pmid in articles and any(s.is_result for s in articles[pmid].abstract)
    ]
    own_found = sum(result_sentence_for(claim, articles[pmid]) is not None for pmid, claim in pairs)
    embedder = load_embedder(Settings())
    titles = np.asarray(embedder.embed([articles[pmid].title for pmid, _ in pairs]))
    similarity = titles @ titles.T
    np.fill_diagonal(similarity, -1.0)
    offered = 0
    matched: list[tuple[str, str, str, str]] = []
    for i, (pmid, _) in enumerate(pairs):
        for j in np.argsort(-similarity[i])[: args.nearest]:
            other_pmid, claim = pairs[int(j)]
            offered += 1
            sentence = result_sentence_for(claim, articles[pmid])
            if sentence is not None:
                matched.append((pmid, other_pmid, claim, sentence))
    rows = [
        ("structured articles", str(len(pairs))),
        ("own conclusion found", f"{own_found} of {len(pairs)}"),
        ("nearest other articles' conclusions offered", str(offered)),
        ("... a sentence taken (false match)", str(len(matched))),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for pmid, other, claim, sentence in matched[: args.show]:
        print(f"  {pmid} took {sentence[:100]!r} for {other}'s {claim[:100]!r}")
    print(
        f"articles={len(pairs)} own_found={own_found} other_offered={offered} "
        f"other_matched={len(matched)}"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
