"""Abbreviations an answer uses, spelled out as its cited articles define them.

A small model writes an abstract's abbreviations as if the reader had read the abstract ("a
reduction in PVT [PMID:1]", where the article defines "peripheral venous thrombophlebitis (PVT)").
The first use of such an abbreviation in the answer becomes "peripheral venous thrombophlebitis
(PVT)", in the words of the article it cites (found with the Schwartz-Hearst algorithm, the
``abbreviations`` package). A research report's summary and each of its sections get the same, from
the references they cite. Only a definition the answer's cited articles agree on is used; an
abbreviation the answer defines itself, one no cited article defines, and the statistical ones every
reader knows (CI, OR, HR) stay as written.

A long form is written as an abstract writes it mid-sentence ("multiple sclerosis", but
"Parkinson's disease" and "Los Angeles"); one seen only opening sentences, where a capital says
nothing, gets a lower-case first letter unless it is a name or an eponym.

The package finds a long form written first ("ankle-arm index (AAI)"); one written after the
abbreviation ("AAI (Ankle/Arm blood pressure Index)", rarer) is found
here, by the same letter rule (the package's ``select_definition``), when the whole
parenthesis is the long form, has two words or more and no digit.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Sequence
from typing import Any

from medlit.log import get_logger
from medlit.types import Article
from medlit.words import word_set

__all__ = ["article_definitions", "long_forms", "spell_out", "standing_alone"]

log = get_logger("defined_terms")

# Known to every reader of a clinical abstract: spelling them out would only lengthen it.
_COMMON = word_set("known_abbreviations.txt")
# An abbreviation as written: two or more capitals, maybe with digits, lower-case letters or a
# hyphen between ("PVT", "MDD", "COVID-19", "SNPs"), or one lower-case letter before two
# capitals ("pSS" for primary Sjögren's syndrome, "eGFR"; "reOSCE" is none).
_ABBREVIATION = re.compile(
    r"(?<![\w-])((?:[a-z](?=[A-Z]{2}))?[A-Z][A-Za-z0-9-]*[A-Z0-9]s?)(?![\w-])"
)
_CITATION = re.compile(r"\[[^\]]*\]|\(PMIDs?[^)]*\)", re.I)
# An abbreviation followed by a parenthesis that may be its long form: "AAI (Ankle/Arm …)".
_LONG_FORM_AFTER = re.compile(r"(?<![\w-])([A-Z][A-Za-z0-9-]*[A-Z0-9]s?) \(([^()]+)\)")

# (article key, hash of its text) -> its definitions (remembered)
_definitions: dict[tuple[str, int], dict[str, str]] = {}
_import_lock = threading.Lock()


def article_definitions(article: Article) -> dict[str, str]:
    """The abbreviations ``article`` defines in its title and abstract, with their long forms."""
    text = f"{article.title}\n{article.abstract_text}"
    remembered = (article.key, hash(text))  # a record revised since is read again
    known = _definitions.get(remembered)
    if known is None:
        known = _schwartz_hearst().extract_abbreviation_definition_pairs(doc_text=text)
        known = {**_long_forms_after(text), **known}
        if len(_definitions) > 4096:
            _definitions.clear()
        _definitions[remembered] = known
    return known


def _long_forms_after(text: str) -> dict[str, str]:
    """The abbreviations ``text`` defines long form last: "AAI (Ankle/Arm blood pressure
    Index)". The parenthesis must be the long form whole (not "HbA1c (at baseline)")."""
    module = _schwartz_hearst()
    found: dict[str, str] = {}
    for match in _LONG_FORM_AFTER.finditer(text):
        abbreviation, long_form = match.group(1), match.group(2).strip()
        if len(long_form.split()) < 2 or any(c.isdigit() for c in long_form):
            continue
        candidate = module.Candidate(long_form)
        candidate.set_position(0, len(long_form))
        try:
            definition = module.select_definition(candidate, abbreviation)
        except (ValueError, IndexError):  # its letters are not the long form's
            continue
        if str(definition) == long_form:
            found.setdefault(abbreviation, long_form)
    return found


def _schwartz_hearst() -> Any:
    """The package's module, imported without its side effect: at import it configures the
    root logger (``logging.basicConfig`` at INFO), after which every library's INFO records
    (httpx's "HTTP Request: POST …" among them) were printed under medlit's own output."""
    with _import_lock:  # a second thread waits for the whole import, and restores nothing
        module = sys.modules.get("abbreviations.schwartz_hearst")
        if module is not None:
            return module
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            from abbreviations import schwartz_hearst
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        logging.getLogger(schwartz_hearst.__name__).setLevel(logging.WARNING)
        return schwartz_hearst


def spell_out(text: str, cited: Sequence[Article]) -> str:
    """``text`` with the first use of each abbreviation the ``cited`` articles (those it
    cites) define spelled out ("PVT" -> "peripheral venous thrombophlebitis (PVT)")."""
    if not cited:
        return text
    bare = _CITATION.sub(" ", text)
    spelled: list[str] = []
    for abbreviation in dict.fromkeys(m.group(1) for m in _ABBREVIATION.finditer(bare)):
        if abbreviation in _COMMON or f"({abbreviation})" in bare:
            continue  # known to all, or the answer defines it itself
        meanings = {
            d[abbreviation].strip()
            for d in map(article_definitions, cited)
            if abbreviation in d and d[abbreviation].strip()
        }
        if len({m.lower() for m in meanings}) != 1:
            continue  # no cited article defines it, or they disagree
        meaning = meanings.pop()
        said = _said_first(text, meaning, abbreviation)
        if said is not None:  # the long form comes first: it is where the reader learns it
            text = f"{text[:said]} ({abbreviation}){text[said:]}"
        else:
            long_form = _mid_sentence(meaning, cited)
            text = _first_use(text, abbreviation, f"{long_form} ({abbreviation})")
        spelled.append(abbreviation)
    if spelled:
        log.info("abbreviations_spelled_out", abbreviations=spelled)
    return text


def standing_alone(term: str) -> str:
    """The pattern of ``term`` as a word of its own: not inside a longer word, nor a hyphenated
    one ("PD" is not in "PD-1", "FM" not in "FMS")."""
    return rf"(?<![\w-]){re.escape(term)}(?![\w-])"


def long_forms(text: str, article: Article) -> str:
    """The long forms of the abbreviations ``text`` (a sentence of ``article``) uses that the
    article defines and ``text`` does not spell out: "fatigue in pSS is not due to FM" gives
    "primary Sjögren's syndrome; fibromyalgia". For checking a claim that spells out what the
    sentence abbreviates (their words count as the sentence's, nothing else of them does: a
    long form's "non-" in "non-small cell lung cancer" negates nothing the sentence says).
    """
    found: list[str] = []
    lowered = text.lower()
    for abbreviation, meaning in article_definitions(article).items():
        meaning = meaning.strip()
        if sum(c.isupper() for c in abbreviation) < 2 or not meaning:
            continue  # "female" for a garbled long form is no abbreviation; "pSS", "FM" are
        if meaning.lower() in lowered or meaning in found:
            continue
        if re.search(standing_alone(abbreviation), text):
            found.append(meaning)
    return "; ".join(found)


def _a_name(long_form: str) -> bool:
    """Whether a long form keeps its capitals mid-sentence: an acronym-led one ("HIV
    infection") or a name ("Study of Women's Health Across the Nation")."""
    words = [w for w in long_form.split() if len(w) > 3]
    return long_form[:2].isupper() or (len(words) > 1 and all(w[0].isupper() for w in words))


def _mid_sentence(long_form: str, articles: Sequence[Article]) -> str:
    """``long_form`` as it is written mid-sentence: as an abstract writes it there, else (it
    only opens sentences, where a capital says nothing) with a lower-case first letter, unless
    it is a name or an eponym ("Parkinson's disease")."""
    if _a_name(long_form):
        return long_form
    pattern = re.compile(standing_alone(long_form), re.I)
    for article in articles:  # the abstract, not the title: titles capitalise every word
        text = article.abstract_text
        for match in pattern.finditer(text):
            if not _opens_sentence(text, match.start()):
                return match.group(0)
    if long_form.split()[0].endswith(("'s", "\u2019s")):
        return long_form
    return long_form[0].lower() + long_form[1:]


def _said_first(text: str, long_form: str, abbreviation: str) -> int | None:
    """Where the first mention of ``long_form`` in ``text`` ends, when it comes before the
    first use of ``abbreviation`` ("fibromyalgia was rare ... FM was ..."), else None."""
    said = _outside_citations(text, standing_alone(long_form), re.I)
    used = _outside_citations(text, standing_alone(abbreviation))
    if said is None or (used is not None and used.start() < said.start()):
        return None
    return said.end()


def _outside_citations(text: str, pattern: str, flags: int = 0) -> re.Match[str] | None:
    """The first match of ``pattern`` in ``text`` outside a citation."""
    return next(
        (m for m in re.finditer(pattern, text, flags) if not _inside_citation(text, m.start())),
        None,
    )


def _first_use(text: str, abbreviation: str, replacement: str) -> str:
    """``text`` with the first use of ``abbreviation`` outside a citation replaced; a sentence
    that opens with it keeps its capital."""
    match = _outside_citations(text, standing_alone(abbreviation))
    if match is None:
        return text
    if _opens_sentence(text, match.start()):
        replacement = replacement[0].upper() + replacement[1:]
    return text[: match.start()] + replacement + text[match.end() :]


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens a sentence (or a heading's text: after a colon)."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?:\n"


def _inside_citation(text: str, at: int) -> bool:
    return any(m.start() <= at < m.end() for m in _CITATION.finditer(text))
