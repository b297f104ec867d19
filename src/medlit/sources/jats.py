"""JATS full text (PMC efetch ``db=pmc``, Europe PMC ``fullTextXML``, the PMC OA files), parsed.

:func:`parse_jats` turns one article's JATS XML into a :class:`~medlit.types.FullText`: the
body's paragraphs under the title of the top-level section they sit in (a nested "Subgroup
analyses" stays "Results"), each table as its caption and readable rows ("Pre-menopausal |
1.19 (0.96-1.48)"), each figure as its caption. The references list, the front matter (the
abstract is the PubMed record's) and the back matter (acknowledgements, funding, conflicts)
are left out. The licence is kept as the article states it.

Only open-access articles are read: the document must carry PMC's ``open_access`` marker or
a licence that says so (a Creative Commons or public-domain licence, or a licence text naming
open access); any other document raises :class:`NotOpenAccess`.

The parser is the PubMed parser's: no DTD loading, no network, no entity expansion; documents
above ``max_bytes`` are refused before parsing (:class:`DocumentTooLarge`) and lxml's
``huge_tree`` stays off, so a hostile or broken document fails alone
(:class:`~medlit.errors.MalformedResponse` or :class:`~medlit.errors.SourceResponseError`) and
the abstract still serves.
"""

from __future__ import annotations

import re

from lxml import etree

from medlit.errors import MalformedResponse, SourceResponseError
from medlit.types import FullText, FullTextSection

__all__ = [
    "MAX_JATS_BYTES",
    "DocumentTooLarge",
    "NotOpenAccess",
    "is_open_access",
    "parse_jats",
    "pmcid_of",
]

#: Largest JATS document read (bytes); a PMC article is rarely above 1 MB.
MAX_JATS_BYTES = 10_000_000

_XLINK = "{http://www.w3.org/1999/xlink}href"
_MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
_SPACE = re.compile(r"\s+")
#: Elements whose text is no part of the prose around them.
_SKIP = {"ref-list", "fn-group", "ack", "disp-formula", "alternatives", "graphic"}
_OPEN_LICENCES = {"open-access", "creative-commons", "public-domain", "cc-by", "openaccess"}
#: Body sections that are not the study: declarations and back matter some journals put last.
_NOT_EVIDENCE = re.compile(
    r"^(acknowledg|funding|competing interests?|conflicts? of interest|disclosure|"
    r"authors'? contributions?|abbreviations|supplementary|supporting information|"
    r"references|pre-publication history)",
    re.I,
)


class NotOpenAccess(SourceResponseError):
    """A JATS document that does not say it is open access: it is not read."""


class DocumentTooLarge(SourceResponseError):
    """A JATS document above the byte limit: refused unparsed (and not retried)."""


def _parser() -> etree.XMLParser:
    # No DTD loading, no network, no entity expansion (the DOCTYPE points at NCBI's servers);
    # huge_tree off: lxml's own limits on depth and text node size hold.
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False
    )


def _local(tag: object) -> str:
    """An element's tag without its namespace ('' for comments and processing instructions)."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _text(element: etree._Element | None) -> str:
    """The prose of ``element``: inline markup flattened, citations and formulas dropped."""
    if element is None:
        return ""
    parts: list[str] = []
    _collect(element, parts)
    text = _SPACE.sub(" ", "".join(parts)).strip()
    # "[12]" and "(Smith et al.)" citations leave empty brackets and spaces before stops.
    text = re.sub(r"\s*[\[(]\s*[,;–-]?\s*[\])]", "", text)
    return re.sub(r"\s+([.,;:])", r"\1", text)


def _skipped(element: etree._Element) -> bool:
    name = _local(element.tag)
    # A citation of the references ("[12]") is dropped; "Table 2" is kept.
    return name in _SKIP or (name == "xref" and element.get("ref-type") == "bibr")


def _collect(element: etree._Element, parts: list[str]) -> None:
    if element.text and not _skipped(element):
        parts.append(element.text)
    for child in element:
        name = _local(child.tag)
        if not name or _skipped(child):
            pass
        elif isinstance(child.tag, str) and child.tag.startswith(_MATHML_NS):
            parts.append("".join(t.strip() for t in child.itertext()))
        else:
            _collect(child, parts)
        if child.tail:
            parts.append(child.tail)


def pmcid_of(root: etree._Element) -> str | None:
    """The article's PMCID ('PMC2994229'), from its front matter."""
    for node in root.iter("article-id"):
        kind = (node.get("pub-id-type") or "").lower()
        value = (node.text or "").strip()
        if kind in ("pmc", "pmcid") and value:
            return value if value.upper().startswith("PMC") else f"PMC{value}"
    return None


def _licence(root: etree._Element) -> tuple[str | None, bool]:
    """(the licence as stated, whether it says open access) from ``<permissions>``."""
    for permissions in root.iter("permissions"):
        for licence in permissions.iter("license"):
            href = (licence.get(_XLINK) or "").strip()
            kind = (licence.get("license-type") or "").strip().lower()
            words = _text(licence)
            said_open = (
                kind in _OPEN_LICENCES
                or "creativecommons.org" in href
                or bool(re.search(r"open[- ]access|creative commons|public domain", words, re.I))
            )
            stated = " ".join(part for part in (href, words) if part) or None
            return stated, said_open
        statement = _text(permissions.find("copyright-statement"))
        if statement:
            return statement, False
    return None, False


def is_open_access(root: etree._Element) -> bool:
    """Whether a JATS document says it is open access: PMC's ``open_access`` processing
    instruction, or a licence that says so. Anything else is not (fail closed)."""
    for pi in root.iter(etree.ProcessingInstruction):
        if pi.target == "properties" and "open_access" in (pi.text or ""):
            return True
    return _licence(root)[1]


def _rows(table: etree._Element) -> list[str]:
    """A table's rows as 'cell | cell | cell' lines (header rows first, as printed)."""
    lines = []
    for row in table.iter("tr"):
        cells = [_text(cell) for cell in row if _local(cell.tag) in ("td", "th")]
        if any(cells):
            lines.append(" | ".join(cell or "-" for cell in cells))
    return lines


def _table(wrap: etree._Element) -> str:
    label = _text(wrap.find("label"))
    caption = _text(wrap.find("caption"))
    head = " ".join(part for part in (label, caption) if part)
    head = head if not head or head.endswith((".", ":")) else head + "."
    lines = [head] if head else []
    for table in wrap.iter("table"):
        lines.extend(_rows(table))
    lines.extend(_text(fn) for fn in wrap.iter("table-wrap-foot") if _text(fn))
    return "\n".join(lines)


def _figure(fig: etree._Element) -> str:
    label = _text(fig.find("label"))
    caption = _text(fig.find("caption"))
    return " ".join(part for part in (label, caption) if part)


def _walk(element: etree._Element, label: str | None, out: list[FullTextSection]) -> None:
    """Paragraphs, tables and figures under ``element``, labelled ``label``; a section met
    while ``label`` is None (the body itself) labels what is under it with its own title."""
    for child in element:
        name = _local(child.tag)
        if not name or name in ("title", "label", "ref-list", "fn-group", "ack"):
            continue
        here = label or "Body"
        if name == "sec":
            title = _text(child.find("title"))
            if title and _NOT_EVIDENCE.match(title):
                continue
            _walk(child, label or _label(title, child), out)
        elif name in ("table-wrap", "fig"):
            _display(child, here, out)
        elif name == "p":
            _paragraph(child, here, out)
        elif name in ("list", "disp-quote", "boxed-text", "statement", "def-list"):
            text = _text(child)
            if text:
                out.append(FullTextSection(label=here, kind="text", text=text))
        elif name in ("table-wrap-group", "fig-group"):
            _walk(child, here, out)


def _display(node: etree._Element, label: str, out: list[FullTextSection]) -> None:
    """A ``table-wrap`` or ``fig`` as one piece labelled ``label``, when it has text."""
    is_table = _local(node.tag) == "table-wrap"
    text = _table(node) if is_table else _figure(node)
    if text:
        kind = "table" if is_table else "figure"
        out.append(FullTextSection(label=label, kind=kind, text=text))


def _paragraph(p: etree._Element, label: str, out: list[FullTextSection]) -> None:
    """A paragraph labelled ``label``: a table or figure inside it is its own piece; the
    prose stays one."""
    inner = [n for n in p.iter() if _local(n.tag) in ("table-wrap", "fig")]
    for node in inner:
        _display(node, label, out)
    prose = _text_without(p, inner)
    if prose:
        out.append(FullTextSection(label=label, kind="text", text=prose))


def _text_without(element: etree._Element, drop: list[etree._Element]) -> str:
    if not drop:
        return _text(element)
    copy = etree.fromstring(etree.tostring(element), _parser())
    for node in list(copy.iter()):
        if _local(node.tag) in ("table-wrap", "fig"):
            parent = node.getparent()
            if parent is not None:
                tail = node.tail
                parent.remove(node)
                if tail:  # keep the prose that followed the table
                    prev = parent[-1] if len(parent) else None
                    if prev is not None:
                        prev.tail = (prev.tail or "") + tail
                    else:
                        parent.text = (parent.text or "") + tail
    return _text(copy)


def _first_citing_sections(body: etree._Element) -> dict[str, str]:
    """Table and figure id -> the label of the top-level section that first cites it."""
    cited: dict[str, str] = {}
    for sec in body:
        if _local(sec.tag) != "sec":
            continue
        label = _label(_text(sec.find("title")), sec)
        for xref in sec.iter("xref"):
            if xref.get("ref-type") in ("table", "fig"):
                for rid in (xref.get("rid") or "").split():
                    cited.setdefault(rid, label)
    return cited


def _label(title: str, sec: etree._Element) -> str:
    title = title.strip().rstrip(":").strip()
    if title:
        return title[:1].upper() + title[1:]
    kind = (sec.get("sec-type") or "").split("|")[0].strip()
    return kind.capitalize() if kind else "Body"


def parse_jats(data: bytes | str, *, max_bytes: int = MAX_JATS_BYTES) -> FullText:
    """The body of one JATS article (efetch ``db=pmc`` returns it inside ``<pmc-articleset>``).

    Raises:
        DocumentTooLarge: the document is above ``max_bytes``.
        MalformedResponse: the document is not well-formed XML (retried like a 5xx).
        NotOpenAccess: the document does not say it is open access.
        SourceResponseError: an error document, no ``<article>``, no PMCID, or no body.
    """
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > max_bytes:
        raise DocumentTooLarge(
            f"JATS document of {len(raw):,} bytes is above the {max_bytes:,}-byte limit",
            source="pmc",
        )
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError as exc:
        raise MalformedResponse(f"malformed or truncated JATS XML ({exc})", source="pmc") from None
    error = root.findtext("ERROR") if root.tag != "ERROR" else root.text
    if error:
        raise SourceResponseError(f"pmc: NCBI error: {error.strip()}", source="pmc")
    article = root if _local(root.tag) == "article" else root.find(".//article")
    if article is None:
        raise SourceResponseError(f"pmc: expected a JATS <article>, got <{root.tag}>", source="pmc")
    pmcid = pmcid_of(article)
    if pmcid is None:
        raise SourceResponseError("pmc: JATS article without a PMCID", source="pmc")
    if not is_open_access(article):
        raise NotOpenAccess(f"pmc: {pmcid} is not open access: not read", source="pmc")
    licence, _ = _licence(article)
    body = article.find("body")
    if body is None:
        raise SourceResponseError(f"pmc: {pmcid} has no body (abstract only)", source="pmc")
    sections: list[FullTextSection] = []
    _walk(body, None, sections)
    # Floating tables and figures (PMC puts some in <floats-group>) are labelled with the
    # section that first cites them ("Table 2" in the Results is a Results table).
    cited_in = _first_citing_sections(body)
    for floats in article.iter("floats-group"):
        for child in floats:
            name = _local(child.tag)
            if name in ("table-wrap", "fig", "table-wrap-group", "fig-group"):
                holder = etree.Element("floats")
                holder.append(child.__copy__())
                label = cited_in.get(child.get("id") or "", "Tables and figures")
                _walk(holder, label, sections)
    if not sections:
        raise SourceResponseError(f"pmc: {pmcid} has an empty body", source="pmc")
    return FullText(pmcid=pmcid, licence=licence, sections=sections)
