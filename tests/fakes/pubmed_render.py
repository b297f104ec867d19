"""Render :class:`~medlit.types.Article` objects as PubMed XML, for the fake servers and tests.

The inverse of :mod:`medlit.sources.pubmed_xml` for the fields it reads, so a test can build a
corpus from a few ``Article(...)`` literals and serve it exactly as efetch would.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from lxml import etree

from medlit.types import Article

__all__ = ["article_to_xml", "articles_to_xml"]


def _sub(
    parent: etree._Element, tag: str, text: str | None = None, **attrib: str
) -> etree._Element:
    element = etree.SubElement(parent, tag, **attrib)
    if text is not None:
        element.text = text
    return element


def article_to_xml(article: Article, *, entered: date | None = None) -> bytes:
    """One ``<PubmedArticle>`` element (bytes, no XML declaration); ``entered``, when given,
    is its Entrez date (``PubmedData/History/PubMedPubDate[@PubStatus="entrez"]``, what
    esearch ``datetype=edat`` searches)."""
    root = etree.Element("PubmedArticle")
    citation = _sub(root, "MedlineCitation", Status="MEDLINE", Owner="NLM")
    _sub(citation, "PMID", article.pmid or "", Version="1")
    art = _sub(citation, "Article", PubModel="Print")
    journal = _sub(art, "Journal")
    issue = _sub(journal, "JournalIssue", CitedMedium="Print")
    pub_date = _sub(issue, "PubDate")
    if (article.pub_date and not article.pub_date[:4].isdigit()) or (
        article.pub_date and "-" in article.pub_date
    ):
        _sub(pub_date, "MedlineDate", article.pub_date)
    elif article.year is not None:
        _sub(pub_date, "Year", str(article.year))
        rest = (article.pub_date or "")[4:].split()
        for tag, value in zip(("Month", "Day"), rest, strict=False):
            _sub(pub_date, tag, value)
    if article.journal:
        _sub(journal, "Title", article.journal)
    _sub(art, "ArticleTitle", article.title)
    if article.abstract:
        abstract = _sub(art, "Abstract")
        for section in article.abstract:
            attrib = {}
            if section.label:
                attrib["Label"] = section.label
            if section.category:
                attrib["NlmCategory"] = section.category
            _sub(abstract, "AbstractText", section.text, **attrib)
    if article.authors:
        authors = _sub(art, "AuthorList", CompleteYN="Y")
        for name in article.authors:
            author = _sub(authors, "Author", ValidYN="Y")
            last, _, initials = name.rpartition(" ")
            if last and initials.isupper():
                _sub(author, "LastName", last)
                _sub(author, "Initials", initials)
            else:
                _sub(author, "CollectiveName", name)
    _sub(art, "Language", article.language or "eng")
    types = _sub(art, "PublicationTypeList")
    for pub_type in article.publication_types or ["Journal Article"]:
        _sub(types, "PublicationType", pub_type)
    if article.mesh_terms:
        mesh = _sub(citation, "MeshHeadingList")
        for term in article.mesh_terms:
            _sub(_sub(mesh, "MeshHeading"), "DescriptorName", term, MajorTopicYN="N")
    if article.keywords:
        keywords = _sub(citation, "KeywordList", Owner="NOTNLM")
        for keyword in article.keywords:
            _sub(keywords, "Keyword", keyword, MajorTopicYN="N")
    data = _sub(root, "PubmedData")
    if entered is not None:
        stamp = _sub(_sub(data, "History"), "PubMedPubDate", PubStatus="entrez")
        _sub(stamp, "Year", str(entered.year))
        _sub(stamp, "Month", str(entered.month))
        _sub(stamp, "Day", str(entered.day))
    ids = _sub(data, "ArticleIdList")
    _sub(ids, "ArticleId", article.pmid or "", IdType="pubmed")
    if article.doi:
        _sub(ids, "ArticleId", article.doi, IdType="doi")
    if article.pmcid:
        _sub(ids, "ArticleId", article.pmcid, IdType="pmc")
    return bytes(etree.tostring(root, encoding="utf-8"))


def articles_to_xml(articles: Iterable[Article]) -> bytes:
    """A whole efetch-style ``PubmedArticleSet`` document."""
    body = b"\n".join(article_to_xml(a) for a in articles)
    return b'<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + body + b"\n</PubmedArticleSet>\n"
