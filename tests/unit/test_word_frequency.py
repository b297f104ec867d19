"""The package's copy of wordfreq's English table (medlit.words.frequency)."""

from __future__ import annotations

import gzip
import random
import re
import subprocess
import sys
from importlib.resources import files

import pytest

from medlit.words import frequency
from medlit.words.word_rarity import is_technical

_SAMPLE_TEXT = (
    "Does vancomycin-resistant enterococcal bacteremia raise 30-day mortality after 2009? "
    "The warm-up, endothelin-1 and IL-6 levels rose at 24-h in cycloplegic eyes; sepsis, "
    "plasma, evidence and however are common words, and qwzxv is no word at all."
)


def test_table_loads_sorted_with_its_header() -> None:
    raw = files("medlit.words").joinpath("data", "word_frequencies.tsv.gz").read_bytes()
    header = [
        line for line in gzip.decompress(raw).decode("ascii").splitlines()[:5] if line[:1] == "#"
    ]
    assert "wordfreq" in header[0] and "make_word_frequencies.py" in "".join(header)
    rows = frequency._table().decode("ascii").splitlines()
    assert len(rows) > 280_000
    words = [row.split("\t")[0] for row in rows]
    assert words == sorted(words)  # binary search needs byte order (ASCII: str order)
    assert all(re.fullmatch(r"[a-z]+|[0-9]+", w) for w in words[:: len(words) // 500])


def test_bucket_finds_first_last_and_absent_words() -> None:
    rows = frequency._table().decode("ascii").splitlines()
    for row in (rows[0], rows[1], rows[len(rows) // 2], rows[-2], rows[-1]):
        word, bucket = row.split("\t")
        assert frequency.bucket(word) == int(bucket)
    assert frequency.bucket("qwzxv") is None
    assert frequency.bucket("") is None
    assert frequency.bucket("zzzzzzzzzzzzzz") is None


def test_known_figures() -> None:
    assert frequency.zipf("vancomycin") == 2.28
    assert frequency.zipf("qwzxv") == 0.0
    assert frequency.zipf("Vancomycin") == frequency.zipf("vancomycin")
    assert is_technical("vancomycin") and not is_technical("evidence")


def test_same_figures_as_wordfreq() -> None:
    wordfreq = pytest.importorskip("wordfreq")
    words = set(re.findall(r"[^\W_]+(?:-[^\W_]+)*", _SAMPLE_TEXT))
    table = wordfreq.get_frequency_dict("en")
    picked = random.Random(7).sample(sorted(table), 3000)
    words |= set(picked) | {w.upper() for w in picked[:200]} | {w.title() for w in picked[:200]}
    words |= {str(n) for n in (*range(0, 120), 1850, 1999, 2009, 2019, 2030, 2045, 123456)}
    words |= {"00", "007", "24-h", "covid-19", "anti-TNF", "non-small-cell", "x-ray", "1.5"}
    words |= {"don't", "b12", "h1n1", "Sjögren", "naïve", "12,000", ""}
    for word in sorted(words):
        assert frequency.zipf(word) == wordfreq.zipf_frequency(word, "en"), word


def test_words_of_letters_and_digits_do_not_load_wordfreq() -> None:
    code = (
        "import sys; from medlit.words.frequency import zipf; "
        "[zipf(w) for w in ('vancomycin', 'Warm-Up', '24-h', 'endothelin-1', '2009', 'qwzxv')]; "
        "print('wordfreq' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
