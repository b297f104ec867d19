"""Build the answer cache's contrast set: minimal edits and true rewordings of real questions.

Usage::

    python benchmarks/make_cache_contrast.py ../shared/data [--out FILE]

``--out`` defaults to ``benchmarks/data/cache_contrast.csv`` (committed; the tests read it).

Each row is a pair (``cached``, ``asked``): ``cached`` a real question (a PubMedQA title from
``pubmedqa/pqal_dev.json``, a first question of ``mqp/mqp_dev.csv``, or one of the issue's own
examples), ``asked`` the same question after one edit:

- ``group=edit``: a minimal edit that asks something else, by ``kind``: direction (an effect's
  direction or a negation), population, timing, intervention, outcome, site, actor,
  comparison. Serving the cached answer for it is a wrong answer.
- ``group=reword``: a true rewording, by ``kind``: spelling (British / American), inflection,
  synonym (the vetted table), order (a phrase moved), framing (another auxiliary verb).
  Serving the cached answer is right.

Edits are word swaps and appended phrases from fixed lists (below), applied to the first
questions (sorted by source id) where they fit, at most ``PER_RULE`` questions a rule. The
output is deterministic: rerun it to regenerate the committed file.

Each row has its ``part``, by the half of ``pqal_dev`` its title is in
(:func:`pubmedqa_cases.half_of`; a rule may be written from tune-half cases only):

- ``tune``: the rules over every source (both halves' titles, MQP, the issue's examples), as
  the guard was written against them, less the check-half titles: cases a rule may be written
  from. The tests hold the guard to them.
- ``check-seen``: that first pass's check-half titles. The guard was checked against them while
  it was written, so they judge nothing it was not written from; reported apart.
- ``check``: the same rules over the check-half titles that first pass left unused, never
  looked at while the guard was written: the held-out figure (``cache_contrast.py``'s
  headline).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pubmedqa_cases import half_of

PER_RULE = 3
#: The parts of the set, the held-out one first.
PARTS = ("check", "check-seen", "tune")

# kind -> (find, replace) word swaps; the find is matched as a whole word, case-insensitive.
SWAPS: dict[str, list[tuple[str, str]]] = {
    "direction": [
        ("improve", "worsen"), ("improves", "worsens"), ("improved", "worsened"),
        ("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"),
        ("reduce", "increase"), ("reduces", "increases"), ("reduced", "increased"),
        ("decrease", "increase"), ("prevent", "cause"), ("better", "worse"),
        ("higher", "lower"), ("lower", "higher"), ("more", "less"), ("positive", "negative"),
        ("negative", "positive"), ("benefit", "harm"), ("beneficial", "harmful"),
        ("effective", "ineffective"), ("accurate", "inaccurate"), ("safe", "unsafe"),
        ("adequate", "inadequate"), ("enhance", "impair"), ("predict", "rule out"),
        ("Is", "Isn't"), ("Does", "Doesn't"), ("Do", "Don't"), ("Can", "Can't"),
        ("Are", "Aren't"), ("Should", "Shouldn't"),
    ],
    "population": [
        ("children", "adults"), ("adults", "children"), ("women", "men"), ("men", "women"),
        ("elderly", "young"), ("infants", "adolescents"), ("patients", "children"),
        ("pregnant", "postmenopausal"), ("obese", "lean"),
    ],
    "timing": [
        ("immediate", "delayed"), ("delayed", "immediate"), ("early", "late"),
        ("late", "early"), ("adjuvant", "neoadjuvant"), ("neoadjuvant", "adjuvant"),
        ("preoperative", "postoperative"), ("postoperative", "preoperative"),
        ("before", "after"), ("after", "before"), ("acute", "chronic"), ("chronic", "acute"),
        ("short-term", "long-term"), ("long-term", "short-term"), ("first", "second"),
    ],
    "intervention": [
        ("surgery", "radiotherapy"), ("radiotherapy", "chemotherapy"),
        ("chemotherapy", "radiotherapy"), ("aspirin", "warfarin"),
        ("laparoscopic", "robotic"), ("antibiotics", "steroids"), ("steroids", "antibiotics"),
        ("exercise", "diet"), ("screening", "vaccination"), ("ultrasound", "MRI"),
        ("MRI", "CT"), ("CT", "MRI"), ("insulin", "metformin"), ("resection", "biopsy"),
        ("stenting", "bypass"), ("corticosteroids", "antibiotics"), ("statins", "aspirin"),
        ("acupuncture", "massage"), ("transplantation", "dialysis"),
    ],
    "outcome": [
        ("mortality", "morbidity"), ("morbidity", "mortality"), ("survival", "recurrence"),
        ("recurrence", "survival"), ("pain", "function"), ("complications", "readmissions"),
        ("outcomes", "costs"), ("costs", "outcomes"), ("incidence", "severity"),
        ("severity", "incidence"), ("diagnosis", "prognosis"), ("prognosis", "diagnosis"),
        ("infection", "bleeding"), ("bleeding", "infection"), ("accuracy", "cost"),
        ("risk", "severity"), ("quality of life", "survival"),
    ],
    "site": [
        ("breast", "prostate"), ("prostate", "breast"), ("colon", "rectum"),
        ("colorectal", "gastric"), ("gastric", "colorectal"), ("lung", "liver"),
        ("liver", "lung"), ("knee", "hip"), ("hip", "knee"), ("upper", "lower"),
        ("left", "right"), ("right", "left"), ("thyroid", "adrenal"), ("kidney", "bladder"),
        ("renal", "hepatic"), ("cervical", "lumbar"), ("lumbar", "cervical"),
        ("pancreatic", "gastric"), ("esophageal", "gastric"), ("ovarian", "endometrial"),
        ("endometrial", "ovarian"), ("cardiac", "renal"), ("brain", "spinal"),
    ],
    "actor": [
        ("laypersons", "paramedics"), ("paramedics", "laypersons"), ("physicians", "nurses"),
        ("nurses", "physicians"), ("doctors", "pharmacists"), ("surgeons", "residents"),
        ("residents", "surgeons"), ("general practitioners", "specialists"),
        ("parents", "teachers"), ("mothers", "fathers"), ("students", "teachers"),
        ("caregivers", "patients"), ("radiologists", "surgeons"), ("midwives", "obstetricians"),
        ("dentists", "hygienists"), ("emergency physicians", "primary care physicians"),
    ],
    "comparison": [
        ("versus", "or"), ("than", "as well as"), ("compared with", "added to"),
        ("compared to", "added to"), ("or", "and"), ("vs", "plus"),
    ],
}  # fmt: skip

# kind -> phrases added before the closing question mark.
APPENDS: dict[str, list[str]] = {
    "population": [
        " in children", " in men", " in elderly patients", " in older women",
        " in women over 70", " in pregnant women", " in smokers", " in infants",
    ],
    "timing": [" at long-term follow-up", " in the first week", " after 5 years"],
    "actor": [" when performed by residents", " by general practitioners", " by nurses"],
    "comparison": [" compared with placebo", " compared with surgery", " over standard care"],
    "site": [" of the lower limb", " in the upper lobe"],
    "intervention": [" with aspirin", " after radiotherapy"],
    "outcome": [" in terms of mortality", " for quality of life"],
}  # fmt: skip

# Rewordings. Spelling: American -> British of medical words (and the reverse).
SPELLING = [
    ("ischemic", "ischaemic"), ("ischemia", "ischaemia"), ("anemia", "anaemia"),
    ("hemorrhage", "haemorrhage"), ("hematoma", "haematoma"), ("hemoglobin", "haemoglobin"),
    ("edema", "oedema"), ("esophageal", "oesophageal"), ("esophagus", "oesophagus"),
    ("estrogen", "oestrogen"), ("pediatric", "paediatric"), ("orthopedic", "orthopaedic"),
    ("gynecologic", "gynaecologic"), ("apnea", "apnoea"), ("diarrhea", "diarrhoea"),
    ("leukemia", "leukaemia"), ("fetal", "foetal"), ("tumor", "tumour"), ("tumors", "tumours"),
    ("randomized", "randomised"), ("anesthesia", "anaesthesia"), ("celiac", "coeliac"),
    ("etiology", "aetiology"), ("hospitalization", "hospitalisation"),
    ("behavior", "behaviour"), ("center", "centre"), ("fiber", "fibre"),
    ("sulfate", "sulphate"), ("familiarization", "familiarisation"),
    ("standardizing", "standardising"), ("optimal", "optimal"), ("utilization", "utilisation"),
    ("characterized", "characterised"), ("colonoscopy", "colonoscopy"),
    ("hematologic", "haematologic"), ("anesthetic", "anaesthetic"),
    ("minimize", "minimise"), ("organization", "organisation"), ("favorable", "favourable"),
    ("program", "programme"), ("aging", "ageing"), ("gray", "grey"), ("labor", "labour"),
]  # fmt: skip
SYNONYM = [
    ("kidney", "renal"), ("renal", "kidney"), ("heart", "cardiac"), ("cardiac", "heart"),
    ("liver", "hepatic"), ("hepatic", "liver"), ("lung", "pulmonary"), ("pulmonary", "lung"),
    ("brain", "cerebral"), ("gastric", "stomach"), ("mortality", "death"),
    ("treatment", "therapy"), ("therapy", "treatment"), ("physicians", "doctors"),
    ("hypertension", "high blood pressure"), ("myocardial infarction", "heart attack"),
    ("influence", "affect"), ("affect", "influence"), ("associated", "linked"),
    ("necessary", "required"), ("surgery", "operation"), ("children", "kids"),
    ("infants", "babies"), ("adolescents", "teenagers"), ("reduce", "decrease"),
    ("increase", "raise"), ("useful", "helpful"), ("fever", "pyrexia"),
]  # fmt: skip
# Plain rewordings whose words the vetted table does not pair (a word whose meaning depends on
# the sentence): what the word-pair judge and a person settle (medlit.cache.word_pairs).
PLAIN = [
    ("elderly", "older"), ("older", "elderly"), ("greater", "higher"), ("higher", "greater"),
    ("increased", "higher"), ("decreased", "lower"), ("reduce", "lower"), ("reduces", "lowers"),
    ("shorten", "reduce"), ("outcome", "result"), ("outcomes", "results"), ("worse", "poorer"),
    ("poor", "bad"), ("prolonged", "extended"), ("prolong", "extend"), ("worsen", "aggravate"),
    ("detect", "identify"), ("identify", "detect"), ("need", "require"), ("help", "aid"),
    ("adequate", "sufficient"), ("appropriate", "suitable"), ("predict", "forecast"),
    ("lead to", "result in"),
]  # fmt: skip
FRAMING = [
    ("Does", "Can"), ("Do", "Can"), ("Can", "Could"), ("Is", "Is it known whether"),
    ("Are", "Is it known whether"), ("Should", "Must"),
]  # fmt: skip

# The issue's own examples: (cached, asked, group, kind).
ISSUE_EXAMPLES = [
    (q := "Does immediate breast reconstruction compromise the delivery of adjuvant chemotherapy?",
     q.replace("compromise", "improve"), "edit", "direction"),
    (q, q.replace("immediate", "delayed"), "edit", "timing"),
    (q, q.replace("adjuvant", "neoadjuvant"), "edit", "timing"),
    (q, q.replace("compromise", "speed up"), "edit", "direction"),
    (q, q.replace("?", " in men?"), "edit", "population"),
    (q, q.replace("?", " in elderly patients?"), "edit", "population"),
    (q, q.replace("?", " in older women?"), "edit", "population"),
    (q, q.replace("?", " in women over 70?"), "edit", "population"),
    (q, "Does immediate breast reconstruction compromise the delivery of adjuvant "
     "chemotherapy in older women?", "edit", "population"),  # the follow-up's rewrite
    (q, q.replace("Does", "Can"), "reword", "framing"),
    (q, "Can immediate breast reconstructions compromise delivery of adjuvant chemotherapy?",
     "reword", "inflection"),
    (n := "Do nomograms designed to predict biochemical recurrence do a better job of "
     "predicting more clinically relevant prostate cancer outcomes than biochemical recurrence?",
     n.replace("better", "worse"), "edit", "direction"),
    (m := "Does a simple manual enable laypersons to operate an automated external "
     "defibrillator?",
     "Does a simple manual prevent laypersons from operating an automated external "
     "defibrillator?", "edit", "direction"),
    (m, m.replace("laypersons", "paramedics"), "edit", "actor"),
    ("Is ischemic stroke more common in women?", "Is ischaemic stroke more common in women?",
     "reword", "spelling"),
    ("Does a familiarization session improve walking tests?",
     "Does a familiarisation session improve walking tests?", "reword", "spelling"),
    ("Is sleep apnea a risk factor for atrial fibrillation?",
     "Is sleep apnoea a risk factor for atrial fibrillation?", "reword", "spelling"),
]  # fmt: skip


def _sources(data: Path) -> list[tuple[str, str]]:
    """(source id, question): PubMedQA titles (by PMID), then MQP first questions."""
    records = json.loads((data / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    out = [(f"pqal:{pmid}", r["QUESTION"].strip()) for pmid, r in sorted(records.items())]
    seen: set[str] = set()
    with (data / "mqp" / "mqp_dev.csv").open(newline="", encoding="utf-8") as fh:
        for i, row in enumerate(csv.reader(fh)):
            q = row[1].strip()
            if q not in seen and len(q) < 200 and q.endswith("?"):
                seen.add(q)
                out.append((f"mqp:{i + 1}", q))
    return out


def _swap(question: str, find: str, replace: str) -> str | None:
    pattern = re.compile(rf"(?<![\w-]){re.escape(find)}(?![\w-])", re.I if find.islower() else 0)
    if find[0].isupper():  # an auxiliary: only where the question starts with it
        pattern = re.compile(rf"^{re.escape(find)}\b")
    match = pattern.search(question)
    if match is None:
        return None
    return question[: match.start()] + replace + question[match.end() :]


def _append(question: str, phrase: str) -> str | None:
    if not question.endswith("?") or phrase.strip().split()[-1].lower() in question.lower():
        return None
    return question[:-1].rstrip() + phrase + "?"


def _move_phrase(question: str) -> str | None:
    """Word order: a closing 'in ...' phrase to the front ("In X, does ...?")."""
    match = re.match(r"^(Is|Are|Does|Do|Can|Should) (.+?) (in [^,?]{4,40})\?$", question)
    if match is None:
        return None
    aux, body, phrase = match.groups()
    return f"{phrase[0].upper()}{phrase[1:]}, {aux.lower()} {body}?"


def _inflect(question: str) -> str | None:
    """Inflection: the first plural noun made singular, or the auxiliary's tense changed."""
    for find, replace in (("Does", "Did"), ("Is", "Was"), ("Are", "Were"), ("Do", "Did")):
        if question.startswith(find + " "):
            return replace + question[len(find) :]
    match = re.search(r"\b([a-z]{3,}[^suie'])s\b", question)  # not diabetes, annulus
    return None if match is None else question[: match.end() - 1] + question[match.end() :]


def _with_phrase(question: str) -> str | None:
    """Phrase form: "in X patients" (a noun as modifier) as "in patients with X"."""
    match = re.search(
        r"\b(in|among|of|for) ((?:[a-z]+ )?[a-z]+) (patients|adults|children|women)\b(?!')",
        question,
    )
    if match is None or not _nouns(match.group(2).split()[-1]):
        return None
    prep, modifier, head = match.groups()
    return question[: match.start()] + f"{prep} {head} with {modifier}" + question[match.end() :]


def _nouns(word: str) -> bool:
    import lemminflect

    found = lemminflect.getAllLemmas(word)
    return "NOUN" in found and "ADJ" not in found


def _among(question: str) -> str | None:
    """Phrase form: a population "in" as "among"."""
    pattern = r"\bin ((?:[a-z]+ )?(?:patients|adults|children|women|men|infants|elderly|people))\b"
    match = re.search(pattern, question)
    return (
        None
        if match is None
        else question[: match.start()] + "among " + question[match.start() + 3 :]
    )


def _verb_form(question: str) -> str | None:
    """Phrase form: "the treatment of X" as "treating X" (a noun made from a verb)."""
    import lemminflect

    from medlit.words.phrase_forms import verb_of

    # Only right after a preposition: "morphologic evaluation of" is no "evaluating".
    noun = (
        r"\b(for|in|on|after|before|during|by|to|with) (?:the )?"
        r"([a-z]+(?:tion|ment|sis|ance|ence)) of\b"
    )
    for match in re.finditer(noun, question):
        verb = verb_of(match.group(2))
        forms = lemminflect.getInflection(verb, "VBG") if verb else ()
        if forms:
            return (
                question[: match.start()] + f"{match.group(1)} {forms[0]}" + question[match.end() :]
            )
    return None


def _wording_rules() -> Iterator[tuple[str, str, Callable[[str], str | None]]]:
    """The rewordings added for phrase forms and word pairs (after the first rules, so the
    rows the first rules make, and the held-out titles, stay as they were)."""
    for a, b in PLAIN:
        yield "reword", "plain", lambda q, f=a, r=b: _swap(q, f, r)
    yield "reword", "form", _with_phrase
    yield "reword", "form", _among
    yield "reword", "form", _verb_form


def _rules() -> Iterator[tuple[str, str, Callable[[str], str | None]]]:
    """(group, kind, edit) for every rule, in a fixed order."""
    for kind, swaps in SWAPS.items():
        for find, replace in swaps:
            yield "edit", kind, lambda q, f=find, r=replace: _swap(q, f, r)
    for kind, phrases in APPENDS.items():
        for phrase in phrases:
            yield "edit", kind, lambda q, p=phrase: _append(q, p)
    for a, b in SPELLING:
        if a != b:
            yield "reword", "spelling", lambda q, f=a, r=b: _swap(q, f, r)
            yield "reword", "spelling", lambda q, f=b, r=a: _swap(q, f, r)
    for a, b in SYNONYM:
        yield "reword", "synonym", lambda q, f=a, r=b: _swap(q, f, r)
    for a, b in FRAMING:
        yield "reword", "framing", lambda q, f=a, r=b: _swap(q, f, r)
    yield "reword", "order", _move_phrase
    yield "reword", "inflection", _inflect


def _made(
    sources: list[tuple[str, str]],
    *,
    issue: bool,
    rules: Iterable[tuple[str, str, Callable[[str], str | None]]] | None = None,
) -> list[dict[str, str]]:
    """The rows the rules make of ``sources`` (and of the issue's examples, with ``issue``)."""
    rows = [
        {"group": g, "kind": k, "source": "issue", "cached": c, "asked": a}
        for c, a, g, k in (ISSUE_EXAMPLES if issue else [])
    ]
    used: Counter[str] = Counter()  # a question gives at most two edits and one rewording
    limits = {"order": 15, "inflection": 15, "form": 15}
    for group, kind, edit in _rules() if rules is None else rules:
        made = 0
        for source, question in sources:
            if made >= limits.get(kind, PER_RULE) or used[source + group] >= (
                2 if group == "edit" else 1
            ):
                continue
            asked = edit(question)
            if asked is None or asked == question:
                continue
            rows.append(
                {"group": group, "kind": kind, "source": source, "cached": question, "asked": asked}
            )
            used[source + group] += 1
            made += 1
    return rows


def _in_check_half(source: str) -> bool:
    return source.startswith("pqal:") and half_of(source.removeprefix("pqal:")) == "check"


def build(data: Path) -> list[dict[str, str]]:
    """The contrast set's rows, each with its ``part`` (see the module doc)."""
    sources = _sources(data)
    first = _made(sources, issue=True)  # the set the guard was written against
    seen = {r["source"] for r in first if _in_check_half(r["source"])}
    rows = [{"part": "check-seen" if r["source"] in seen else "tune", **r} for r in first]
    tuning = [(s, q) for s, q in sources if not _in_check_half(s)]
    rows += [{"part": "tune", **r} for r in _made(tuning, issue=False, rules=_wording_rules())]
    unused = [(s, q) for s, q in sources if _in_check_half(s) and s not in seen]
    # The added rewordings in a pass of their own: a title may give one of each.
    held_out = _made(unused, issue=False) + _made(unused, issue=False, rules=_wording_rules())
    return rows + [{"part": "check", **r} for r in held_out]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the shared data folder (../shared/data)")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "data" / "cache_contrast.csv"
    )
    args = parser.parse_args(argv)
    if not (args.data / "pubmedqa" / "pqal_dev.json").exists():
        print(f"no pubmedqa/pqal_dev.json under {args.data}", file=sys.stderr)
        return 2
    rows = build(args.data)
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        fields = ["part", "group", "kind", "source", "cached", "asked"]
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    counts = Counter((r["part"], r["group"], r["kind"]) for r in rows)
    for part in PARTS:
        for (at, group, kind), n in sorted(counts.items()):
            if at == part:
                print(f"{part:>10} {group:>6} {kind:<13} {n:>4}")
    figures = [
        f"{part}_{group}s={sum(n for (p, g, _), n in counts.items() if (p, g) == (part, group))}"
        for part in PARTS
        for group in ("edit", "reword")
    ]
    print(" ".join([*figures, f"out={args.out}"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
