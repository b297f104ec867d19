"""The recorded answers of a real model replayed through the checks
(``benchmarks/uncertain_causes.py``): every Uncertain verdict says why it was withheld, and a
loosely cited article sentence is not dropped for its ids (``benchmarks/loose_citations.py``)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import shared_data_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def benchmarks() -> Iterator[None]:
    path = list(sys.path)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        yield
    finally:
        sys.path[:] = path


def _module(name: str) -> ModuleType:
    return __import__(name)


@pytest.mark.parametrize("recording", ["titles", "expert", "plain"])
def test_every_uncertain_verdict_replayed_carries_its_cause(
    benchmarks: None, recording: str
) -> None:
    data = shared_data_path("pubmedqa", "pqal_dev.json")
    causes = _module("uncertain_causes")
    from medlit.sources.pubmed_xml import parse_pubmed_xml

    xml = data.with_name("pqal_dev_pubmed.xml")
    articles = {a.pmid: a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid}
    paths = {"titles": causes.RECORDED, "expert": [causes.EXPERT], "plain": [causes.PLAIN]}
    rows = [
        json.loads(line)
        for path in paths[recording]
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    per = asyncio.run(causes.tally(rows, articles, _module("ablation").Reads(causes.READS)))
    for half, counts in per.items():
        assert counts["answers"] > 0, half
        assert counts["uncaused"] == 0, half
        assert counts["uncertain"] == sum(counts[k] for k in (*causes.KINDS, "unread"))
    # docs/benchmarks.md: most Uncertain verdicts are a check's doing, not the model's.
    assert per["tune"]["check"] > per["tune"]["model"]
    assert per["check"]["check"] > per["check"]["model"]


def test_an_article_sentence_cited_loosely_falls_only_as_cited_strictly(benchmarks: None) -> None:
    data = shared_data_path("pubmedqa", "pqal_dev.json")
    loose = _module("loose_citations")
    from medlit.sources.pubmed_xml import parse_pubmed_xml

    xml = data.with_name("pqal_dev_pubmed.xml")
    articles = [a for a in parse_pubmed_xml(xml.read_bytes()) if a.pmid][:6]
    question = "Is it so?"
    for i, article in enumerate(articles[:3]):
        cited = articles[i : i + 3]
        sentences = [
            s for sec in article.abstract for s in sec.text.split(". ") if any(map(str.isdigit, s))
        ]
        for sentence in sentences[:3]:
            drops = asyncio.run(loose.dropped(question, sentence, cited))
            assert all(drops[form] == drops["checked"] for form in loose.FORMS), sentence
