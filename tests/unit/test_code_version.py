"""The answering code's hash: part of the answer cache's fingerprint."""

from __future__ import annotations

from pathlib import Path

from medlit.code_version import answering_code, cached_code_hash, code_hash
from medlit.config import Settings


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_change_to_the_answering_code_changes_the_hash_and_a_front_end_does_not(
    tmp_path: Path,
) -> None:
    root = _package(
        tmp_path / "medlit",
        {"agent/citations.py": "CHECK = 1\n", "cli/ask.py": "SHOW = 1\n", "assets.txt": "x"},
    )
    before = code_hash(root)
    assert code_hash(root) == before  # stable
    (root / "cli/ask.py").write_text("SHOW = 2\n")  # how an answer is shown
    (root / "assets.txt").write_text("y")  # not code
    assert code_hash(root) == before
    (root / "agent/citations.py").write_text("CHECK = 2\n")  # how an answer is checked
    assert code_hash(root) != before
    (root / "agent/citations.py").write_text("CHECK = 1\n")
    (root / "agent/new_check.py").write_text("")
    assert code_hash(root) != before  # a module added is a change too


def test_a_change_to_a_word_table_changes_the_hash(tmp_path: Path) -> None:
    root = _package(
        tmp_path / "medlit",
        {"words/tables.py": "", "words/data/synonyms.tsv": "kidney\trenal\n"},
    )
    before = code_hash(root)
    (root / "words/data/synonyms.tsv").write_text("kidney\trenal\nlung\tpulmonary\n")
    assert code_hash(root) != before  # a synonym added changes what the guard serves


def test_the_answer_fingerprint_carries_the_installed_answering_code(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import medlit.config

    settings = Settings()
    now = settings.answer_fingerprint(["pubmed"], "model")
    assert answering_code() == code_hash(Path(medlit.config.__file__).parent)
    monkeypatch.setattr("medlit.config.answering_code", lambda: "another version")
    assert settings.answer_fingerprint(["pubmed"], "model") != now


def test_the_hash_kept_in_the_cache_follows_the_files(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = _package(tmp_path / "medlit", {"agent/citations.py": "CHECK = 1\n"})
    before = cached_code_hash(root)
    assert before == code_hash(root)
    assert list((tmp_path / "cache" / "medlit").glob("code-hash-*.json"))  # kept
    assert cached_code_hash(root) == before  # read back
    (root / "agent/citations.py").write_text("CHECK = 22\n")  # another size and time
    assert cached_code_hash(root) == code_hash(root) != before
    (root / "agent/new_check.py").write_text("")
    assert cached_code_hash(root) == code_hash(root)
    for kept in (tmp_path / "cache" / "medlit").glob("code-hash-*.json"):
        kept.write_text("not json")  # a damaged cache is computed again
    assert cached_code_hash(root) == code_hash(root)
