"""Which language a question is written in, when it is not English.

medlit searches English abstracts (PubMed's, Europe PMC's, the local corpus's), so a question
in Spanish or Chinese finds nothing it means, and the answer checks read its words as terms no
article speaks of. :func:`non_english` names the language of such a question, for one line
that says so and, with a model, a translation to search with (task ``translate_question``).

The identifier is py3langid's (langid.py's model, shipped inside the package; numpy only),
limited to :data:`LANGUAGES`. It is loaded on first use, once a process (about half a second),
and only on a cache miss: a question answered from the cache never imports it.

A question is called not English only when English is all but ruled out: the identifier's
best language is another and its probability of English is under :data:`ENGLISH_AT_MOST`.
Short English questions full of Latin and drug names ("Are fibroadenomas malignant?") read a
little like Tagalog or Portuguese; on the 2,825 English questions of PubMedQA's and MQP's
development sets none is flagged at this threshold, the nearest at P(English) 0.08
(``python benchmarks/language_id.py``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENGLISH_AT_MOST",
    "LANGUAGES",
    "QuestionLanguage",
    "non_english",
    "reading",
    "searched_in_english",
]

#: Under this probability of English (and another language ranked first) a question is called
#: not English. The English questions measured stay above 0.08.
ENGLISH_AT_MOST = 0.03

#: The languages a question is told apart from English in (ISO 639-1 code: name). Limiting
#: the identifier to written languages a reader may ask in keeps English questions full of
#: Latin names from reading as Latin, and a short one from reading as a language of few words.
LANGUAGES = {
    "af": "Afrikaans",
    "ar": "Arabic",
    "bg": "Bulgarian",
    "bn": "Bengali",
    "ca": "Catalan",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "et": "Estonian",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "hr": "Croatian",
    "hu": "Hungarian",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "ms": "Malay",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sr": "Serbian",
    "sv": "Swedish",
    "sw": "Swahili",
    "th": "Thai",
    "tl": "Tagalog",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "vi": "Vietnamese",
    "zh": "Chinese",
}


@dataclass(frozen=True)
class QuestionLanguage:
    """The language a question reads as: its ISO 639-1 code and its English name."""

    code: str
    name: str


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(LANGUAGES))
    return identifier


def reading(text: str) -> tuple[str, float, float]:
    """The language ``text`` reads most as, that language's probability and English's."""
    ranked = _identifier().rank(text)
    best, p_best = ranked[0]
    p_english = next((p for code, p in ranked if code == "en"), 0.0)
    return str(best), float(p_best), float(p_english)


def non_english(text: str) -> QuestionLanguage | None:
    """The language of ``text`` when it is not English (English all but ruled out), else None.

    >>> non_english("¿La aspirina previene el ictus en adultos?")
    QuestionLanguage(code='es', name='Spanish')
    >>> non_english("Are fibroadenomas malignant?") is None
    True
    """
    if not any(ch.isalpha() for ch in text):
        return None
    best, _p_best, p_english = reading(text)
    if best == "en" or p_english >= ENGLISH_AT_MOST:
        return None
    return QuestionLanguage(best, LANGUAGES.get(best, best))


def searched_in_english(language: QuestionLanguage, translation: str | None) -> str:
    """The line that tells the reader: "medlit searches English abstracts; this question reads
    as Spanish", and what it searched instead, or how to get an answer, after it."""
    line = f"medlit searches English abstracts; this question reads as {language.name}"
    if translation:
        return f'{line}. It searched its English translation: "{translation}"'
    return f"{line}: ask in English, or configure a model (MEDLIT_LLM_*) to translate it"
