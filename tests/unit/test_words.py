"""The word tools and tables (medlit.words): one place, read once, each set what its readers
read."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.resources import files

import pytest

from medlit import words
from medlit.words import forms, sorted_lines, tables
from medlit.words.forms import is_verb, lemmas, spelling
from medlit.words.tokens import ASCII_WORDS, HYPHENATED_WORDS, UNICODE_WORDS, WORDS


def test_the_stop_sets_build_on_each_other() -> None:
    initials, query = words.stop_words("initials"), words.stop_words("query")
    topic, search = words.stop_words("topic"), words.stop_words("search")
    assert initials < query < topic < search
    assert topic - {"people"} < words.stop_words("stance")
    assert "people" not in words.stop_words("stance")
    lay = words.stop_words("lay_question")
    assert query - {"among"} < lay and "among" not in lay
    assert {"doctor", "wondering", "thanks"} <= lay
    assert initials < words.stop_words("group_label")
    assert {"undergoing", "evidence", "literature"} <= search


def test_negations_are_never_stop_words_where_the_guard_reads_them() -> None:
    # The guard's negation reader sees a negator before the stop list: "not" stays a cue.
    assert words.cue("negation.token").match("not")
    assert words.cue("negation.token").match("don't")
    assert not words.cue("negation.token").match("note")


def test_unknown_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"sets: .*'query'"):
        words.stop_words("queries")
    with pytest.raises(KeyError, match=r"no cue 'negation\.nope'"):
        words.cue("negation.nope")
    with pytest.raises(KeyError, match="no pair read by"):
        words.opposite_pairs("nobody")


def test_every_cue_compiles_and_the_sets_differ_where_their_readers_do() -> None:
    for group in ("negation", "hedge", "direction", "intent", "modality", "aim", "aspect"):
        for name, entry in tables._cues()[group].items():
            if "pattern" in entry:
                assert words.cue(f"{group}.{name}").pattern
    # The clause reader's negations are single words; the claim reader's also one-word
    # negations ("unnecessary"); the finding reader's also weak words ("little", "poor").
    assert not words.cue("negation.clause").search("is probably unnecessary")
    assert words.cue("negation.claim").search("is probably unnecessary")
    assert words.cue("negation.finding").search("of limited clinical value")
    assert words.cue("negation.benign").search("with or without surgery")
    assert words.cue("hedge.conclusion").search("the benefit remains unclear")
    assert words.cue("direction.up").search("does coffee raise the risk of stroke")
    assert words.cue("direction.down").search("does aspirin lower blood pressure")
    assert "increas" in words.cue_source("direction.rising")


@pytest.mark.parametrize(
    ("question", "negated"),
    [
        ("i have no fever", {"fever"}),
        ("she is not pregnant", {"pregnant"}),
        ("i don't have any fever", {"fever"}),
        ("i am not sure if it is fever", set()),  # a hedge negates nothing
        ("no , but fever", set()),  # "but" ends the scope
        ("not the very much fever", set()),  # out of reach: three tokens on
    ],
)
def test_a_negation_covers_the_first_content_word_after_it(
    question: str, negated: set[str]
) -> None:
    stop = words.stop_words("lay_question")
    tokens = HYPHENATED_WORDS.findall(question)
    found = {
        token
        for token, in_scope in words.negation_scopes(tokens, lambda t: t not in stop and len(t) > 2)
        if in_scope
    }
    assert found == negated


def test_the_cue_reader_reads_directions_and_age_groups() -> None:
    assert words.directions("does coffee raise the risk of stroke") == {"up"}
    assert words.directions("does aspirin lower and not increase it") == {"up", "down"}
    assert words.directions("is aspirin safe") == frozenset()
    assert words.age_groups("my 7 years old son") == {"child"}
    assert words.age_groups("a 3-month-old baby") == {"infant"}
    assert words.age_groups("in adults and older people") == {"adult", "elderly"}
    assert words.age_groups("2 weeks ago") == {"infant"}  # by age: the guard's "young" is by word


def test_the_cue_reader_reads_the_changes_a_sentence_states_in_order() -> None:
    text = "Aspirin did not significantly reduce stroke but increased bleeding and lowered INR."
    assert [(d, text[a:b]) for d, a, b in words.stated_directions(text)] == [
        ("up", "increased"),
        ("down", "lowered"),
    ]  # "did not significantly reduce" states no change
    assert words.stated_directions("Survival was similar in both groups.") == []


def test_the_stems_and_forms() -> None:
    assert words.word_stem("haemorrhage") == words.word_stem("hemorrhage") == "hemorr"
    assert words.word_stem("tumour") == "tumor"
    assert words.prefix_stem("randomised") == words.prefix_stem("randomized") == "random"
    assert words.plural_lemma("rashes") == "rash"
    assert words.plural_lemma("glasses") == "glass"
    assert words.plural_lemma("babies") == "baby"
    assert words.plural_lemma("virus") == "virus"
    assert words.spelling("oedema") == words.spelling("edema")
    assert words.spelling("four") == "4"
    assert "woman" in words.lemmas("women")
    assert words.is_verb("improves") and not words.is_verb("kidney")


def test_the_tokenisers_split_as_documented() -> None:
    assert WORDS.findall("follow-up 2.5 mg") == ["follow", "up", "2.5", "mg"]
    assert HYPHENATED_WORDS.findall("don't follow-up") == ["don't", "follow-up"]
    assert ASCII_WORDS.findall("sjogren's covid19") == ["sjogren", "s", "covid19"]
    assert UNICODE_WORDS.findall("Sjögren syndrome") == ["Sjögren", "syndrome"]


def test_the_tables_are_read_once() -> None:
    words.load()
    assert words.stop_words("query") is words.stop_words("query")
    assert words.cue("negation.finding") is words.cue("negation.finding")
    assert words.synonym_groups("synonyms.tsv") is words.synonym_groups("synonyms.tsv")
    assert ("acetaminophen", "tylenol", "paracetamol", "apap") in words.synonym_groups(
        "drug_names.tsv"
    )
    assert ("high", "low") in words.opposite_pairs("question")
    assert ("high", "low") in words.opposite_pairs("numbers")
    assert ("benign", "malignant") not in words.opposite_pairs("numbers")


def test_every_data_file_is_read_by_a_loader() -> None:
    names = {p.name for p in files("medlit.words").joinpath("data").iterdir()}
    read = {
        "stop_words.txt",
        "cues.toml",
        "opposites.tsv",
        "drugs.txt",
        "findings.txt",
        "function_words.txt",
        "synonyms.tsv",
        "drug_names.tsv",
        "term_synonyms.tsv",
        "prefixes.txt",
        "named_alike.toml",
        "word_frequencies.tsv.gz",  # medlit.words.frequency (tests/unit/test_word_frequency.py)
        "aspect_stems.txt",
        "auxiliary_verbs.txt",
        "known_abbreviations.txt",
        "latin_endings.tsv",
        "name_heads.txt",
        "spaced_heads.txt",
        "count_words.tsv",
        "phrase_forms.toml",  # medlit.words.phrase_forms (tests/unit/test_phrase_forms.py)
        "seed_synonyms.tsv.gz",  # medlit.words.seed (tests/unit/test_phrase_forms.py)
        "lemmas.tsv.gz",  # medlit.words.forms (below)
        "mesh_terms.tsv.gz",  # medlit.words.mesh (tests/unit/test_mesh.py)
        "mesh_names.tsv.gz",  # medlit.words.mesh (other_names)
    }
    # NOTICE: the attributions of the tables built from others' data (no table itself)
    assert names - {"__pycache__", "NOTICE"} == read
    own_loader = {"stop_words.txt", "cues.toml", "opposites.tsv", "named_alike.toml"}
    for name in read - own_loader - {n for n in read if n.endswith(".gz")}:
        assert tables.data_lines(name), name
    stones = next(t for t in words.named_alike() if t[0].search("Urolithiasis"))
    assert "kidney" in stones[1] and "lithiasis" in stones[2]


def test_a_named_thing_holds_one_of_its_letters() -> None:
    # The letters let the pattern be skipped over a text holding none of them: every name a
    # pattern matches in these sentences holds one.
    sentences = (
        "Kidney stones and urinary calculi; urolithiasis, nephrolithiasis and stone formers. "
        "Heart attacks, a myocardial infarction. Overweight, obese, obesity, body mass index, "
        "BMI. X-rays, an xray, radiographs, radiography, radiographic. Adrenalectomy, "
        "resection, excised, removal. Second-hand smoke, secondhand smoking, passive smokers, "
        "environmental tobacco smoke."
    )
    for names, _, letters in words.named_alike():
        found = [m.group(0).lower() for m in names.finditer(sentences)]
        assert found, names.pattern
        assert all(any(part in name for part in letters) for name in found), found


def test_a_guarded_cue_matches_where_the_plain_pattern_does() -> None:
    """The guard on a cue's first letters (``tables.guarded``) changes no match: every cue
    finds the same spans and groups as its pattern compiled plainly, in odd cases too."""
    texts = [
        "No significant difference was found; mortality did not increase in older adults.",
        "NOT INFERIOR TO PLACEBO. Infants aged 7 months and children 3 years old improved.",
        "\u017fafe \u212aids \u0130nfants \u0131nfant: rather than surgery, it was not shown.",
    ]
    guarded = 0
    for group, entries in tables._cues().items():
        for name, entry in entries.items():
            if not (isinstance(entry, dict) and "pattern" in entry):
                continue
            cue = tables.cue(f"{group}.{name}")
            flags = re.IGNORECASE if entry.get("ignore_case") else 0
            plain = re.compile(tables.cue_source(f"{group}.{name}"), flags)
            guarded += cue.pattern != plain.pattern
            for text in texts:
                assert [(m.span(), m.groups()) for m in cue.finditer(text)] == [
                    (m.span(), m.groups()) for m in plain.finditer(text)
                ], f"{group}.{name}"
    assert guarded > 0


def test_a_pattern_no_guard_can_hold_is_compiled_plainly() -> None:
    for source in (r"(?i)\bnot\b", r"\w+ed", r"(?:no)?\s*change", "plain literal"):
        assert tables.guarded(source, 0).pattern == source
    assert tables.guarded(r"\b(?:no|not)\b", 0).pattern == r"(?=[n])(?:\b(?:no|not)\b)"


def test_the_checks_guarded_patterns_match_where_their_plain_patterns_do() -> None:
    """The checks' own hot patterns behind the same guard (:func:`tables.guarded`) find what
    they find compiled plainly, the odd letters a case-blind pattern reads included."""
    from medlit.checks import (
        cited_designs,
        cited_numbers,
        cited_years,
        comparisons,
        correlation_strength,
        swapped_groups,
    )
    from medlit.words import qualified_names, stance

    texts = [
        "Rates were higher (p < 0.05; r = 0.45, \u03c1 = .3) in a 2010 study; NOT reduced, "
        "rather than similar, of comparable age. Vitamin D 2 and HLA B27 trials. RCTs",
        "\u017fimilar \u0130ncreased \u212aappa .8 decreased; P-value 0.01 the verdict is: yes",
    ]
    patterns = [
        stance._POSITIVE, stance._UP, stance._DOWN, stance._RATHER_THAN,
        cited_designs._PLURAL, comparisons._SAME, comparisons._DIFFER,
        swapped_groups._UP_WORDS, swapped_groups._DOWN_WORDS, qualified_names._SPACED_NAME,
        cited_numbers._P_THRESHOLD, cited_years._DATED, correlation_strength._COEFFICIENT,
        correlation_strength._P_VALUE,
    ]  # fmt: skip
    for pattern in patterns:
        guard = re.match(r"\(\?=\[[^\]]+\]\)\(\?:", pattern.pattern)
        assert guard, pattern.pattern  # guarded
        plain = re.compile(pattern.pattern[guard.end() : -1], pattern.flags)
        for text in texts:
            assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == [
                (m.span(), m.groups()) for m in plain.finditer(text)
            ], pattern.pattern


@pytest.fixture(scope="module")
def lemma_rows() -> list[str]:
    return forms.lemma_rows()  # about a second: lemminflect's whole dictionary


def test_the_lemma_table_is_the_installed_lemminflects(lemma_rows: list[str]) -> None:
    # A new lemminflect (or a changed reading of it) fails here until
    # `python benchmarks/make_lemma_table.py` is run again.
    shipped = sorted_lines.load(forms.LEMMA_TABLE).decode().splitlines()
    assert shipped == lemma_rows


def _lemminflect_lemmas(word: str) -> tuple[frozenset[str], bool]:
    """lemmas() and is_verb() as they read lemminflect before the table."""
    import lemminflect

    if not word.isalpha():
        return frozenset((word,)), False
    found = lemminflect.getAllLemmas(word)
    got = {lemma for tag in ("NOUN", "VERB", "AUX", "PROPN") for lemma in found.get(tag, ())}
    if not found:
        for tag in ("NOUN", "VERB"):
            got.update(lemminflect.getAllLemmasOOV(word, tag).get(tag, ()))
    return frozenset({word, *(spelling(lemma) for lemma in got)}), bool(found.get("VERB"))


def test_lemmas_from_the_table_are_lemminflects(lemma_rows: list[str]) -> None:
    table = [row.split("\t")[0] for row in lemma_rows[::97]]
    unknown = ["statins", "metformin", "xyzzies", "anticoagulated", "covid", "ssris", "mg"]
    for word in [*table, *unknown, "women", "improves", "left", "Women", "x-ray", "4"]:
        assert (lemmas(word), is_verb(word)) == _lemminflect_lemmas(word), word


def test_a_known_words_lemmas_load_no_dictionary() -> None:
    # A word lemminflect's dictionary knows is read from the table: lemminflect is not
    # imported (its dictionary takes 0.3-0.5 s to load); "statins" it does not know.
    probe = (
        "import sys; from medlit.words import lemmas, is_verb;"
        "known = sorted(lemmas('children') | lemmas('women')), is_verb('improves');"
        "before = 'lemminflect' in sys.modules; lemmas('statins');"
        "print(known, before, 'lemminflect' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "(['child', 'children', 'woman', 'women'], True) False True"
