"""The full-text reader against the fake E-utilities (efetch db=pmc, elink) and Europe PMC."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from medlit.config import Settings
from medlit.sources.fulltext import FullTextReader, parse_elink_pmc
from medlit.sources.pubmed import PubMedSource
from medlit.types import Article, SearchQuery
from medlit.usage import usage_scope
from tests.conftest import shared_data_path
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.fixtures import sample_articles

OPEN = (
    b'<article xmlns:xlink="http://www.w3.org/1999/xlink"><?properties open_access?><front>'
    b'<article-meta><article-id pub-id-type="pmid">{pmid}</article-id>'
    b'<article-id pub-id-type="pmc">{pmc}</article-id><title-group><article-title>{title}'
    b"</article-title></title-group><abstract><p>Aspirin was studied in adults.</p></abstract>"
    b"</article-meta></front><body><sec><title>Results</title><p>Deaths fell from 30 to 12."
    b"</p></sec></body></article>"
)


def _jats(pmid: str, pmc: str, title: str = "Aspirin and deaths", *, oa: bool = True) -> bytes:
    doc = OPEN.replace(b"{pmid}", pmid.encode()).replace(b"{pmc}", pmc.encode())
    doc = doc.replace(b"{title}", title.encode())
    return doc if oa else doc.replace(b"<?properties open_access?>", b"")


@pytest.fixture
def fake(make_fake_eutils: Callable[..., FakeEutils]) -> FakeEutils:
    fake = make_fake_eutils(articles=sample_articles())
    fake.add_jats(_jats("90000001", "7000001"))
    fake.add_jats(_jats("90000002", "7000002"), pmcid_in_record=False)
    fake.add_jats(_jats("90000003", "7000003", oa=False))
    return fake


def _pmc_nxml() -> list[Path]:
    return sorted(shared_data_path("pmc_oa").glob("*.nxml"))


@pytest.mark.shared_data
async def test_the_eight_real_articles_are_served_and_read(
    settings: Settings, make_fake_eutils: Callable[..., FakeEutils]
) -> None:
    fake = make_fake_eutils(rate_limit=None)
    pmids = [fake.add_jats(p.read_bytes()) for p in _pmc_nxml()]
    settings.pubmed.base_url = fake.base_url
    async with PubMedSource(settings) as pubmed, FullTextReader(settings) as reader:
        articles = await pubmed.efetch(pmids)
        assert [a.pmid for a in articles] == pmids
        assert all(a.pmcid and a.pmcid.startswith("PMC") for a in articles)
        with usage_scope() as usage:
            outcome = await reader.read(articles, budget=8)
    assert len(outcome.texts) == 8, outcome
    assert usage.source_calls("pmc") == 8  # one efetch each, no elink (the records name it)
    epic = next(a for a in articles if a.pmid == "21045829")
    assert epic.pmcid == "PMC2994229"
    text = outcome.texts[epic.key].text
    assert "HR, 1.19; 95% CI: 0.96–1.48" in text
    assert not any(r.endpoint == "elink" for r in fake.history)


async def test_pmcid_from_the_record_elink_when_it_lacks_it(
    settings: Settings, fake: FakeEutils
) -> None:
    settings.pubmed.base_url = fake.base_url
    async with PubMedSource(settings) as pubmed, FullTextReader(settings) as reader:
        named, unnamed = await pubmed.efetch(["90000001", "90000002"])
        assert named.pmcid == "PMC7000001" and unnamed.pmcid is None
        # A record fetched from PubMed now names its PMCID when PMC has one: no elink.
        outcome = await reader.read([named, unnamed], budget=5)
        assert list(outcome.texts) == [named.key]
        assert outcome.no_pmcid == [unnamed.key]
        assert not fake.requests("elink")
        # From the local corpus (or with elink=always), elink maps the PMID.
        local = unnamed.model_copy(update={"source": "local"})
        outcome = await reader.read([local], budget=5)
        assert outcome.texts[local.key].pmcid == "PMC7000002"
        assert [r.params["id"] for r in fake.requests("elink")] == ["90000002"]
        settings.fulltext.elink = "always"
        nowhere = Article(pmid="11111111", title="Not in PMC")
        outcome = await reader.read([nowhere], budget=5)
        assert outcome.no_pmcid == [nowhere.key] and not outcome.texts


async def test_not_open_access_and_budget(settings: Settings, fake: FakeEutils) -> None:
    settings.pubmed.base_url = fake.base_url
    articles = [Article(pmid=f"9000000{i}", pmcid=f"PMC700000{i}", title=str(i)) for i in (1, 3)]
    async with FullTextReader(settings) as reader:
        outcome = await reader.read(articles, budget=5)
        assert list(outcome.texts) == [articles[0].key]
        assert outcome.not_open_access == [articles[1].key]
        spent = await reader.read(articles, budget=1)
        assert spent.over_budget == [articles[1].key] and spent.fetched == 1
        held = articles[0].model_copy(update={"full_text": outcome.texts[articles[0].key]})
        again = await reader.read([held], budget=1)
        assert again.fetched == 0  # already read: nothing fetched
        # Europe PMC's record says it is not open access: no request is spent on it.
        before = len(fake.history)
        closed = articles[0].model_copy(update={"open_access": False})
        refused = await reader.read([closed], budget=1)
        assert refused.not_open_access == [closed.key] and len(fake.history) == before


async def test_a_broken_document_fails_alone_and_europe_pmc_is_the_second_route(
    settings: Settings, fake: FakeEutils
) -> None:
    settings.pubmed.base_url = fake.base_url
    settings.pubmed.max_retries = 1
    articles = [Article(pmid=f"9000000{i}", pmcid=f"PMC700000{i}", title=str(i)) for i in (1, 2)]
    with FakeEuropePMC() as epmc:
        settings.europepmc.base_url = epmc.base_url
        epmc.full_texts["PMC7000001"] = _jats("90000001", "7000001")
        async with FullTextReader(settings) as reader:
            fake.enqueue(Fault.truncated(), endpoint="efetch", times=2)  # every PMC try of one
            with usage_scope() as usage:
                outcome = await reader.read(articles[:1], budget=5)
            assert outcome.texts[articles[0].key].source == "europepmc"
            assert usage.source_calls("pmc") == 2 and usage.source_calls("europepmc_fulltext") == 1
            # Europe PMC does not have the other: it fails alone, with its reason.
            fake.enqueue(Fault.status(500), endpoint="efetch", times=2)
            outcome = await reader.read(articles[1:], budget=5)
            assert not outcome.texts
            assert "404" in outcome.failed[articles[1].key]


async def test_a_50_mb_document_is_refused_not_retried(
    settings: Settings, fake: FakeEutils
) -> None:
    settings.pubmed.base_url = fake.base_url
    settings.fulltext.europepmc_fallback = False
    filler = b"<p>" + b"x" * 1000 + b"</p>"
    big = _jats("90000004", "7000004").replace(b"</body>", filler * 50_000 + b"</body>")
    assert len(big) > 50_000_000
    fake.pmc["7000004"] = big  # served as efetch db=pmc would
    async with FullTextReader(settings) as reader:
        article = Article(pmid="90000004", pmcid="PMC7000004", title="big")
        outcome = await reader.read([article], budget=1)
    assert "above the 10,000,000-byte limit" in outcome.failed[article.key]
    assert len(fake.requests("efetch")) == 1


async def test_full_text_calls_share_the_pubmed_rate_limit(
    settings: Settings, fake: FakeEutils
) -> None:
    settings.pubmed.base_url = fake.base_url  # 3 requests a second, 429 above
    settings.fulltext.europepmc_fallback = False
    articles = [Article(pmid="90000001", pmcid="PMC7000001", title="a")] * 1
    async with PubMedSource(settings) as pubmed, FullTextReader(settings) as reader:
        jobs = [pubmed.esearch(SearchQuery(term="aspirin")) for _ in range(4)]
        jobs += [reader.from_pmc(articles[0].pmcid or "") for _ in range(4)]
        results = await asyncio.gather(*jobs)
    assert len(results) == 8
    assert [r.status for r in fake.history].count(429) == 0
    assert fake.max_in_window(1.0) <= 3
    assert {r.endpoint for r in fake.history} == {"esearch", "efetch"}


def test_elink_reply_reads_only_the_pubmed_pmc_link(shared_data: Path) -> None:
    # The real reply lists 'pubmed_pmc_refs' (articles citing it): never the article itself.
    path = shared_data / "eutils" / "biopython" / "entrez" / "elink7.xml"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    assert parse_elink_pmc(path.read_bytes()) == {}
    reply = (
        b"<eLinkResult><LinkSet><DbFrom>pubmed</DbFrom><IdList><Id>21045829</Id></IdList>"
        b"<LinkSetDb><DbTo>pmc</DbTo><LinkName>pubmed_pmc_refs</LinkName><Link><Id>1</Id></Link>"
        b"</LinkSetDb><LinkSetDb><DbTo>pmc</DbTo><LinkName>pubmed_pmc</LinkName><Link>"
        b"<Id>2994229</Id></Link></LinkSetDb></LinkSet></eLinkResult>"
    )
    assert parse_elink_pmc(reply) == {"21045829": "PMC2994229"}
