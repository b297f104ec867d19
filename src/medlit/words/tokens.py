"""How text is split into words, in one place.

The readers split differently on purpose, each pattern named for what it keeps whole:

- :data:`WORDS`: letters or digits, a decimal number one word; hyphens, slashes and
  apostrophes split ("follow-up": follow, up). The cache key's word rule.
- :data:`HYPHENATED_WORDS`: ASCII letters with inner hyphens and apostrophes kept
  ("don't", "follow-up"), or a number. The cache guard's related checks (on lower-cased text,
  read as typed).
- :data:`ASCII_WORDS`: runs of ASCII letters and digits ("covid19", "sjogren", "s"). The
  evidence digest's cue reader (on lower-cased text, accents folded).
- :data:`UNICODE_WORDS`: runs of any word character. The local full-text query (FTS5 splits
  the same way).
- :data:`TERMS`: letters and digits of any script with inner hyphens kept ("COVID-19",
  "follow-up"). Subject terms of a question (the digest's focus, unmentioned terms).
- :data:`LETTER_TERMS`: the same without digits ("anti-inflammatory"; "IL-6" gives "IL").
  Borrowed terms.
- :data:`LETTER_WORDS`: runs of letters of any script. Swapped terms.
"""

from __future__ import annotations

import re

__all__ = [
    "ASCII_WORDS",
    "HYPHENATED_WORDS",
    "LETTER_TERMS",
    "LETTER_WORDS",
    "TERMS",
    "UNICODE_WORDS",
    "WORDS",
]

WORDS = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")
HYPHENATED_WORDS = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]|\d+(?:\.\d+)?")
ASCII_WORDS = re.compile(r"[a-z0-9]+")
UNICODE_WORDS = re.compile(r"\w+", re.UNICODE)
TERMS = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
LETTER_TERMS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
LETTER_WORDS = re.compile(r"[^\W\d_]+")
