"""How often an English question is called not English: the language check of ``ask``
(:func:`medlit.language.non_english`) over the English questions of the shared data sets.

Reads the 500 PubMedQA questions (``pqal_dev.json``) and the MQP questions (``mqp_dev.csv``,
both columns, deduplicated) from ``../shared/data`` (read there, never copied), and prints the
English questions flagged, the nearest to being flagged (lowest probability of English), and
how many of a few medical questions in other languages are caught.

Usage::

    python benchmarks/language_id.py [--data ../shared/data]

Last line: ``english=N flagged=N nearest_p_english=... other=N caught=N``.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

from medlit.language import ENGLISH_AT_MOST, non_english, reading

#: Medical questions in other languages, written for this benchmark (short, as typed).
OTHER = [
    "¿La aspirina previene el ictus en adultos?",
    "¿Previene la aspirina el síndrome coronario agudo?",
    "¿Es eficaz la metformina en la diabetes tipo 2?",
    "¿Qué es la diabetes?",
    "Sirve el ibuprofeno para la fiebre",
    "¿Las estatinas reducen la mortalidad?",
    "阿司匹林能预防成人中风吗？",
    "二甲双胍对糖尿病有效吗",
    "他汀类药物能降低死亡率吗？",
    "维生素D能预防骨折吗",
    "L'aspirine prévient-elle les AVC chez l'adulte ?",
    "Les statines réduisent-elles la mortalité ?",
    "Verhindert Aspirin Schlaganfälle bei Erwachsenen?",
    "Senken Statine die Sterblichkeit?",
    "A aspirina previne o AVC em adultos?",
    "As estatinas reduzem a mortalidade?",
    "L'aspirina previene l'ictus negli adulti?",
    "Le statine riducono la mortalità?",
    "Аспирин предотвращает инсульт?",
    "Снижают ли статины смертность?",
    "アスピリンは脳卒中を予防しますか？",
    "아스피린은 뇌졸중을 예방합니까?",
    "Voorkomt aspirine een beroerte?",
    "Aspirin felci önler mi?",
    "Czy aspiryna zapobiega udarowi?",
    "هل يمنع الأسبرين السكتة الدماغية؟",
    "क्या एस्पिरिन स्ट्रोक को रोकती है?",
    "Aspirin có ngăn ngừa đột quỵ không?",
    "Apakah aspirin mencegah stroke?",
]


def english_questions(data: Path) -> list[str]:
    """The English questions of PubMedQA's and MQP's development sets."""
    records = json.loads((data / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    questions = [record["QUESTION"] for record in records.values()]
    seen: set[str] = set()
    with (data / "mqp" / "mqp_dev.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            seen.update(q for q in row[1:3] if q.strip())
    return questions + sorted(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    parser.add_argument("--data", type=Path, default=here.parent / "shared" / "data")
    args = parser.parse_args()
    english = english_questions(args.data)
    start = time.perf_counter()
    flagged = [q for q in english if non_english(q) is not None]
    each_ms = (time.perf_counter() - start) / len(english) * 1000
    nearest = sorted((reading(q)[2], q) for q in english)[:5]
    caught = [q for q in OTHER if non_english(q) is not None]
    for question in flagged:
        print(f"flagged: {question}")
    for p_english, question in nearest:
        print(f"nearest: P(English) {p_english:.3f}  {question}")
    for question in OTHER:
        if question not in caught:
            print(f"missed: {question}")
    print(f"threshold P(English) < {ENGLISH_AT_MOST}; {each_ms:.2f} ms a question")
    print(
        f"english={len(english)} flagged={len(flagged)} nearest_p_english={nearest[0][0]:.3f} "
        f"other={len(OTHER)} caught={len(caught)}"
    )


if __name__ == "__main__":
    main()
