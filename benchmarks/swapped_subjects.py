"""An article's finding copied with another of its subjects put in front: caught, and never
a true sentence?

::

    python benchmarks/swapped_subjects.py [--data ../shared/data/pubmedqa] [--show 3]

:func:`medlit.checks.swapped_subjects.swapped_subject` holds a cited sentence that copies a run
of words of its article's sentence to the subject that sentence gives it. Over the 500
PubMedQA abstracts:

- **as written**: every abstract sentence cited to its own article, and with "The study found
  that" before it (how the model frames a finding). A flag is a false alarm.
- **held to the rest of its abstract**: the sentence cited to its article with itself taken
  out (:func:`pubmedqa_cases.without_sentence`): a true finding whose words another sentence of
  the article repeats for another subject ("X was associated with mortality", "Y was
  associated with mortality"). Such a flag is what an answer quoting the sentence would meet
  if its abstract lacked it; an upper bound on false alarms.
- **swapped**: each sentence of the form "<subject> was/were/is/are/had/showed <finding>"
  (a subject of at most eight words, with a technical word) given the subject of another such
  sentence of the same article, one with a technical word the first does not say: the swap
  the local model made. A flag is a catch.

Last line: ``sentences=... own_flagged=... framed_flagged=... rest_flagged=... swaps=...
caught=...``.
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks.swapped_subjects import swapped_subject
from medlit.text import split_sentences
from medlit.types import Article
from medlit.words.word_rarity import is_technical
from pubmedqa_cases import both_halves, cases, show_examples, without_sentence

_FORM = re.compile(
    r"^(?P<subject>(?:\S+\s+){0,7}?\S+)\s+(?P<rest>(?:was|were|is|are|had|showed)\s+.{20,})$"
)
_WORD = re.compile(r"[^\W\d_]+")


def _technical(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 and is_technical(w.lower())}


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv, show=3)
    if loaded is None:
        return 1
    args, _, articles = loaded
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {
        "flagged as written": [],
        "flagged, rest": [],
        "caught": [],
        "missed": [],
    }

    def flagged(sentence: str, pmid: str, kind: str, article: Article | None = None) -> bool:
        """Whether ``sentence``, cited to ``pmid``, is flagged against its article (or
        ``article``, that article with the sentence taken out); a few shown by ``kind``."""
        swap = swapped_subject(f"{sentence} [PMID:{pmid}]", article or articles[pmid])
        if swap is not None and len(shown[kind]) < args.show:
            shown[kind].append(f"{pmid}: {swap} | {sentence[:150]}")
        return swap is not None

    for pmid, article in articles.items():
        sentences = [s for sec in article.abstract for s in split_sentences(sec.text)]
        formed = []
        for sentence in sentences:
            counts["sentences"] += 1
            counts["own_flagged"] += flagged(sentence, pmid, "flagged as written")
            framed = f"The study found that {sentence[0].lower()}{sentence[1:]}"
            counts["framed_flagged"] += flagged(framed, pmid, "flagged as written")
            rest = without_sentence(article, sentence)
            counts["rest_flagged"] += flagged(sentence, pmid, "flagged, rest", rest)
            match = _FORM.match(sentence.rstrip("."))
            if match and _technical(match["subject"]):
                formed.append(match)
        for match in formed:
            for other in formed:
                if other is match or not (_technical(other["subject"]) - _technical(match.string)):
                    continue
                swapped = f"{other['subject']} {match['rest']}."
                counts["swaps"] += 1
                if flagged(swapped, pmid, "caught"):
                    counts["caught"] += 1
                elif len(shown["missed"]) < args.show:
                    shown["missed"].append(f"{pmid}: {swapped[:150]}")
                break  # one swap a sentence
    print(f"{'case':<40} {'sentences':>10} {'flagged':>8}")
    print(f"{'as written, own article':<40} {counts['sentences']:>10} {counts['own_flagged']:>8}")
    print(f"{'framed, own article':<40} {counts['sentences']:>10} {counts['framed_flagged']:>8}")
    print(f"{'held to the rest of its abstract':<40} {counts['sentences']:>10} "
          f"{counts['rest_flagged']:>8}")  # fmt: skip
    print(f"{'another subject of the article put in':<40} {counts['swaps']:>10} "
          f"{counts['caught']:>8}")  # fmt: skip
    show_examples(shown)
    print(
        f"sentences={counts['sentences']} own_flagged={counts['own_flagged']} "
        f"framed_flagged={counts['framed_flagged']} rest_flagged={counts['rest_flagged']} "
        f"swaps={counts['swaps']} caught={counts['caught']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
