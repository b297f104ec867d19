"""syntok's cut replayed (medlit.sentence_cut) gives syntok's sentences, token for token."""

from __future__ import annotations

import contextlib
import json
import random
import re
import sys
from pathlib import Path

import regex
from syntok import segmenter
from syntok.tokenizer import Tokenizer

from medlit import sentence_cut
from medlit.errors import SourceError
from medlit.sentence_cut import syntok_sentences, syntok_starts, syntok_tokens
from medlit.sources.jats import parse_jats
from medlit.sources.pubmed_xml import parse_pubmed_xml
from medlit.text import split_sentences
from tests.conftest import shared_data_path

RECORDED = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "recorded_answers.jsonl"


def _syntok(text: str) -> tuple[list[int], list[str]]:
    """Where syntok itself starts each sentence of ``text``, and the sentences as it joins
    their tokens."""
    sentences = [s for paragraph in segmenter.process(text) for s in paragraph if s]
    joined = ["".join(t.spacing + t.value for t in s) for s in sentences]
    return [s[0].offset for s in sentences], joined


def _replayed(text: str) -> tuple[list[int], list[str]]:
    return syntok_starts(text), list(syntok_sentences(text))


def _differing(texts: list[str]) -> list[str]:
    return [t for t in texts if _replayed(t) != _syntok(t)]


TRICKY = [
    "",
    " ",
    "   leading and trailing   ",
    "One. Two.",
    "Aspirin cut stroke by 20%. [PMID:123] Statins lowered LDL. [PMID:456]",
    "Fewer falls [PMID:1]. Next one [PMID:2].",
    "0.67 vs. 1.58 mmol/l was seen. Next.",
    "Smith et al. [1] found fewer falls. [1] Next.",
    "It fell (P < 0.05) [PMID:2]. The rate rose.",
    "The trial (N. Engl. J. Med. 2001) was large. It ended.",
    "A long aside (This is a sentence inside brackets. And another one that runs on for a "
    "while so it is long.) ends here. Then more.",
    "(A whole sentence in brackets.) The next one.",
    "Fig. 3 shows it. No. 5 was worse. no. 7 too.",
    "Born 12 Jan. 1998. Seen Mar. 3 at noon.",
    "World War II. It ended. Part I. The rest.",
    "He said “it works.” Then he left. 'Quoted.' Next!",
    "What was it? Why not! So... it goes. Yet ... it ends",
    "mRNA and IgG rose.The next began without a space. don't can't won't.",
    "well-known, follow-up, COVID-19; a_b: x'y. p<0.01 and n=3 (95% CI 1.2-3.4).",
    "A 5 ± 2 µg dose of β-blockers; 10 µg. Ménière's disease. Sjögren’s syndrome.",
    "zero\u200bwidth space. Non\u00a0breaking space. Thin\u2009space. File\x1cseparator.",
    "Line one.\nLine two.\n\nA new paragraph. Hyphen-\nated across a line.",
    "e.g. this one. i.e. that one. U.S. patients. A.B.C. test.",
    "The end.)] Closing brackets. [1][2] Next. (PMID: 12) Next.",
    "Ends with a citation [PMID:1].",
    "Mr. Smith saw Dr. Jones. St. Louis ca. 1900. Nr. 5 in Vol. 3.",
]


def test_tricky_texts_are_cut_as_syntok_cuts_them() -> None:
    assert _differing(TRICKY) == []


def test_its_tokens_are_syntoks() -> None:
    tokenizer = Tokenizer()
    for text in TRICKY:
        expected = [(t.spacing, t.value, t.offset) for t in tokenizer.tokenize(text)]
        assert syntok_tokens(text) == expected, text


_PIECES = (
    *("The", "the", "a", "I", "II", "IV", "A", "B", "b", "x", "e", "No", "no", "NO"),
    *("Fig", "vs", "et", "al", "Dr", "Jan", "Mar", "12", "3", "1998", "0.05", "5a", "pH"),
    *("mRNA", "IgG", "don't", "can't", "well-known", "COVID-19", "It", "However", "This"),
    *("What", "é", "±", "µg", "β", "’", "”", "“", '"', "'", "(", ")", "[", "]", "{", "}"),
    *(".", "..", "...", "?", "!", ";", ":", ",", "-", "–", "[PMID:123]", "[1]"),
    *("(PMID: 12)", "(P<0.05)", "e.g.", "U.S.", "p<0.01", "Fig.", "al.", "Smith"),
    *("\u200b", "’s", "x'y", "_", "a_b", "a;b", "a,b", "1,000", "Mr.", "%", "n=3", "95%"),
    *("A.B.C", "5.", "V.", "Nr."),
)
_SPACINGS = (" ", " ", " ", " ", "", "  ", "\n", "\n\n", " \n", "-\n", "\t", "\u00a0", "\x1c")


def test_texts_of_the_tokens_its_rules_turn_on_are_cut_as_syntok_cuts_them() -> None:
    """Texts drawn at random (fixed seed) from tokens syntok's rules ask about: abbreviations,
    months, numbers, roman numerals, brackets, quotes, terminals, odd spaces, line ends."""
    rng = random.Random(45)
    texts = [
        "".join(rng.choice(_PIECES) + rng.choice(_SPACINGS) for _ in range(rng.randint(1, 40)))
        for _ in range(400)
    ]
    assert _differing(texts) == []


def test_its_space_is_syntoks() -> None:
    """The characters it takes for spaces are those syntok's ``regex`` pattern does."""
    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, sys.maxunicode + 1)))
    syntoks = set(regex.findall(r"[\s\u200b]", every))
    assert set(re.findall(f"[{sentence_cut._SPACE}]", every)) == syntoks


def test_an_ascii_word_is_cut_further_where_syntok_cuts_it() -> None:
    """Its quick questions about an ASCII word ask what syntok's separation pattern does."""
    rng = random.Random(7)
    alphabet = "aAbZz09'-_,;.!?()[]{}:/<=%"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(20000)]
    words += ["mRNA", "IgG", "COVID", "Treatment", "p53", "A1b", "aB", "don't", "a-b", "1-a"]
    for word in words:
        syntoks = Tokenizer._separation.search(word) is not None
        assert (sentence_cut._ASCII_SEPARATION.search(word) is not None) == syntoks, word
        assert not (sentence_cut._plain(word) and syntoks), word


def _assembled(abstracts: dict[str, list[str]]) -> list[str]:
    """Answers as benchmarks/checks_speed.py assembles them: ~300 words of ten articles'
    sentences, each cited " [PMID:n].", every fourth to the wrong article."""
    pmids = list(abstracts)
    answers = []
    for first in range(0, len(pmids) - 9, 10):
        evidence = pmids[first : first + 10]
        parts, words = [], 0
        sentences = [(p, s) for p in evidence for s in abstracts[p]]
        for number, (pmid, sentence) in enumerate(sentences):
            cited = evidence[(evidence.index(pmid) + 1) % 10] if number % 4 == 3 else pmid
            parts.append(f"{sentence.rstrip('.')} [PMID:{cited}].")
            words += len(sentence.split())
            if words >= 300:
                break
        answers.append(" ".join(parts))
    return answers


def test_abstracts_answers_and_full_texts_are_cut_as_syntok_cuts_them() -> None:
    """A sample of the real texts it meets: PubMedQA abstracts (title, each section, all of
    it), the recorded model answers, answers assembled from abstracts' result sentences, the
    abstracts of the E-utilities samples and the sections of the PMC full texts."""
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    articles = [a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid][:60]
    texts = [a.title for a in articles]
    texts += [s.text for a in articles for s in a.abstract]
    texts += [a.everything_said for a in articles]
    results = {
        str(a.pmid): [s for x in a.abstract if x.is_result for s in split_sentences(x.text)]
        for a in articles
    }
    texts += _assembled(results)
    rows = [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]
    texts += [line for row in rows for line in row["drafted"].split("\n")]
    for path in sorted(shared_data_path("eutils", "biopython", "entrez").glob("pubmed*.xml")):
        texts += [s.text for a in parse_pubmed_xml(path.read_bytes()) for s in a.abstract]
    for path in sorted(shared_data_path("pmc_oa").glob("*.nxml")):
        with contextlib.suppress(SourceError):  # not open access, no body: not read
            texts += [s.text for s in parse_jats(path.read_bytes()).sections]
    assert len(texts) > 600
    assert _differing(texts) == []
