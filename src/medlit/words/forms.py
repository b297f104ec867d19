"""A word's forms: its spelling folded, its lemmas, its stem.

- :func:`spelling`: British / American spelling folded (the ``breame`` package's table of
  1,700 irregular words, then the regular patterns of medical English: ae / e, oe / e,
  -our / -or, -ise / -ize, -yse / -yze, -tre / -ter, -ogue / -og, sulph- / sulf-) and a
  number word as its digits;
- :func:`lemmas`: the noun and verb lemmas of ``lemminflect`` (women / woman, improves /
  improve), read from a table of its dictionary shipped in ``words/data`` (:func:`lemma_rows`,
  a test holds it equal to the installed ``lemminflect``), so that a few words cost no load
  of the whole dictionary (0.3-0.5 s);
- :func:`word_stem`: the stem the answer checks compare words by, the first six letters of a
  word in American spelling (:func:`prefix_stem` without the spelling);
- :func:`plural_lemma`: a plural's singular by its ending (rashes / rash), for readers that
  must not load a dictionary.

The stems differ on purpose: the checks compare an answer's words with an abstract's by six
letters ("random", "randomised", "randomized" are one), which a dictionary lemmatiser does
not join; the cache key compares two questions by lemma, which keeps "older" apart from
"old". Each was measured in its reader's benchmark.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from medlit.words import sorted_lines

__all__ = [
    "LEMMA_TABLE",
    "is_verb",
    "lemma_rows",
    "lemmas",
    "load_lemmas",
    "plural_lemma",
    "prefix_stem",
    "spelling",
    "word_stem",
]

# Regular British / American spelling differences of medical English, applied after the
# ``breame`` table (which holds the irregular ones: ageing, grey, programme, licence ...).
_SPELLING_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ae"), "e"),  # haem-, anaemia, paediatric, aetiology, caesarean
    (re.compile(r"oe(?!s$)"), "e"),  # oedema, apnoea, oesophagus, foetal, coeliac (not toes)
    (re.compile(r"(?<=[a-z]{2})our(?=$|s$|ed$|ing$|ite|able|al|ful|less|er|ist)"), "or"),
    (re.compile(r"(?<=[a-z]{4})is(?=e$|es$|ed$|ing$|ation|er$|ers$|able$)"), "iz"),
    (re.compile(r"ys(?=e$|es$|ed$|ing$|er$|ers$)"), "yz"),
    (re.compile(r"(?<=[a-z]{3})tre(?=s?$)"), "ter"),
    (re.compile(r"ibre(?=s?$)"), "iber"),
    (re.compile(r"(?<=[a-z]{3})ogue(?=s?$)"), "og"),
    (re.compile(r"sulph"), "sulf"),
)
_LEMMA_TAGS = ("NOUN", "VERB", "AUX", "PROPN")

# A number written as a word is the number ("four weeks" / "4 weeks"); "one" is also a pronoun.
_NUMBERS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
}  # fmt: skip


@cache
def british() -> dict[str, str]:
    """The ``breame`` table: a British spelling -> its American spelling."""
    from breame.data.spelling_constants import BRITISH_ENGLISH_SPELLINGS

    return dict(BRITISH_ENGLISH_SPELLINGS)


@lru_cache(maxsize=65536)
def spelling(word: str) -> str:
    """``word`` (lower case) in one spelling for British and American variants, a number
    word as its digits."""
    if word in _NUMBERS:
        return _NUMBERS[word]
    word = british().get(word, word)
    if len(word) < 5 or not word.isalpha():
        return word
    for pattern, replacement in _SPELLING_RULES:
        word = pattern.sub(replacement, word)
    return word


#: The lemma table in ``words/data`` (made by ``benchmarks/make_lemma_table.py``).
LEMMA_TABLE = "lemmas.tsv.gz"


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """The noun and verb lemmas of a spelling-folded word (:func:`spelling`), and the word
    itself, each spelling-folded; a word ``lemminflect`` does not know, by its rules for nouns
    and verbs."""
    if not word.isalpha():
        return frozenset((word,))
    known = _dictionary(word)
    if known is not None:
        forms = set(known[1])
    else:  # not in its dictionary: its rules for nouns and verbs
        import lemminflect

        forms = set()
        for tag in ("NOUN", "VERB"):
            forms.update(lemminflect.getAllLemmasOOV(word, tag).get(tag, ()))
    return frozenset({word, *(spelling(lemma) for lemma in forms)})


def known_word(word: str) -> bool:
    """Whether ``lemminflect``'s dictionary knows ``word`` (lower case, letters): a word of
    English, not a name or a made-up inflection ("psoriasises")."""
    return word.isalpha() and _dictionary(word) is not None


@lru_cache(maxsize=4096)
def is_verb(word: str) -> bool:
    """Whether a word can be a verb (``lemminflect`` knows a verb lemma of it)."""
    known = _dictionary(word) if word.isalpha() else None
    return known is not None and known[0]


def _dictionary(word: str) -> tuple[bool, tuple[str, ...]] | None:
    """What ``lemminflect``'s dictionary says of a word of letters: (whether it has a verb
    lemma, its noun, verb, auxiliary and proper-noun lemmas), or None when it does not know
    the word. A lower-case word is read from the lemma table (:func:`lemma_rows`, shipped
    in the package: a few words cost no load of the dictionary's 80,000 lines)."""
    if word.islower():
        found = sorted_lines.find(_lemma_table(), word.encode())
        if found is None:
            return None
        verb, _, forms = found.decode().partition("\t")
        return verb == "v", tuple(forms.split("/")) if forms else ()
    return _from_lemminflect(word)


@cache
def _lemma_table() -> bytes:
    return sorted_lines.load(LEMMA_TABLE)


def _from_lemminflect(word: str) -> tuple[bool, tuple[str, ...]] | None:
    import lemminflect

    found = lemminflect.getAllLemmas(word)
    if not found:
        return None
    forms = dict.fromkeys(lemma for tag in _LEMMA_TAGS for lemma in found.get(tag, ()))
    return bool(found.get("VERB")), tuple(forms)


def lemma_rows() -> list[str]:
    """The lemma table's lines, from ``lemminflect``: each lower-case word of letters its
    dictionary or overrides know, ``word<TAB>v or -<TAB>lemmas`` (``v``: it has a verb lemma;
    its noun, verb, auxiliary and proper-noun lemmas joined by ``/``), sorted by bytes."""
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer = Lemmatizer()  # its dictionary's words (it has no public list of them)
    words = {*lemmatizer._getLemmaDict(), *lemmatizer._getOverridesDict()}
    rows = []
    for word in sorted((w for w in words if w.isalpha() and w.islower()), key=str.encode):
        known = _from_lemminflect(word)
        if known is not None:
            rows.append(f"{word}\t{'v' if known[0] else '-'}\t{'/'.join(known[1])}")
    return rows


def load_lemmas() -> None:
    """Load the lemma table and ``lemminflect``'s rules for words it does not know now."""
    import lemminflect

    _lemma_table()
    lemminflect.getAllLemmasOOV("medlit", "NOUN")


def prefix_stem(word: str) -> str:
    """A word's first six letters: the crude stem the evidence digest's cue reader compares
    a question's words with a conclusion's by."""
    return word[:6]


@lru_cache(maxsize=65536)
def word_stem(word: str) -> str:
    """A word's first six letters in American spelling (haem -> hem, oedema -> edema)."""
    word = re.sub(r"ae|oe", "e", word)
    return re.sub(r"our$", "or", word)[:6]


def plural_lemma(word: str) -> str:
    """A plural's singular by its ending: "-ies" -> "-y"; "-ches", "-shes", "-sses", "-xes"
    lose "-es" (rashes: rash, but headaches: headach); "-s" goes, not from "-ss", "-us",
    "-is". The guard's related checks compare the results only with each other."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
