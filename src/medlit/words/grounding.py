"""Whether a text's words are said by its sources: the word stems, spellings and abbreviations
the checks compare by, and a claim held to its verbatim quote (:func:`claim_supported`).

A report's sentences are held to what their references stand behind by the ``report`` checks
(:mod:`medlit.checks`, run by its ``ground_text``); the
research report's own use of them (its summary, its fallbacks) is
:mod:`medlit.research.grounding`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from medlit.text import sentence_pieces
from medlit.words import (
    cue,
    data_lines,
    mesh,
    named_alike,
    stop_words,
    synonym_groups,
    word_set,
    word_stem,
)
from medlit.words.memo import remembered
from medlit.words.qualified_names import mismatched, qualified_names
from medlit.words.stance import content_terms, sentence_stance
from medlit.words.topics import anchor_terms, normalise_topic
from medlit.words.word_rarity import is_technical, zipf

__all__ = [
    "abbreviation_said",
    "cited_numbers",
    "claim_supported",
    "denied_by_article",
    "question_parts",
    "said_in",
    "topic_words",
    "unframed_claim",
    "unsaid_in_article",
    "without_frame",
    "without_numbers_cited",
    "word_stem",
    "word_stems",
]

#: Share of a claim's content words its verbatim quote must hold (a paraphrase keeps most of
#: them; a claim written from the question over an unrelated quote keeps a third or less).
CLAIM_SUPPORT = 0.6
#: Share of a negative claim's content words its quote and the article's title must hold
#: together when the claim answers the title's question (see :func:`claim_supported`).
TITLE_SUPPORT = 0.8
_NEGATION = cue("negation.claim")

_CITED = re.compile(r"\[(\d+(?:\s*[-–,;]\s*\d+)*)\]")


def without_numbers_cited(sentence: str) -> str:
    """``sentence`` with its reference numbers ("[1]", "[2, 3]") blanked."""
    return _CITED.sub(" ", sentence)


def cited_numbers(sentence: str) -> set[int]:
    """The reference numbers ``sentence`` cites ("[1]", "[2, 3]", "[4-5]")."""
    found: set[int] = set()
    for group in _CITED.findall(sentence):
        found.update(int(n) for n in re.findall(r"\d+", group))
    return found


def claim_supported(
    claim: str,
    quote: str,
    *,
    title: str = "",
    result: bool = False,
    spelled: str = "",
    concluded_yes: bool = False,
) -> bool:
    """Whether a claim says what its verbatim quote says, as far as words can tell.

    The claim must keep :data:`CLAIM_SUPPORT` of its content words from the quote (``spelled``:
    the long forms of the quote's abbreviations count as its words), be negated only if the
    quote is, and name nothing the quote names otherwise (:mod:`medlit.words.qualified_names`).
    A claim that is mostly its article's ``title`` said as a statement must have every title
    word it uses in the quote, or the quote must answer the title yes by a cue of its own
    (:func:`medlit.words.stance.sentence_stance`). A negative claim, or a yes the article's
    conclusion gives too (``concluded_yes``), may take its words from the title when its quote
    is a ``result`` (:func:`_answers_title`).
    """
    words = content_terms(claim)
    if not words:
        return False
    negative = bool(_NEGATION.search(claim))
    if negative != bool(_NEGATION.search(quote)):
        return False
    if mismatched(qualified_names(claim), qualified_names(quote)):
        return False  # "vitamin D reduced pain" over a quote about vitamin C
    quoted = words & (content_terms(quote) | content_terms(spelled))
    titled = content_terms(title)
    # The article's question said as its answer ("X is worthwhile", over a quote on what X
    # fails to do): the subject alone fills most of such a claim, so the
    # quote must say every word of the title it uses ("worthwhile" too), or answer the
    # question yes by its own words ("... can be used as an effective alternative to ...").
    asked = words & titled
    restated = bool(not negative and title and len(asked) >= TITLE_SUPPORT * len(words))
    quote_yes = restated and sentence_stance(quote, title) == "yes"
    if restated and not asked <= quoted and not quote_yes:
        return False
    if len(quoted) >= CLAIM_SUPPORT * len(words):
        return True
    if not ((negative or (quote_yes and concluded_yes)) and result and title):
        return False
    return _answers_title(claim, words, quoted, title, titled)


def _answers_title(
    claim: str, words: set[str], quoted: set[str], title: str, titled: set[str]
) -> bool:
    """The title's question answered in the claim's own words: no ("are not a prognostic
    factor"), or yes by the quote's own cue. The quote must hold two of the claim's words and
    half of those the title does not, name nothing the title names otherwise, and with the
    title hold :data:`TITLE_SUPPORT` of the claim's words."""
    if len(quoted) < 2 or mismatched(qualified_names(claim), qualified_names(title)):
        return False
    beyond_title = words - titled
    if len(beyond_title & quoted) * 2 < len(beyond_title):
        return False  # what the claim adds to the title is not in its quote
    return len(words & (quoted | titled)) >= TITLE_SUPPORT * len(words)


def unsaid_in_article(
    claim: str,
    question: str,
    article: str,
    *,
    spoken: set[str] | None = None,
    named: Callable[[str], bool] | None = None,
) -> str | None:
    """A subject word of ``question`` that ``claim`` uses (as written there) and its ``article``
    never says (the rarest in English, if several), or None.

    A claim can keep most of its words from the quote, so that the :data:`CLAIM_SUPPORT`
    rule passes it, while its subject is the question's and not the article's ("X increases
    the risk of Y" over a quote "Z is associated with increased risk for Y", in an article
    that never says X): the model wrote the quote's finding about something else in the
    question's words. British and
    American spellings are one word ("haemorrhage", "hemorrhage"), and so are a verb's forms
    ("used", "use"); a word of a MeSH term of the claim is said by the article saying the
    concept by another of its names (:func:`medlit.words.mesh.said_otherwise`: "hs-CRP" by
    "C-reactive protein").

    Args:
        claim: the extracted claim.
        question: the sub-question it was extracted for (its subject words are checked).
        article: everything the article says (:attr:`~medlit.types.Article.everything_said`).
        spoken: the word stems of every article retrieved beside it (:func:`word_stems`), if
            known: then a word common in English that none of them says is the question's
            own framing (a verb such as "behave"), which no article could be cited for, and
            is not held to this one. A rare (technical) word still is.
        named: whether the article says a word under another name the question gives it
            ("OXLUMO (lumasiran)": an article on lumasiran says OXLUMO), if known.
    """
    subject = {word_stem(word) for word in anchor_terms(question)} - _ASPECTS
    said = word_stems(article)
    unsaid = []
    for word in re.findall(r"[^\W_]+(?:-[^\W_]+)*", claim):
        key = normalise_topic(word)
        if not key or word_stem(key) not in subject or said_in(key, said):
            continue
        if abbreviation_said(word, article) or mesh.said_otherwise(word, claim, article):
            continue
        if named is not None and named(word):
            continue
        if spoken is not None and not is_technical(word.lower()) and not said_in(key, spoken):
            continue
        unsaid.append(word)
    # The rarest is named: "Statins cause myopathy" is held for "myopathy", not "cause".
    return min(unsaid, key=lambda word: zipf(word.lower()), default=None)


def abbreviation_said(word: str, text: str, *, in_one_word: bool = True) -> bool:
    """Whether ``word``, written as an abbreviation ("PPIs", "CMV", "CABG", "HoLEP"), is said
    in ``text`` by what it abbreviates: the initials of words in a row, small words skipped
    ("proton pump inhibitors", "holmium laser enucleation of the prostate"), one word holding
    its letters in order from its first ("cytomegalovirus"; not with ``in_one_word=False``:
    "chemoradiotherapy" holds C, R and P too), or an abbreviation ``text`` defines that ends
    with it ("human cytomegalovirus (HCMV)")."""
    letters = word[:-1] if word.endswith("s") else word
    if not letters.isalpha() or sum(c.isupper() for c in letters) < 2:
        return False  # "Aspirin" is no abbreviation
    capitals = "".join(c for c in letters if c.isupper())  # "HoLEP": H, L, E, P
    defined = re.findall(r"\(([A-Z][A-Za-z]*)\)", text)
    if any(d.upper().endswith(letters.upper()) for d in defined):
        return True
    if len(capitals) < 3:  # two letters are the initials of too many pairs of words
        return False
    # Initials of words in a row within one sentence or clause: across a full stop or a
    # section label, "prostate cancer? RESULTS: Pathological" spelled CRP.
    initials = [
        "".join(w[0] for w in re.findall(r"[a-z0-9]+", part) if w not in _SMALL_WORDS)
        for part in _BREAKS.split(text.lower())
    ]
    forms = [form.lower() for form in {letters, capitals} if form.isupper()]
    if any(form in run for form in forms for run in initials):
        return True
    if not in_one_word:
        return False
    short = capitals.lower()
    spelled = re.compile(".*?".join(map(re.escape, short)))
    words = re.findall(r"[a-z0-9]+", text.lower())
    return any(w[0] == short[0] and len(w) >= 2 * len(short) and spelled.match(w) for w in words)


#: What ends the run of words an abbreviation's initials are read in.
_BREAKS = re.compile(r"[.?!:;,()\[\]\n]+")
#: Words an abbreviation's initials skip ("enucleation of the prostate": E, P).
_SMALL_WORDS = stop_words("initials")


def said_in(key: str, stems: set[str]) -> bool:
    """Whether the topic word ``key`` is among ``stems`` (:func:`word_stems`) in one of its
    forms: as itself, a verb's past or present participle as the verb ("used" as "use",
    "linked" as "link", "using" as "use"), a verb and its noun in "-ion" or "-ation" as one
    ("dilating", "dilate", "dilation" and "dilatation"; "ligated" and "ligation"), a noun in
    "-ure" and its verb ("exposure", "exposed"), an adverb and its adjective ("safely",
    "safe"), an organ's noun and adjective, a clinician's word and the abstract's synonym, a
    hyphenated word by its closed-up form ("auto-CPAP", "autoCPAP") and a hyphenated compound
    by each of its parts."""
    if not stems.isdisjoint(_form_stems(key)):
        return True
    # A compound of a technical word is said by its parts ("ankle-brachial" by "Ankle/Arm
    # blood pressure Index"), when they are words: "non-communicable" is not said by "non"
    # and "communicable", nor "high-dose" by "high" and "dose" anywhere.
    parts = key.split("-")
    return (
        len(parts) > 1
        and not any(len(part) < 3 or part in _PREFIXES for part in parts)
        and any(is_technical(part) for part in parts)
        and all(said_in(part, stems) for part in parts)
    )


@functools.lru_cache(maxsize=16384)
def _form_stems(key: str) -> frozenset[str]:
    """The :func:`word_stem` of each form of the topic word ``key`` that :func:`said_in` looks
    for (worked out once a word: said_in runs for every subject word of every sentence)."""
    forms, roots = [key], []
    if "-" in key:
        forms.append(key.replace("-", ""))
    if key.endswith("ed") and len(key) >= 4:
        forms += [key[:-1], key[:-2]]
        roots = [key[:-2]]
    elif key.endswith("ing") and len(key) > 5:
        forms += [key[:-3], key[:-3] + "e"]
        roots = [key[:-3]]
    elif key.endswith("ion") and len(key) > 7:  # "dilation": "dilat"; "dilatation": "dilat" too
        roots = [key[:-3], key[:-5]] if key.endswith("ation") else [key[:-3]]
        forms += [root + "e" for root in roots]
    elif key.endswith("ate") and len(key) > 5:
        roots = [key[:-1]]
    elif key.endswith("ure") and len(key) > 6:  # "exposure": "exposed", "expose"
        forms.append(key[:-3] + "e")
    elif key.endswith("ly") and len(key) > 5:  # "safely": "safe"; "laparoscopically"
        forms.append(key[:-2])
    forms += [root + ending for root in roots for ending in ("ion", "ation")]
    forms += _latin_forms(key)
    forms += _synonyms(word_stem(key))
    return frozenset(word_stem(form) for form in forms)


#: What a hyphen joins to a word to change its meaning ("non-", "pre-", "anti-"; shorter
#: parts are no words either): words/data/prefixes.txt.
_PREFIXES = word_set("prefixes.txt")


# Words a clinician and an abstract use for one thing ("sex" and "gender", "kidney" and
# "renal"), by stem: a question asked in one is answered by an article written in the other.
_SYNONYM_PAIRS = tuple((a, b) for a, b in synonym_groups("term_synonyms.tsv"))


@functools.cache
def _synonyms(stem: str) -> tuple[str, ...]:
    """The synonyms of the word whose stem is ``stem`` (read once a stem: said_in runs for
    every subject word of every sentence checked)."""
    return tuple(b for a, b in _SYNONYM_PAIRS if word_stem(a) == stem) + tuple(
        a for a, b in _SYNONYM_PAIRS if word_stem(b) == stem
    )


# An organ's noun and adjective (Latin): (noun ending, adjective ending) pairs, tried both
# ways, on a root of three letters or more ("rectum" and "rectal", "cyst" and "cystic").
_LATIN_PAIRS = tuple(
    (noun, adjective)
    for noun, adjective in (line.split("\t") for line in data_lines("latin_endings.tsv"))
)


def _latin_forms(key: str) -> list[str]:
    forms = []
    for noun, adjective in _LATIN_PAIRS:
        for have, other in ((noun, adjective), (adjective, noun)):
            root = key[: len(key) - len(have)]
            if key.endswith(have) and len(root) >= 3:
                forms.append(root + other)
    return forms


#: Words a sub-question frames its subject with ("What are the benefits of ..."), not subjects.
_ASPECTS = word_set("aspect_stems.txt")


def word_stems(text: str) -> set[str]:
    """The :func:`word_stem` of each topic word of ``text``, and of each part of a hyphenated
    one ("short-term" says "short" too) and of its closed-up form ("auto-CPAP" says
    "autoCPAP"); a text naming a thing of :data:`_NAMED_ALIKE` says the words of its other
    names too ("urinary stones" says "kidney stones"). Remembered: an article's text is read
    once, however many checks read it."""
    return set(_word_stems(text))


@remembered(4096)
def _word_stems(text: str) -> frozenset[str]:
    words = normalise_topic(text).split()
    for names, said in _named_alike(text):
        if names.search(text):
            words += said
    parts = set(words)
    for word in words:
        if "-" in word:  # "short-term": "shortterm", "short", "term" too
            parts.add(word.replace("-", ""))
            parts.update(word.split("-"))
    parts.discard("")
    return frozenset(map(word_stem, parts))


# Things a clinician and an abstract name in other words than a word for a word ("kidney
# stone", "urolithiasis"): each, the names (a pattern), the words any of them says, and the
# letters every name holds (a text holding none names none).
_NAMED_ALIKE = named_alike()
# What a case-blind pattern reads as a letter whose lower case is not that letter.
_OTHER_CASES = re.compile("[\u0130\u0131\u017f]")


def _named_alike(text: str) -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    """The entries of :data:`_NAMED_ALIKE` whose names ``text`` may hold (a string search,
    much cheaper than the patterns over an abstract)."""
    if _OTHER_CASES.search(text):
        return [(names, said) for names, said, _ in _NAMED_ALIKE]
    lower = text.lower()
    return [
        (names, said)
        for names, said, letters in _NAMED_ALIKE
        if any(part in lower for part in letters)
    ]


def denied_by_article(
    claim: str, quote: str, abstract: Sequence[str], title: str = ""
) -> str | None:
    """A word a positive claim brings in beside its quote and its article's ``title`` that the
    article's ``abstract`` (the sections' texts) says only in negative sentences, or None.

    A claim can keep most of its words from a quote on one correlation ("X correlates with
    Y") and bring in another the article denies ("X correlates with Z", where the article's
    one sentence on Z is "did not show any association with Z"). The title's words are the
    article's subject: naming it ("anorectal malformations" for "ARM") brings nothing in.
    """
    if _NEGATION.search(claim):
        return None
    words = content_terms(claim) - content_terms(quote) - content_terms(title)
    negated: dict[str, bool] = {}
    for text in abstract:
        for sentence in sentence_pieces(text):
            negative = bool(_NEGATION.search(sentence))
            for word in words & content_terms(sentence):
                negated[word] = negated.get(word, True) and negative
    return next((word for word, only in sorted(negated.items()) if only), None)


def topic_words(text: str) -> set[str]:
    """A text's topic words, and its qualified names as "head qualifier" ("vitamin D")."""
    names = qualified_names(text)
    return set(normalise_topic(text).split()) | {f"{h} {q}" for h, qs in names.items() for q in qs}


# "The article states that X", "The study found that X": the article's finding is X. A frame
# that hedges ("suggests that") is kept: without it, the claim would say more than its article.
_ARTICLE_FRAME = re.compile(
    r"^(?:the|this|our)\s+(?:article|study|paper|abstract|trial|authors?|analysis|review|"
    r"results?|data)\s+(?:state[sd]?|find|finds|found|show(?:s|ed|n)?|report(?:s|ed)?|"
    r"demonstrate[sd]?|observed|conclude[sd]?)\s+that\s+(?=\w)",
    re.I,
)


def unframed_claim(claim: str) -> str:
    """A research claim without an opening that names its article ("The article states that
    an increased trend was detected ..." is "An increased trend was detected ..."): the frame
    is no finding, and its words are not the quote's."""
    return without_frame(claim, _ARTICLE_FRAME)


def without_frame(sentence: str, frame: re.Pattern[str]) -> str:
    """``sentence`` without an opening ``frame`` (its next word capitalised, unless it is
    cased within: "mRNA" stays)."""
    match = frame.match(sentence)
    if match is None:
        return sentence
    rest = sentence[match.end() :]
    return rest if rest[1:2].isupper() else rest[0].upper() + rest[1:]  # "mRNA" stays


_ASKING = (
    r"(?:does|do|did|is|are|was|were|can|could|should|will|would|has|have|what|which|how|when|"
    r"who|at what|to what|if so)\b"
)
# Where a question asks a second thing: ", and does ...", "; what ...", ", and at what ...".
_SECOND_ASK = re.compile(rf"\s*(?:[,;]\s*(?:and\s+|but\s+)?|\s+and\s+)(?={_ASKING})", re.I)
_ASKS = re.compile(_ASKING, re.I)


def question_parts(question: str) -> list[str]:
    """The things a question asks: the whole question, and each of its asks when it asks more
    than one ("Is laparoscopic cholecystectomy safe as a day case procedure, and does patient
    sex affect its outcome?"): a fact that answers one of them speaks of the question. Each
    part must be a question of its own ("In patients with diabetes, is metformin safe?" asks
    one thing)."""
    pieces = [p.strip(" ,;?") for p in _SECOND_ASK.split(question)]
    asks = [p for p in pieces if anchor_terms(p)]
    if len(asks) < 2 or not all(_ASKS.match(p) for p in pieces):
        return [question]
    return [question, *asks]
