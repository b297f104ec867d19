"""Does the research claim check catch a claim that swaps a term or a direction of its quote?

::

    python benchmarks/claim_swaps.py [--half tune|check|both]   # PubMedQA pqal_dev of ../shared

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

The **direction swap**: each result sentence stating a change (a direction cue of the cue
reader, :func:`medlit.words.stated_directions`) has its first cue word turned the other way
("reduced" -> "increased", "higher" -> "lower": :data:`TURNED`, the benchmark's own table) and is
offered as a claim over the sentence, through :func:`medlit.checks.claim_check.check_claim`.
Counted: the turned claims the other claim checks keep (``direction_passing``), and those of
them ``claim-opposite-direction`` drops (``direction_caught``). False drops, claims as written
that it drops: each result sentence over itself, and over each other result sentence of its
article that the other claim checks keep it on (``as_written``; ``as_written_other`` of them
rest on another sentence than their own, which the claim check may take in place of the quote
given; ``as_written_dropped``).

The articles are one half of ``pqal_dev`` (``--half``; both, one after the other, by default:
:mod:`pubmedqa_cases`); the check half is the one no rule was written from.

Last line: ``sentences=N verbatim_flagged=N spelled_flagged=N swaps_passing=N caught=N
subject_swaps=N subject_caught=N direction_swaps=N direction_passing=N direction_caught=N
as_written=N as_written_other=N as_written_dropped=N`` (each suffixed ``_tune`` and ``_check``
with both halves).
"""

from __future__ import annotations

import re
from collections import Counter

from medlit.checks import check_claim
from medlit.types import Article
from medlit.words import stated_directions
from pubmedqa_cases import both_halves, cases, show_examples

#: Each direction cue word as the swap turns it (the benchmark's table, not a rule's).
TURNED = {
    **dict.fromkeys(("increased", "elevated", "raised"), "decreased"),
    **dict.fromkeys(("decreased", "reduced", "lowered"), "increased"),
    "increase": "decrease", "decrease": "increase", "reduce": "increase",
    "increases": "decreases", "decreases": "increases", "reduces": "increases",
    "increasing": "decreasing", "decreasing": "increasing", "reducing": "increasing",
    "reduction": "increase", "reductions": "increases", "higher": "lower", "lower": "higher",
    "prevented": "caused", "prevents": "causes", "worsened": "improved",
    "more likely": "less likely", "less likely": "more likely",
}  # fmt: skip
DIRECTION = "claim-opposite-direction"


def _turned(sentence: str) -> str | None:
    """``sentence`` with its first direction cue turned the other way (None: none to turn)."""
    cues = stated_directions(sentence)
    if not cues:
        return None
    _, start, end = cues[0]
    word = sentence[start:end]
    new = TURNED.get(word.lower())
    if new is None:
        return None
    new = new.capitalize() if word[:1].isupper() else new
    return sentence[:start] + new + sentence[end:]


def _kept(claim: str, quote: str, article: Article, question: str, *, off: bool) -> bool:
    disabled = {DIRECTION} if off else set()
    return check_claim(claim, quote, article, question, disabled).reason is None


def directions(articles: dict[str, Article], questions: dict[str, str]) -> dict[str, int]:
    """The direction swaps of ``articles``' result sentences and the claims as written (the
    docstring says which): what the claim checks keep, with and without the direction check."""
    from medlit.text import split_sentences

    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = {"caught": [], "missed": [], "dropped as written": []}
    for pmid, article in articles.items():
        question = questions.get(pmid, article.title)
        results = [
            sentence
            for section in article.abstract
            if section.is_result
            for sentence in split_sentences(section.text)
        ]
        for sentence in results:
            turned = _turned(sentence)
            if turned is not None:
                counts["swaps"] += 1
                if _kept(turned, sentence, article, question, off=True):
                    counts["passing"] += 1
                    caught = not _kept(turned, sentence, article, question, off=False)
                    counts["caught"] += caught
                    shown["caught" if caught else "missed"].append(f"{pmid}: {turned[:110]!r}")
            for quote in results:
                kept = check_claim(sentence, quote, article, question, {DIRECTION})
                if kept.reason is None:
                    counts["as_written"] += 1
                    counts["as_written_other"] += kept.quote != sentence
                    if not _kept(sentence, quote, article, question, off=False):
                        counts["as_written_dropped"] += 1
                        shown["dropped as written"].append(
                            f"{pmid}: {sentence[:90]!r} over {quote[:90]!r}"
                        )
    show_examples({kind: lines[:5] for kind, lines in shown.items()})
    return counts


@both_halves
def main(argv: list[str] | None = None) -> int:
    loaded = cases(__doc__, argv)
    if loaded is None:
        return 1
    _, records, by_pmid = loaded

    from medlit.checks.swapped_terms import swapped_term
    from medlit.text import split_sentences
    from medlit.words.defined_terms import article_definitions
    from medlit.words.grounding import claim_supported, word_stem
    from medlit.words.word_rarity import is_technical

    def words(text: str) -> list[str]:
        return [w.lower() for w in re.findall(r"[^\W\d_]{3,}", text)]

    articles = list(by_pmid.values())
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
    turned = directions(by_pmid, {k: r["QUESTION"] for k, r in records.items()})
    rows = [
        ("result sentences", str(sentences)),
        ("... held to swap a term against themselves", str(verbatim_flagged)),
        ("... with an abbreviation spelled out", str(spelled)),
        ("... ... held to swap a term", str(spelled_flagged)),
        ("swapped claims the word-share rule passes", str(passing)),
        ("... caught", f"{caught} ({caught / max(passing, 1):.0%})"),
        ("... a subject (title word) swapped", str(subject_swaps)),
        ("... ... caught", f"{subject_caught} ({subject_caught / max(subject_swaps, 1):.0%})"),
        ("direction swaps (a cue turned)", str(turned["swaps"])),
        ("... the other claim checks keep", str(turned["passing"])),
        (f"... ... {DIRECTION} drops", _share(turned["caught"], turned["passing"])),
        ("claims as written kept over a sentence of theirs", str(turned["as_written"])),
        ("... resting on another sentence than their own", str(turned["as_written_other"])),
        (f"... {DIRECTION} drops (false drops)", str(turned["as_written_dropped"])),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for old, new, claim in missed[:5]:
        print(f"  missed {old} -> {new}: {claim[:110]!r}")
    print(
        f"sentences={sentences} verbatim_flagged={verbatim_flagged} "
        f"spelled_flagged={spelled_flagged} swaps_passing={passing} caught={caught} "
        f"subject_swaps={subject_swaps} subject_caught={subject_caught} "
        f"direction_swaps={turned['swaps']} direction_passing={turned['passing']} "
        f"direction_caught={turned['caught']} as_written={turned['as_written']} "
        f"as_written_other={turned['as_written_other']} "
        f"as_written_dropped={turned['as_written_dropped']}"
    )
    return 0


def _share(part: int, whole: int) -> str:
    return f"{part} ({part / max(whole, 1):.0%})"


def _spelled_out(sentence: str, definitions: dict[str, str]) -> str:
    """``sentence`` with each abbreviation its article defines replaced by the long form."""
    for abbreviation, meaning in definitions.items():
        if meaning.strip():
            pattern = rf"(?<![\w-]){re.escape(abbreviation)}(?![\w-])"
            sentence = re.sub(pattern, meaning.strip(), sentence)
    return sentence


if __name__ == "__main__":
    raise SystemExit(main())
