"""The answer prompt carries, of each article, the sentences that bear on the question (ranked
by the digest's own scoring), within a token budget, in the article's own order."""

from __future__ import annotations

from collections.abc import Sequence

from medlit.agent.prompt import (
    CHARS_PER_TOKEN,
    EvidenceBlock,
    RankedSentence,
    build_messages,
    expand_context,
    focus_blocks,
)
from medlit.digest import build_evidence_digest
from medlit.types import AbstractSection, Article, Chunk, Evidence

QUESTION = "Does aspirin prevent stroke in adults?"


def _article(pmid: str, title: str, sections: list[tuple[str, str]]) -> Article:
    return Article(
        pmid=pmid,
        title=title,
        year=2019,
        abstract=[AbstractSection(label=label, text=text) for label, text in sections],
    )


ON = _article(
    "1",
    "Aspirin and stroke in adults",
    [
        ("BACKGROUND", "Stroke is a leading cause of death and disability in adults worldwide."),
        ("OBJECTIVE", "To determine whether aspirin prevents stroke in adults."),
        ("METHODS", "We randomised 2000 adults to aspirin or placebo for five years."),
        ("RESULTS", "Stroke occurred in 2.1% of the aspirin group and 3.4% of the placebo group."),
        ("RESULTS", "Major bleeding was more common with aspirin than with placebo in adults."),
        ("CONCLUSIONS", "Aspirin prevented stroke in adults at the cost of more bleeding."),
    ],
)
ALSO = _article(
    "2",
    "Low-dose aspirin for primary prevention of stroke",
    [
        ("METHODS", "A cohort of 5000 adults taking low-dose aspirin was followed for stroke."),
        ("CONCLUSIONS", "Low-dose aspirin lowered the risk of ischaemic stroke in older adults."),
    ],
)


def _evidence(*articles: Article) -> list[Evidence]:
    found = []
    for rank, article in enumerate(articles):
        for i, section in enumerate(article.abstract, 1):
            chunk = Chunk(
                id=f"{article.key}#{i}",
                article_key=article.key,
                ordinal=i,
                section=section.label,
                text=section.text,
            )
            found.append(Evidence(chunk=chunk, article=article, similarity=0.8, score=0.9 - rank))
    return found


def _rank(question: str, evidence: list[Evidence]) -> Sequence[RankedSentence]:
    every = 10_000
    digest = build_evidence_digest(question, evidence, max_sentences=every, per_article=every)
    return digest.sentences


def _blocks(*articles: Article) -> list[EvidenceBlock]:
    return expand_context(_evidence(*articles), None, window=0, max_chars=100_000)


def test_each_article_gives_its_conclusion_and_results_not_its_aims_or_background() -> None:
    blocks = focus_blocks(QUESTION, _blocks(ON, ALSO), _rank, max_tokens=400, per_article=3)
    assert [b.article.pmid for b in blocks] == ["1", "2"]
    first = blocks[0].render()
    assert first.startswith("[PMID:1] Aspirin and stroke in adults (2019")
    assert "Conclusion: Aspirin prevented stroke in adults" in first
    assert "To determine whether" not in first  # an aim is no finding
    assert "leading cause of death" not in first
    # in the article's own order: results before the conclusion
    assert first.index("Stroke occurred") < first.index("Conclusion:")
    assert "Conclusion: Low-dose aspirin lowered" in blocks[1].render()


def test_the_budget_holds_and_the_best_article_always_stays() -> None:
    whole = "\n\n".join(b.render() for b in _blocks(ON, ALSO))
    tight = focus_blocks(QUESTION, _blocks(ON, ALSO), _rank, max_tokens=40, per_article=3)
    shown = "\n\n".join(b.render() for b in tight)
    assert [b.article.pmid for b in tight] == ["1"]  # the second no longer fits
    assert shown.splitlines()[1:] == [
        "Conclusion: Aspirin prevented stroke in adults at the cost of more bleeding."
    ]
    assert len(shown) <= 40 * CHARS_PER_TOKEN < len(whole) / 2
    nothing = focus_blocks(QUESTION, _blocks(ON, ALSO), _rank, max_tokens=1, per_article=3)
    assert [len(b.sentences or []) for b in nothing] == [1]  # the best article's best, always
    roomy = focus_blocks(QUESTION, _blocks(ON, ALSO), _rank, max_tokens=2000, per_article=2)
    assert all(len(b.sentences or []) <= 2 for b in roomy)


def test_the_rules_come_first_the_same_for_every_question() -> None:
    one = build_messages(QUESTION, _blocks(ON), yes_no=True)
    other = build_messages("What does aspirin do?", _blocks(ALSO))
    assert one[0] == other[0]  # a server's prompt cache reuses it
    assert one[1]["content"].startswith("Evidence:\n\n[PMID:1]")
