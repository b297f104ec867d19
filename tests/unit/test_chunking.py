"""Section-aware chunking of abstracts."""

from __future__ import annotations

from medlit.cache.chunking import article_content_hash, chunk_article, split_sentences
from medlit.types import AbstractSection, Article

LONG_METHODS = " ".join(
    f"In step {i}, patients aged 65 yrs. or older received 2.5 mg/kg of the drug, e.g. orally."
    for i in range(30)
)
LONG_CONCLUSION = " ".join(f"Finding {i} held in every subgroup analysed." for i in range(40))


def structured() -> Article:
    return Article(
        pmid="42",
        title="  Aspirin   and stroke:  a trial ",
        keywords=["aspirin", "stroke"],
        abstract=[
            AbstractSection(label="BACKGROUND", category="BACKGROUND", text="Short background."),
            AbstractSection(label="METHODS", category="METHODS", text=LONG_METHODS),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=LONG_CONCLUSION),
        ],
    )


def test_title_chunk_first_with_keywords() -> None:
    chunks = chunk_article(structured())
    assert chunks[0].id == "pmid:42#0" and chunks[0].section == "TITLE"
    assert chunks[0].text == "Aspirin and stroke: a trial Keywords: aspirin, stroke."


def test_ids_ordinals_and_sections() -> None:
    chunks = chunk_article(structured())
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert all(c.id == f"pmid:42#{c.ordinal}" and c.article_key == "pmid:42" for c in chunks)
    assert chunks[1].text == "Short background." and chunks[1].section == "BACKGROUND"


def test_long_section_split_at_sentences_within_bounds() -> None:
    methods = [c for c in chunk_article(structured()) if c.section == "METHODS"]
    assert len(methods) > 1
    assert " ".join(c.text for c in methods) == " ".join(LONG_METHODS.split())
    for chunk in methods:
        assert 30 <= len(chunk.text.split()) <= 150
        assert chunk.text.endswith("orally.")  # never cut inside a sentence ("yrs.", "2.5", "e.g.")


def test_conclusion_kept_whole() -> None:
    conclusions = [c for c in chunk_article(structured()) if c.is_conclusion]
    assert len(conclusions) == 1 and conclusions[0].text == LONG_CONCLUSION


def test_unstructured_abstract_split_by_sentences() -> None:
    text = " ".join(f"Sentence number {i} says something about outcomes here." for i in range(60))
    chunks = chunk_article(Article(doi="10.1/x", title="T", abstract=[AbstractSection(text=text)]))
    assert chunks[0].id == "doi:10.1/x#0"
    body = chunks[1:]
    assert len(body) >= 3 and all(c.section is None for c in body)
    assert " ".join(c.text for c in body) == text


def test_empty_article_has_no_chunks() -> None:
    assert chunk_article(Article(pmid="1")) == []


def test_split_sentences_handles_abbreviations() -> None:
    assert split_sentences("Dr. Smith et al. gave 3.5 mg. Then it stopped.") == [
        "Dr. Smith et al. gave 3.5 mg.",
        "Then it stopped.",
    ]


def test_content_hash_changes_with_content_only() -> None:
    a = structured()
    same = a.model_copy(update={"citation_count": 5, "journal": "J"})
    changed = a.model_copy(update={"title": "Another title"})
    assert article_content_hash(a) == article_content_hash(same)
    assert article_content_hash(a) != article_content_hash(changed)
