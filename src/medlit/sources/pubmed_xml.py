"""PubMed XML (efetch ``retmode=xml``, the annual baseline) and esearch responses, parsed.

Everything here turns NCBI's documents into :class:`~medlit.types.Article` and
:class:`ESearchResult`; every way NCBI says "error" (an ``ERROR`` element or key, an
``ErrorList`` with nothing found, ``{"error": ...}``, a truncated or malformed document) becomes
a :class:`~medlit.errors.SourceResponseError` with NCBI's own words, never an empty list that
looks like "no results". A search that found nothing and says nothing else is a legitimate
empty result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from lxml import etree

from medlit.errors import MalformedResponse, QueryNotUnderstood, SourceResponseError
from medlit.types import AbstractSection, Article, SourceName

__all__ = [
    "ESearchResult",
    "article_from_element",
    "iter_pubmed_articles",
    "parse_esearch",
    "parse_esearch_json",
    "parse_esearch_xml",
    "parse_pubmed_xml",
]

_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_YEAR = re.compile(r"\b(1[6-9]\d\d|20\d\d)\b")
_SPACE = re.compile(r"\s+")
_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")


def _parser() -> etree.XMLParser:
    # No DTD loading, no network, no entity expansion: the DOCTYPE points at NCBI's servers.
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True, recover=False
    )


@dataclass
class ESearchResult:
    """One esearch answer.

    Attributes:
        count: total hits NCBI reports for the term.
        ids: the PMIDs of this page, best first.
        webenv: history-server session (usehistory=y), if any.
        query_key: history-server query key, if any.
        warnings: phrases not found and other warnings NCBI attached to a non-empty result.
    """

    count: int
    ids: list[str]
    webenv: str | None = None
    query_key: str | None = None
    warnings: list[str] = field(default_factory=list)


def _text(element: etree._Element | None) -> str:
    """All text inside ``element``, inline markup flattened, whitespace collapsed."""
    if element is None:
        return ""
    parts: list[str] = []
    _collect(element, parts)
    return _SPACE.sub(" ", "".join(parts)).strip()


def _collect(element: etree._Element, parts: list[str]) -> None:
    if element.text:
        parts.append(element.text)
    for child in element:
        if not isinstance(child.tag, str):  # comments, processing instructions
            pass
        elif child.tag.startswith("{" + _MATHML_NS + "}"):
            # MathML is indented markup: keep its symbols, drop the layout whitespace.
            parts.append("".join(t.strip() for t in child.itertext()))
        else:
            _collect(child, parts)
        if child.tail:
            parts.append(child.tail)


def _clean_doi(value: str) -> str | None:
    value = value.strip()
    value = re.sub(r"^(https?://(dx\.)?doi\.org/|doi:\s*)", "", value, flags=re.I)
    return value.lower() or None


def _date(pub_date: etree._Element | None) -> tuple[str | None, int | None]:
    """'2001 Jun 5' / '1998 Dec-1999 Jan' and the (first) year of a PubDate element."""
    if pub_date is None:
        return None, None
    medline = pub_date.findtext("MedlineDate")
    if medline:
        match = _YEAR.search(medline)
        return medline.strip(), int(match.group(1)) if match else None
    parts = [
        pub_date.findtext(tag) or ""
        for tag in ("Year", "Season", "Month", "Day")
        if pub_date.findtext(tag)
    ]
    year_text = pub_date.findtext("Year")
    year = int(year_text) if year_text and year_text.strip().isdigit() else None
    return (" ".join(p.strip() for p in parts) or None), year


def _authors(author_list: etree._Element | None) -> list[str]:
    if author_list is None:
        return []
    names = []
    for author in author_list.findall("Author"):
        collective = author.findtext("CollectiveName")
        last = author.findtext("LastName")
        if last:
            initials = author.findtext("Initials") or ""
            names.append(f"{last} {initials}".strip())
        elif collective:
            names.append(_SPACE.sub(" ", collective).strip())
    return names


def _abstract(abstract: etree._Element | None) -> list[AbstractSection]:
    if abstract is None:
        return []
    sections = []
    for node in abstract.findall("AbstractText"):
        text = _text(node)
        if not text:
            continue
        sections.append(
            AbstractSection(
                label=node.get("Label") or None,
                category=node.get("NlmCategory") or None,
                text=text,
            )
        )
    return sections


def _ids(id_lists: list[etree._Element]) -> dict[str, str]:
    found: dict[str, str] = {}
    for id_list in id_lists:
        for node in id_list.findall("ArticleId"):
            kind = (node.get("IdType") or "").lower()
            if kind and node.text and kind not in found:
                found[kind] = node.text.strip()
    return found


def article_from_element(element: etree._Element, *, source: SourceName = "pubmed") -> Article:
    """One ``PubmedArticle`` or ``PubmedBookArticle`` element as an :class:`Article`."""
    if element.tag == "PubmedBookArticle":
        return _book_article(element, source)
    citation = element.find("MedlineCitation")
    if citation is None:
        raise SourceResponseError("PubmedArticle without MedlineCitation", source=source)
    art = citation.find("Article")
    if art is None:
        raise SourceResponseError("PubmedArticle without Article", source=source)
    pmid = (citation.findtext("PMID") or "").strip() or None
    title = _text(art.find("ArticleTitle")) or _text(art.find("VernacularTitle"))
    journal_el = art.find("Journal")
    journal = None
    pub_date_text, year = None, None
    if journal_el is not None:
        journal = (
            _text(journal_el.find("Title"))
            or _text(journal_el.find("ISOAbbreviation"))
            or (citation.findtext("MedlineJournalInfo/MedlineTA") or None)
        )
        pub_date_text, year = _date(journal_el.find("JournalIssue/PubDate"))
    if year is None:
        pub_date_text, year = _date(art.find("ArticleDate"))
    ids = _ids([el for el in [element.find("PubmedData/ArticleIdList")] if el is not None])
    doi = ids.get("doi")
    if not doi:
        for loc in art.findall("ELocationID"):
            if (loc.get("EIdType") or "").lower() == "doi" and loc.text:
                doi = loc.text
                break
    pmcid = ids.get("pmc")
    keywords = [_text(k) for k in citation.findall("KeywordList/Keyword") if _text(k)]
    return Article(
        pmid=pmid,
        doi=_clean_doi(doi) if doi else None,
        pmcid=pmcid.strip() if pmcid else None,
        title=title,
        abstract=_abstract(art.find("Abstract")),
        authors=_authors(art.find("AuthorList")),
        journal=journal or None,
        pub_date=pub_date_text,
        year=year,
        publication_types=[
            _text(p) for p in art.findall("PublicationTypeList/PublicationType") if _text(p)
        ],
        mesh_terms=[
            _text(d)
            for d in citation.findall("MeshHeadingList/MeshHeading/DescriptorName")
            if _text(d)
        ],
        keywords=keywords,
        language=(art.findtext("Language") or "").strip() or None,
        source=source,
    )


def _book_article(element: etree._Element, source: SourceName) -> Article:
    doc = element.find("BookDocument")
    if doc is None:
        raise SourceResponseError("PubmedBookArticle without BookDocument", source=source)
    book = doc.find("Book")
    book_title = _text(book.find("BookTitle")) if book is not None else ""
    title = _text(doc.find("ArticleTitle")) or book_title
    journal = book_title or (
        _text(book.find("Publisher/PublisherName")) if book is not None else ""
    )
    pub_date_text, year = _date(book.find("PubDate") if book is not None else None)
    ids = _ids(
        [
            el
            for el in (doc.find("ArticleIdList"), element.find("PubmedBookData/ArticleIdList"))
            if el is not None
        ]
    )
    authors = _authors(doc.find("AuthorList"))
    if not authors and book is not None:
        authors = _authors(book.find("AuthorList"))
    return Article(
        pmid=(doc.findtext("PMID") or "").strip() or None,
        doi=_clean_doi(ids["doi"]) if ids.get("doi") else None,
        pmcid=ids.get("pmc"),
        title=title,
        abstract=_abstract(doc.find("Abstract")),
        authors=authors,
        journal=journal or None,
        pub_date=pub_date_text,
        year=year,
        publication_types=[_text(p) for p in doc.findall("PublicationType") if _text(p)]
        or ["Book"],
        mesh_terms=[_text(d) for d in doc.findall("MeshHeadingList/MeshHeading/DescriptorName")],
        keywords=[_text(k) for k in doc.findall("KeywordList/Keyword") if _text(k)],
        language=(doc.findtext("Language") or "").strip() or None,
        source=source,
        is_book=True,
    )


def _check_error_root(root: etree._Element, source: str) -> None:
    error = root.findtext("ERROR") if root.tag != "ERROR" else root.text
    if error:
        raise SourceResponseError(f"{source}: NCBI error: {error.strip()}", source=source)


def _document(data: bytes | str, tag: str, kind: str, source: str) -> Any:
    """The root of an E-utilities XML reply, checked: well-formed, no error body, ``tag``.

    Raises:
        SourceResponseError: malformed or truncated XML, an NCBI error document, or another
            document type.
    """
    raw = data.encode() if isinstance(data, str) else data
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError as exc:
        raise MalformedResponse(
            f"{source}: malformed or truncated {kind} ({exc})", source=source
        ) from None
    _check_error_root(root, source)
    if root.tag != tag:
        article = "an" if tag[0].lower() in "aeiou" else "a"
        raise SourceResponseError(
            f"{source}: expected {article} {tag}, got <{root.tag}>", source=source
        )
    return root


def parse_pubmed_xml(data: bytes | str, *, source: SourceName = "pubmed") -> list[Article]:
    """Articles of an efetch (PubMed XML) response.

    Raises:
        SourceResponseError: malformed or truncated XML, an NCBI error document, or a document
            that is not a ``PubmedArticleSet``.
    """
    root = _document(data, "PubmedArticleSet", "PubMed XML", source)
    return [article_from_element(el, source=source) for el in root if el.tag in _ARTICLE_TAGS]


def iter_pubmed_articles(stream: IO[bytes], *, source: SourceName = "local") -> Iterator[Article]:
    """Articles of a (possibly huge, e.g. baseline) PubMed XML file, streamed.

    Raises:
        SourceResponseError: the file is malformed or truncated (articles before the damage
            have been yielded already).
    """
    context = etree.iterparse(
        stream,
        events=("end",),
        tag=_ARTICLE_TAGS,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=True,
    )
    try:
        for _event, element in context:
            yield article_from_element(element, source=source)
            # Free what was parsed so far: baseline files hold 30,000 articles each.
            element.clear(keep_tail=True)
            while element.getprevious() is not None:
                del element.getparent()[0]
    except etree.XMLSyntaxError as exc:
        raise SourceResponseError(
            f"malformed or truncated PubMed XML ({exc})", source=source
        ) from None


def parse_esearch_xml(data: bytes | str, *, source: str = "pubmed") -> ESearchResult:
    """An esearch ``retmode=xml`` response.

    Raises:
        SourceResponseError: malformed XML, an ``ERROR`` element, or an ``ErrorList`` with
            nothing found (PubMed did not understand the term).
    """
    root = _document(data, "eSearchResult", "esearch XML", source)
    count_text = (root.findtext("Count") or "").strip()
    if not count_text.isdigit():
        raise SourceResponseError(f"{source}: esearch result without a Count", source=source)
    problems = [
        f"{child.tag}: {_text(child)}" for child in root.findall("ErrorList/*") if _text(child)
    ]
    warnings = [_text(child) for child in root.findall("WarningList/*") if _text(child)]
    return _finish(
        int(count_text),
        [(el.text or "").strip() for el in root.findall("IdList/Id") if el.text],
        root.findtext("WebEnv"),
        root.findtext("QueryKey"),
        problems,
        warnings,
        source,
    )


def parse_esearch_json(data: bytes | str, *, source: str = "pubmed") -> ESearchResult:
    """An esearch ``retmode=json`` response (including ``{"error": ...}`` and ``ERROR``)."""
    try:
        body: Any = json.loads(data)
    except ValueError as exc:
        raise MalformedResponse(
            f"{source}: malformed or truncated esearch JSON ({exc})", source=source
        ) from None
    if not isinstance(body, dict):
        raise SourceResponseError(f"{source}: esearch JSON is not an object", source=source)
    if body.get("error"):
        raise SourceResponseError(f"{source}: NCBI error: {body['error']}", source=source)
    result = body.get("esearchresult")
    if not isinstance(result, dict):
        raise SourceResponseError(f"{source}: esearch JSON without esearchresult", source=source)
    if result.get("ERROR"):
        raise SourceResponseError(f"{source}: NCBI error: {result['ERROR']}", source=source)
    count_text = str(result.get("count", "")).strip()
    if not count_text.isdigit():
        raise SourceResponseError(f"{source}: esearch result without a count", source=source)
    problems = []
    errorlist = result.get("errorlist") or {}
    if isinstance(errorlist, dict):
        for kind, values in errorlist.items():
            if isinstance(values, list):
                problems += [f"{kind}: {v}" for v in values if v]
    warnings = []
    warninglist = result.get("warninglist") or {}
    if isinstance(warninglist, dict):
        for values in warninglist.values():
            if isinstance(values, list):
                warnings += [str(v) for v in values if v]
    return _finish(
        int(count_text),
        [str(i) for i in result.get("idlist", [])],
        result.get("webenv"),
        result.get("querykey"),
        problems,
        warnings,
        source,
    )


def parse_esearch(data: bytes, *, source: str = "pubmed") -> ESearchResult:
    """An esearch response in either format (sniffed from its first character)."""
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        return parse_esearch_json(data, source=source)
    return parse_esearch_xml(data, source=source)


def _finish(
    count: int,
    ids: list[str],
    webenv: str | None,
    query_key: str | None,
    problems: list[str],
    warnings: list[str],
    source: str,
) -> ESearchResult:
    if problems and not ids:
        # NCBI found nothing *because* it could not use (part of) the term: say so instead of
        # returning an empty list that looks like "no literature on this".
        raise QueryNotUnderstood(
            f"{source}: esearch found nothing ({'; '.join(problems)})", source=source
        )
    return ESearchResult(
        count=count,
        ids=ids,
        webenv=(webenv or "").strip() or None,
        query_key=(str(query_key).strip() if query_key else None),
        warnings=problems + warnings,
    )
