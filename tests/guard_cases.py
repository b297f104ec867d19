"""The answer-cache guard's near questions of one cached question, shared by the guard's unit
tests and the service test: each was once served the answer cached for :data:`BREAST`, and the
reason the guard now gives names the words that differ."""

from __future__ import annotations

BREAST = "Does immediate breast reconstruction compromise the delivery of adjuvant chemotherapy?"

NEAR = [
    (BREAST.replace("compromise", "improve"), "differs: improve / compromise"),
    (BREAST.replace("immediate", "delayed"), "differs: delayed / immediate"),
    (BREAST.replace("adjuvant", "neoadjuvant"), "differs: neoadjuvant / adjuvant"),
    (BREAST.replace("compromise", "speed up"), "differs: speed, up / compromise"),
    (BREAST.replace("?", " in men?"), "only in one question: men"),
    (BREAST.replace("?", " in elderly patients?"), "only in one question: elderly, patients"),
    (BREAST.replace("?", " in older women?"), "only in one question: older, women"),
    (BREAST.replace("?", " in women over 70?"), "only in one question: women, over, 70"),
]
