"""Does the research claim check catch a claim that swaps one term of its quote for another?

::

    python benchmarks/claim_swaps.py            # the 500 PubMedQA articles of ../shared

A small model writes its quote's finding about another subject of the same article ("the
prevalence of fibromyalgia ... is significantly higher" over a quote on fatigue). For every
sentence of each article's results and conclusions, the sentence's most repeated technical word
(rare in English) is replaced by the article's most repeated technical word the sentence does
not say, and the result is offered as a claim over the sentence. Counted: the swapped claims
the word-share rule (:func:`medlit.research.grounding.claim_supported`) lets through, those of
them :func:`medlit.checks.swapped_terms.swapped_term` catches, split by whether the word
replaced is a subject of the article (a word of its title, the swap the check is made for) or
another word; and, as the false-alarm check, the verbatim sentences held to swap a term against
themselves and the sentences held to swap a term against their own abbreviations spelled out.

Last line: ``sentences=N verbatim_flagged=N spelled_flagged=N swaps_passing=N caught=N
subject_swaps=N subject_caught=N``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PQAL = ROOT.parent / "shared" / "data" / "pubmedqa"


def main() -> None:
    if not (PQAL / "pqal_dev_pubmed.xml").exists():
        raise SystemExit(f"PubMedQA data not found under {PQAL}")

    from medlit.checks.defined_terms import article_definitions
    from medlit.checks.grounding import claim_supported, word_stem
    from medlit.checks.swapped_terms import swapped_term
    from medlit.checks.word_rarity import is_technical
    from medlit.sources.pubmed_xml import parse_pubmed_xml
    from medlit.text import split_sentences

    def words(text: str) -> list[str]:
        return [w.lower() for w in re.findall(r"[^\W\d_]{3,}", text)]

    articles = parse_pubmed_xml((PQAL / "pqal_dev_pubmed.xml").read_bytes())
    sentences = verbatim_flagged = spelled = spelled_flagged = 0
    passing = caught = subject_swaps = subject_caught = 0
    missed: list[tuple[str, str, str]] = []
    for article in articles:
        said = Counter(word_stem(w) for w in words(article.everything_said))
        technical = Counter(
            w for w in words(f"{article.title} {article.abstract_text}") if is_technical(w)
        )
        titled = {word_stem(w) for w in words(article.title)}
        definitions = article_definitions(article)
        for section in article.abstract:
            if not section.is_result:
                continue
            for sentence in split_sentences(section.text):
                sentences += 1
                verbatim_flagged += swapped_term(sentence, sentence, article) is not None
                spelled_out = _spelled_out(sentence, definitions)
                if spelled_out != sentence:
                    spelled += 1
                    spelled_flagged += swapped_term(spelled_out, sentence, article) is not None
                stems = {word_stem(w) for w in words(sentence)}
                own = sorted({w for w in words(sentence) if is_technical(w)},
                             key=lambda w: (-said[word_stem(w)], w))  # fmt: skip
                if not own:
                    continue
                old = own[0]
                new = next(
                    (w for w, _ in technical.most_common()
                     if word_stem(w) not in stems and word_stem(w)[:5] != word_stem(old)[:5]),
                    None,
                )  # fmt: skip
                if new is None:
                    continue
                claim = re.sub(rf"\b{re.escape(old)}\b", new, sentence, count=1, flags=re.I)
                if claim == sentence or not claim_supported(
                    claim, sentence, title=article.title, result=True
                ):
                    continue
                passing += 1
                found = swapped_term(claim, sentence, article) is not None
                caught += found
                if word_stem(old) in titled:
                    subject_swaps += 1
                    subject_caught += found
                    if not found:
                        missed.append((old, new, claim))
    rows = [
        ("result sentences", str(sentences)),
        ("... held to swap a term against themselves", str(verbatim_flagged)),
        ("... with an abbreviation spelled out", str(spelled)),
        ("... ... held to swap a term", str(spelled_flagged)),
        ("swapped claims the word-share rule passes", str(passing)),
        ("... caught", f"{caught} ({caught / max(passing, 1):.0%})"),
        ("... a subject (title word) swapped", str(subject_swaps)),
        ("... ... caught", f"{subject_caught} ({subject_caught / max(subject_swaps, 1):.0%})"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for old, new, claim in missed[:5]:
        print(f"  missed {old} -> {new}: {claim[:110]!r}")
    print(
        f"sentences={sentences} verbatim_flagged={verbatim_flagged} "
        f"spelled_flagged={spelled_flagged} swaps_passing={passing} caught={caught} "
        f"subject_swaps={subject_swaps} subject_caught={subject_caught}"
    )


def _spelled_out(sentence: str, definitions: dict[str, str]) -> str:
    """``sentence`` with each abbreviation its article defines replaced by the long form."""
    for abbreviation, meaning in definitions.items():
        if meaning.strip():
            pattern = rf"(?<![\w-]){re.escape(abbreviation)}(?![\w-])"
            sentence = re.sub(pattern, meaning.strip(), sentence)
    return sentence


if __name__ == "__main__":
    main()
