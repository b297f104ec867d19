"""A fake NCBI E-utilities server on loopback, speaking the real wire formats.

It serves a corpus of PubMed XML records through ``esearch.fcgi`` (XML, or JSON with
``retmode=json``; ``usehistory=y`` gives a WebEnv/query_key) and ``efetch.fcgi`` (GET or POST,
by ``id=`` list or by WebEnv), enforces NCBI's rate limit with HTTP 429 like the real service
(3 requests in any one-second window, 10 with an ``api_key``), records every request it saw,
and injects faults on request.

Use it in a test::

    from tests.fakes.eutils_server import FakeEutils, Fault

    with FakeEutils.from_xml(path_to_pubmed_xml) as fake:        # or FakeEutils(articles=[...])
        settings.pubmed.base_url = fake.base_url                 # or MEDLIT_PUBMED_BASE_URL
        ...                                                      # run the code under test
        assert fake.served("efetch") == 1                        # requests answered 200
        assert fake.max_in_window(1.0) <= 3                      # rate limit held
        fake.enqueue(Fault.status(500), endpoint="esearch")      # next esearch answers 500
        fake.enqueue(Fault.delay(2.0))                           # next request waits 2 s
        fake.enqueue(Fault.truncated(), endpoint="efetch")       # next efetch body is cut short
        fake.enqueue(Fault.body(b"<eSearchResult><ERROR>x</ERROR></eSearchResult>"))

The pytest fixtures ``fake_eutils`` (the 500 PubMedQA articles when ``../shared/data`` is there,
else a small generated corpus) and ``make_fake_eutils`` (a factory taking ``articles=`` or
``xml_path=``) live in :mod:`tests.fakes.fixtures`.

From a shell (e.g. to try the CLI by hand)::

    python -m tests.fakes.eutils_server --port 8765 \
        --xml ../shared/data/pubmedqa/pqal_dev_pubmed.xml    # or --sample: a few made-up records
    MEDLIT_PUBMED_BASE_URL=http://127.0.0.1:8765/entrez/eutils/ medlit search "mammography"

Full text: :meth:`FakeEutils.add_jats` registers a PMC open-access article (JATS, e.g. the
eight of ``../shared/data/pmc_oa``): ``efetch db=pmc`` serves it inside ``<pmc-articleset>``
like PMC, ``elink dbfrom=pubmed db=pmc`` maps its PMID (link ``pubmed_pmc``), and its PubMed
record (built from the JATS front matter when the corpus has none) carries the PMCID in its
``ArticleIdList`` (unless ``pmcid_in_record=False``, the case elink is for).

Searching is a simple word match over title, abstract, MeSH terms and keywords (it is a fake):
words that appear nowhere in the corpus are reported as ``PhraseNotFound`` and ignored, like
PubMed does; ``match="all"`` (default) needs every remaining word, ``match="any"`` ranks by how
many words match. A quoted phrase (``"vitamin d"``) matches its words in that order. Field tags
(``[tiab]``) are ignored. A query in Boolean syntax (``OR``, ``NOT``, parentheses) is read as
PubMed reads it (:mod:`tests.fakes.boolean_query`), unknown words ignored.

Dates: ``mindate``/``maxdate`` filter by publication year, or, with ``datetype=edat``, by the
Entrez date (the record's ``History/PubMedPubDate[@PubStatus="entrez"]``, whole days, both
ends included, as PubMed does); a record without one is outside every entry-date window.
:meth:`FakeEutils.add_article` adds a record with its entry date, as a new article reaches
PubMed. A ``("2019"[dp] : "2021"[dp])`` clause of the term filters by publication year.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from lxml import etree

from medlit.types import AbstractSection, Article
from tests.fakes.boolean_query import Term, is_boolean, matches, parse, terms_of
from tests.fakes.pubmed_render import article_to_xml

__all__ = ["FakeEutils", "Fault", "SeenRequest"]

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

_STOP = {
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "in",
    "is",
    "it",
    "its",
    "not",
    "of",
    "on",
    "or",
    "the",
    "to",
    "was",
    "were",
    "what",
    "which",
    "with",
    "among",
    "than",
    "that",
    "this",
    "there",
    "how",
    "why",
    "who",
    "when",
}


def _folded(text: str) -> str:
    """``text`` without accents: PubMed finds "Sjögren" for "sjogren" and the reverse."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


_XML_DECL = b'<?xml version="1.0" ?>\n'
_ESEARCH_DOCTYPE = (
    b'<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
    b'"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n'
)
_EFETCH_DOCTYPE = (
    b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
_PMC_DOCTYPE = (
    b'<!DOCTYPE pmc-articleset PUBLIC "-//NLM//DTD ARTICLE SET 2.0//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pmc/articleset/nlm-articleset-2.0.dtd">\n'
)
_ELINK_DOCTYPE = (
    b'<!DOCTYPE eLinkResult PUBLIC "-//NLM//DTD elink 20101123//EN" '
    b'"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20101123/elink.dtd">\n'
)


@dataclass
class Fault:
    """One injected misbehaviour, used by the next matching request."""

    kind: Literal["status", "delay", "truncated", "body"]
    code: int = 200
    seconds: float = 0.0
    payload: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def status(cls, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Fault:
        """Answer with HTTP ``code`` (e.g. 500, 502, 429 with ``{"Retry-After": "1"}``)."""
        return cls("status", code=code, payload=body or b"server error", headers=headers or {})

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` before answering normally (to trigger client timeouts)."""
        return cls("delay", seconds=seconds)

    @classmethod
    def truncated(cls) -> Fault:
        """Answer 200 with the normal body cut in half (malformed XML)."""
        return cls("truncated")

    @classmethod
    def body(cls, payload: bytes, status: int = 200) -> Fault:
        """Answer with this exact body (an NCBI error document, say)."""
        return cls("body", code=status, payload=payload)


@dataclass
class SeenRequest:
    """A request as the fake received it."""

    t: float
    method: str
    endpoint: str
    params: dict[str, str]
    status: int = 0


class FakeEutils:
    """A threaded E-utilities server on 127.0.0.1.

    Args:
        articles: records to serve (rendered as PubMed XML).
        xml_path: a PubMed XML file whose records are served verbatim (may be combined).
        rate_limit: requests allowed in any one-second window without an api_key (None: off).
        rate_limit_with_key: the same with an ``api_key`` parameter.
        match: ``all`` (every known word must match) or ``any`` (ranked by matching words).
        port: port to bind (0: any free port).
    """

    def __init__(
        self,
        articles: Iterable[Article] = (),
        *,
        xml_path: Path | None = None,
        rate_limit: int | None = 3,
        rate_limit_with_key: int | None = 10,
        match: Literal["all", "any"] = "all",
        port: int = 0,
    ) -> None:
        self.records: dict[str, bytes] = {}
        self.years: dict[str, int] = {}
        self.entered: dict[str, date] = {}  # PMID -> Entrez date, where the record has one
        self._tokens: dict[str, set[str]] = {}
        self._texts: dict[str, str] = {}  # each record's words in order, for quoted phrases
        self.rate_limit = rate_limit
        self.rate_limit_with_key = rate_limit_with_key
        self.match = match
        self.history: list[SeenRequest] = []
        self._faults: deque[tuple[str | None, Fault]] = deque()
        self._lock = threading.Lock()
        self._recent: dict[str, deque[float]] = {}
        self._webenvs: dict[str, list[str]] = {}
        self.pmc: dict[str, bytes] = {}  # numeric PMCID -> JATS <article>
        self.pmc_of: dict[str, str] = {}  # PMID -> numeric PMCID (what elink answers)
        if xml_path is not None:
            self.add_xml(xml_path.read_bytes())
        for article in articles:
            self.add_xml(b"<PubmedArticleSet>" + article_to_xml(article) + b"</PubmedArticleSet>")
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- corpus ------------------------------------------------------------------------------

    @classmethod
    def from_xml(cls, path: Path, **kwargs: Any) -> FakeEutils:
        """A fake serving the records of one PubMed XML file."""
        return cls(xml_path=path, **kwargs)

    def add_xml(self, data: bytes) -> None:
        """Add every PubmedArticle/PubmedBookArticle of a PubmedArticleSet document."""
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        root = etree.fromstring(data, parser)
        for element in root:
            if element.tag not in ("PubmedArticle", "PubmedBookArticle"):
                continue
            pmid = (element.findtext(".//PMID") or "").strip()
            element.tail = None
            self.records[pmid] = etree.tostring(element, encoding="utf-8")
            text = " ".join(
                "".join(node.itertext())
                for node in element.iter(
                    "ArticleTitle", "AbstractText", "DescriptorName", "Keyword", "BookTitle"
                )
            )
            words = _WORD.findall(_folded(text.lower()))
            self._tokens[pmid] = set(words)
            self._texts[pmid] = f" {' '.join(words)} "
            year = element.findtext(".//PubDate/Year") or element.findtext(".//PubDate/MedlineDate")
            match = re.search(r"\d{4}", year or "")
            self.years[pmid] = int(match.group()) if match else 0
            entrez = element.find("PubmedData/History/PubMedPubDate[@PubStatus='entrez']")
            if entrez is not None:
                self.entered[pmid] = date(
                    int(entrez.findtext("Year") or 1),
                    int(entrez.findtext("Month") or 1),
                    int(entrez.findtext("Day") or 1),
                )

    def add_article(self, article: Article, *, entered: date | None = None) -> None:
        """Serve ``article`` (from now on), entered in PubMed on ``entered`` (default: never
        dated, outside every ``datetype=edat`` window)."""
        xml = article_to_xml(article, entered=entered)
        with self._lock:
            self.add_xml(b"<PubmedArticleSet>" + xml + b"</PubmedArticleSet>")

    def add_jats(self, data: bytes, *, pmcid_in_record: bool = True) -> str:
        """Serve a JATS article through ``efetch db=pmc`` and ``elink``; returns its PMID.

        Its PubMed record is the corpus's, with the PMCID added to its ArticleIdList, or one
        built from the JATS front matter (title, abstract sections, journal, year, authors,
        DOI) when the corpus has none.
        """
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        root = etree.fromstring(data, parser)
        ids = {
            (node.get("pub-id-type") or ""): (node.text or "").strip()
            for node in root.iter("article-id")
        }
        pmid, pmcid = ids.get("pmid", ""), ids.get("pmc", "").removeprefix("PMC")
        if not pmid or not pmcid:
            raise ValueError("a JATS article needs a pmid and a pmc article-id")
        self.pmc[pmcid] = etree.tostring(root, encoding="utf-8")
        self.pmc_of[pmid] = pmcid
        if pmid not in self.records:
            article = _article_from_front(root, pmid, ids.get("doi"))
            self.add_xml(b"<PubmedArticleSet>" + article_to_xml(article) + b"</PubmedArticleSet>")
        record = etree.fromstring(self.records[pmid], parser)
        id_list = record.find("PubmedData/ArticleIdList")
        if id_list is None:
            data_el = record.find("PubmedData")
            if data_el is None:
                data_el = etree.SubElement(record, "PubmedData")
            id_list = etree.SubElement(data_el, "ArticleIdList")
        for node in id_list.findall("ArticleId"):
            if node.get("IdType") == "pmc":
                id_list.remove(node)
        if pmcid_in_record:
            etree.SubElement(id_list, "ArticleId", IdType="pmc").text = f"PMC{pmcid}"
        self.records[pmid] = etree.tostring(record, encoding="utf-8")
        return pmid

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The E-utilities base URL to configure (``settings.pubmed.base_url``)."""
        return f"http://127.0.0.1:{self.port}/entrez/eutils/"

    def start(self) -> FakeEutils:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeEutils:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test controls -----------------------------------------------------------------------

    def enqueue(self, fault: Fault, *, endpoint: str | None = None, times: int = 1) -> None:
        """Make the next ``times`` requests (to ``endpoint``: esearch/efetch, or any) misbehave."""
        with self._lock:
            for _ in range(times):
                self._faults.append((endpoint, fault))

    def served(self, endpoint: str | None = None) -> int:
        """Requests answered with 200 (to ``endpoint``, or to any)."""
        return sum(1 for r in self.history if r.status == 200 and endpoint in (None, r.endpoint))

    def requests(self, endpoint: str | None = None) -> list[SeenRequest]:
        """Every request received (to ``endpoint``, or to any), in arrival order."""
        return [r for r in self.history if endpoint in (None, r.endpoint)]

    def max_in_window(self, window_s: float = 1.0, *, only_served: bool = False) -> int:
        """Most requests that arrived within any ``window_s``-second span."""
        times = sorted(r.t for r in self.history if not only_served or r.status == 200)
        best, start = 0, 0
        for end, t in enumerate(times):
            while t - times[start] >= window_s:
                start += 1
            best = max(best, end - start + 1)
        return best

    def reset(self) -> None:
        """Forget the history and pending faults."""
        with self._lock:
            self.history.clear()
            self._faults.clear()
            self._recent.clear()

    # -- request handling (called from server threads) ----------------------------------------

    def _take_fault(self, endpoint: str) -> Fault | None:
        with self._lock:
            for i, (wanted, fault) in enumerate(self._faults):
                if wanted in (None, endpoint):
                    del self._faults[i]
                    return fault
        return None

    def _admit(self, seen: SeenRequest) -> tuple[bool, int, int]:
        """Record the arrival; (allowed, limit, remaining) under NCBI's per-second limit."""
        key = seen.params.get("api_key", "")
        limit = self.rate_limit_with_key if key else self.rate_limit
        with self._lock:
            self.history.append(seen)
            recent = self._recent.setdefault(key, deque())
            while recent and seen.t - recent[0] >= 1.0:
                recent.popleft()
            recent.append(seen.t)
            if limit is None:
                return True, 0, 0
            return len(recent) <= limit, limit, max(limit - len(recent), 0)

    def handle(
        self, method: str, path: str, params: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        """Answer one request: (status, body, content type, extra headers)."""
        endpoint = path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".fcgi")
        seen = SeenRequest(time.time(), method, endpoint, params)
        allowed, limit, remaining = self._admit(seen)
        headers = {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(remaining)}
        if not allowed:
            seen.status = 429
            refusal = {
                "error": "API rate limit exceeded",
                "api-key": params.get("api_key", ""),
                "count": str(limit + 1),
                "limit": str(limit),
            }
            return 429, json.dumps(refusal).encode(), "application/json", headers
        fault = self._take_fault(endpoint)
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.seconds)
        if fault is not None and fault.kind == "status":
            seen.status = fault.code
            return fault.code, fault.payload, "text/plain", {**headers, **fault.headers}
        if fault is not None and fault.kind == "body":
            seen.status = fault.code
            return fault.code, fault.payload, "text/xml", headers
        if endpoint == "esearch":
            status, body, ctype = self._esearch(params)
        elif endpoint == "efetch" and params.get("db") == "pmc":
            status, body, ctype = self._efetch_pmc(params)
        elif endpoint == "efetch":
            status, body, ctype = self._efetch(params)
        elif endpoint == "elink":
            status, body, ctype = self._elink(params)
        else:
            status, body, ctype = 404, b"unknown E-utility", "text/plain"
        if fault is not None and fault.kind == "truncated":
            body = body[: max(len(body) // 2, 1)]
        seen.status = status
        return status, body, ctype, headers

    def search_ids(
        self,
        term: str,
        sort: str = "relevance",
        min_year: int | None = None,
        max_year: int | None = None,
        entered: tuple[date, date] | None = None,
    ) -> tuple[list[str], list[str]]:
        """PMIDs matching ``term`` (best first) and the words found nowhere in the corpus;
        ``entered``: only records whose Entrez date falls in that window (both ends in)."""
        ids, missing = self._matching_ids(term, sort, min_year, max_year)
        if entered is not None:
            low, high = entered
            ids = [p for p in ids if p in self.entered and low <= self.entered[p] <= high]
        return ids, missing

    def _matching_ids(
        self, term: str, sort: str, min_year: int | None, max_year: int | None
    ) -> tuple[list[str], list[str]]:
        span = _DP_RANGE.search(term)
        if span is not None:  # ("2019"[dp] : "2021"[dp]): a publication-year clause
            term = _DP_RANGE.sub(" ", term).replace("()", " ")
            term = re.sub(r"\)\s*AND\s*$", ")", term.strip()).strip()
            min_year = max(min_year or 0, int(span.group(1))) or None
            max_year = min(max_year or 9999, int(span.group(2)))
        if self.match == "all" and is_boolean(term):
            return self._boolean_ids(term, sort, min_year, max_year)
        any_mode = self.match == "any"
        cleaned = _folded(re.sub(r"\[[^\]]*\]", " ", term).lower())
        # A quoted phrase ("vitamin d") matches its words in that order, stop words included.
        phrases = [f" {' '.join(_WORD.findall(p))} " for p in re.findall(r'"([^"]*)"', cleaned)]
        cleaned = re.sub(r'"[^"]*"', " ", cleaned)
        words = [w for w in _WORD.findall(cleaned) if w not in _STOP]
        vocabulary: set[str] = set().union(*self._tokens.values()) if self._tokens else set()
        missing = [w for w in words if w not in vocabulary]
        known = [w for w in dict.fromkeys(words) if w in vocabulary]
        for phrase in dict.fromkeys(p for p in phrases if p.strip()):
            if any(phrase in text for text in self._texts.values()):
                known.append(phrase)
            else:
                missing.append(phrase.strip())
        scored: list[tuple[int, int, str]] = []
        for pmid, tokens in self._tokens.items():
            year = self.years.get(pmid, 0)
            if min_year is not None and year < min_year:
                continue
            if max_year is not None and year > max_year:
                continue
            text = self._texts[pmid]
            hits = sum(1 for w in known if (w in text if w.startswith(" ") else w in tokens))
            if not known or hits == 0 or (not any_mode and hits < len(known)):
                continue
            scored.append((hits, year, pmid))
        if sort == "pub_date":
            scored.sort(key=lambda s: (s[1], int(s[2]) if s[2].isdigit() else 0), reverse=True)
        else:
            scored.sort(key=lambda s: (s[0], int(s[2]) if s[2].isdigit() else 0), reverse=True)
        return [pmid for _, _, pmid in scored], missing

    def _boolean_ids(
        self, term: str, sort: str, min_year: int | None, max_year: int | None
    ) -> tuple[list[str], list[str]]:
        """``search_ids`` of a Boolean query (:mod:`tests.fakes.boolean_query`)."""
        tree = parse(
            term, lambda text: [w for w in _WORD.findall(_folded(text.lower())) if w not in _STOP]
        )
        vocabulary: set[str] = set().union(*self._tokens.values()) if self._tokens else set()

        def found_in(text: str, tokens: set[str]) -> Callable[[Term], bool]:
            return lambda t: f" {t.text} " in text if t.phrase else t.text in tokens

        def known(t: Term) -> bool:
            if t.phrase:
                return any(f" {t.text} " in text for text in self._texts.values())
            return t.text in vocabulary

        missing = [t.text for t in terms_of(tree) if not known(t)]
        scored: list[tuple[int, int, str]] = []
        for pmid, tokens in self._tokens.items() if tree is not None else ():
            year = self.years.get(pmid, 0)
            if (min_year is not None and year < min_year) or (
                max_year is not None and year > max_year
            ):
                continue
            hit, hits = matches(tree, found_in(self._texts[pmid], tokens), known)  # type: ignore[arg-type]
            if hit:
                scored.append((hits, year, pmid))
        first = 1 if sort == "pub_date" else 0  # the year, or how many terms matched
        scored.sort(key=lambda s: (s[first], int(s[2]) if s[2].isdigit() else 0), reverse=True)
        return [pmid for _, _, pmid in scored], list(dict.fromkeys(missing))

    def _esearch(self, params: dict[str, str]) -> tuple[int, bytes, str]:
        term = params.get("term", "")
        if params.get("db", "pubmed") != "pubmed":
            return _esearch_error(f"Invalid db name specified: {params.get('db')}", params)
        if not term.strip():
            return _esearch_error("Empty term and query_key - nothing todo", params)
        sort = params.get("sort", "relevance")
        if params.get("datetype") == "edat":
            window = (
                _day(params.get("mindate"), date.min),
                _day(params.get("maxdate"), date.max),
            )
            ids, missing = self.search_ids(term, sort, entered=window)
        else:
            min_year = _year(params.get("mindate"))
            max_year = _year(params.get("maxdate"))
            ids, missing = self.search_ids(term, sort, min_year, max_year)
        retstart = int(params.get("retstart", "0") or 0)
        retmax = int(params.get("retmax", "20") or 20)
        page = ids[retstart : retstart + retmax]
        webenv = query_key = None
        if params.get("usehistory") == "y":
            with self._lock:
                webenv = f"MCID_fake{len(self._webenvs) + 1:08d}"
                self._webenvs[webenv] = ids
            query_key = "1"
        if params.get("retmode") == "json":
            result: dict[str, Any] = {
                "count": str(len(ids)),
                "retmax": str(len(page)),
                "retstart": str(retstart),
                "idlist": page,
                "translationset": [],
                "querytranslation": term,
            }
            if webenv:
                result["querykey"], result["webenv"] = query_key, webenv
            if missing:
                result["errorlist"] = {"phrasesnotfound": missing, "fieldsnotfound": []}
            if not ids:
                result["warninglist"] = {"outputmessages": ["No items found."]}
            body = {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}
            return 200, json.dumps(body, indent=4).encode(), "application/json; charset=UTF-8"
        parts = [
            f"<Count>{len(ids)}</Count><RetMax>{len(page)}</RetMax><RetStart>{retstart}</RetStart>"
        ]
        if webenv:
            parts.append(f"<QueryKey>{query_key}</QueryKey><WebEnv>{webenv}</WebEnv>")
        parts.append("<IdList>\n" + "".join(f"<Id>{i}</Id>\n" for i in page) + "</IdList>")
        parts.append(f"<TranslationSet/><QueryTranslation>{_esc(term)}</QueryTranslation>")
        if missing:
            parts.append(
                "<ErrorList>"
                + "".join(f"<PhraseNotFound>{_esc(w)}</PhraseNotFound>" for w in missing)
                + "</ErrorList>"
            )
        if not ids:
            parts.append(
                "<WarningList><OutputMessage>No items found.</OutputMessage></WarningList>"
            )
        body_xml = "<eSearchResult>" + "".join(parts) + "</eSearchResult>\n"
        return 200, _XML_DECL + _ESEARCH_DOCTYPE + body_xml.encode(), "text/xml; charset=UTF-8"

    def _efetch(self, params: dict[str, str]) -> tuple[int, bytes, str]:
        if params.get("db", "pubmed") != "pubmed":
            return 400, b"<eFetchResult><ERROR>Invalid db name</ERROR></eFetchResult>", "text/xml"
        if params.get("WebEnv"):
            ids = self._webenvs.get(params["WebEnv"])
            if ids is None:
                body = b"<eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>"
                return 200, _XML_DECL + body, "text/xml"
            retstart = int(params.get("retstart", "0") or 0)
            ids = ids[retstart : retstart + int(params.get("retmax", "20") or 20)]
        else:
            ids = [i.strip() for i in params.get("id", "").split(",") if i.strip()]
            if not ids:
                body = b"<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>"
                return 200, _XML_DECL + body, "text/xml"
        records = [self.records[i] for i in ids if i in self.records]
        body = (
            _XML_DECL
            + _EFETCH_DOCTYPE
            + b"<PubmedArticleSet>\n"
            + b"\n".join(records)
            + b"\n</PubmedArticleSet>\n"
        )
        return 200, body, "text/xml; charset=UTF-8"

    def _efetch_pmc(self, params: dict[str, str]) -> tuple[int, bytes, str]:
        ids = [i.strip().removeprefix("PMC") for i in params.get("id", "").split(",")]
        ids = [i for i in ids if i]
        if not ids:
            body = b"<eFetchResult><ERROR>Empty id list - nothing todo</ERROR></eFetchResult>"
            return 200, _XML_DECL + body, "text/xml"
        parts = [
            self.pmc.get(i)
            or f'<error id="{_esc(i)}">The following PMCID is not available: {_esc(i)}'
            f"</error>".encode()
            for i in ids
        ]
        body = (
            _XML_DECL
            + _PMC_DOCTYPE
            + b"<pmc-articleset>"
            + b"\n".join(parts)
            + b"</pmc-articleset>\n"
        )
        return 200, body, "text/xml; charset=UTF-8"

    def _elink(self, params: dict[str, str]) -> tuple[int, bytes, str]:
        if params.get("dbfrom") != "pubmed" or params.get("db") != "pmc":
            return (
                200,
                _XML_DECL + b"<eLinkResult><ERROR>unsupported link</ERROR></eLinkResult>",
                ("text/xml"),
            )
        sets = []
        for pmid in [i.strip() for i in params.get("id", "").split(",") if i.strip()]:
            links = ""
            if pmid in self.pmc_of:
                links = (
                    "<LinkSetDb><DbTo>pmc</DbTo><LinkName>pubmed_pmc</LinkName>"
                    f"<Link><Id>{self.pmc_of[pmid]}</Id></Link></LinkSetDb>"
                )
            sets.append(
                f"<LinkSet><DbFrom>pubmed</DbFrom><IdList><Id>{_esc(pmid)}</Id></IdList>"
                f"{links}</LinkSet>"
            )
        body = "<eLinkResult>" + "".join(sets) + "</eLinkResult>\n"
        return 200, _XML_DECL + _ELINK_DOCTYPE + body.encode(), "text/xml; charset=UTF-8"


def _article_from_front(root: Any, pmid: str, doi: str | None) -> Article:
    """The PubMed record of a JATS article, from its front matter (as PubMed indexes it)."""
    from medlit.sources.jats import _text

    meta = root.find(".//article-meta")
    title = _text(meta.find("title-group/article-title")) if meta is not None else ""
    sections = []
    abstract = meta.find("abstract") if meta is not None else None
    if abstract is not None:
        secs = abstract.findall("sec")
        for sec in secs or [abstract]:
            label = _text(sec.find("title")).rstrip(":").strip().upper() or None
            text = " ".join(_text(p) for p in sec.findall("p"))
            if text:
                sections.append(AbstractSection(label=label if secs else None, text=text))
    authors = []
    for name in root.iterfind(".//contrib[@contrib-type='author']/name"):
        given = "".join(
            w[0] for w in (name.findtext("given-names") or "").replace("-", " ").split()
        )
        authors.append(f"{name.findtext('surname') or ''} {given}".strip())
    year_text = root.findtext(".//pub-date/year") or ""
    return Article(
        pmid=pmid,
        doi=doi.lower() if doi else None,
        title=title,
        abstract=sections,
        authors=authors,
        journal=root.findtext(".//journal-title") or None,
        year=int(year_text) if year_text.isdigit() else None,
        pub_date=year_text or None,
        publication_types=["Journal Article"],
        language="eng",
    )


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DP_RANGE = re.compile(r'\(?\s*"(\d{4})"\[dp\]\s*:\s*"(\d{4})"\[dp\]\s*\)?')


def _day(value: str | None, default: date) -> date:
    """An E-utilities date (YYYY/MM/DD, YYYY/MM or YYYY) as a day; the first day of a month
    or year (a test asks with whole days)."""
    parts = [int(p) for p in re.findall(r"\d+", value or "")[:3]]
    if not parts:
        return default
    month, day = [*parts[1:], 1, 1][:2]
    return date(parts[0], month, day)


def _year(value: str | None) -> int | None:
    match = re.match(r"\s*(\d{4})", value or "")
    return int(match.group(1)) if match else None


def _esearch_error(message: str, params: dict[str, str]) -> tuple[int, bytes, str]:
    if params.get("retmode") == "json":
        body = {
            "header": {"type": "esearch", "version": "0.3"},
            "esearchresult": {"ERROR": message},
        }
        return 200, json.dumps(body).encode(), "application/json"
    xml = f"<eSearchResult>\n  <ERROR>{_esc(message)}</ERROR>\n</eSearchResult>\n"
    return 200, _XML_DECL + xml.encode(), "text/xml"


def _make_handler(fake: FakeEutils) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return  # keep test output clean

        def _answer(self, params: dict[str, str]) -> None:
            status, body, ctype, headers = fake.handle(
                self.command, urlsplit(self.path).path, params
            )
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): nothing to do

        def do_GET(self) -> None:
            self._answer(_flat(parse_qs(urlsplit(self.path).query)))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = self.rfile.read(length).decode()
            params = _flat(parse_qs(urlsplit(self.path).query))
            params.update(_flat(parse_qs(form)))
            self._answer(params)

    return Handler


def _flat(query: dict[str, list[str]]) -> dict[str, str]:
    return {key: values[-1] for key, values in query.items()}


def main(argv: Sequence[str] | None = None) -> None:
    """Run the fake in the foreground (``python -m tests.fakes.eutils_server``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xml", type=Path, action="append", default=[], help="PubMed XML file")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--no-rate-limit", action="store_true")
    parser.add_argument("--match", choices=["all", "any"], default="all")
    parser.add_argument(
        "--sample", action="store_true", help="serve a few generated aspirin/stroke records"
    )
    parser.add_argument("--jats", type=Path, action="append", default=[], help="PMC JATS file")
    args = parser.parse_args(argv)
    fake = FakeEutils(
        rate_limit=None if args.no_rate_limit else 3,
        rate_limit_with_key=None if args.no_rate_limit else 10,
        match=args.match,
        port=args.port,
    )
    for path in args.xml:
        fake.add_xml(path.read_bytes())
    if args.sample:
        from tests.fakes.sample_corpus import sample_corpus

        for article in sample_corpus():
            fake.add_xml(b"<PubmedArticleSet>" + article_to_xml(article) + b"</PubmedArticleSet>")
    for path in args.jats:
        fake.add_jats(path.read_bytes())
    print(f"fake E-utilities with {len(fake.records)} records at {fake.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        fake._server.serve_forever()


if __name__ == "__main__":
    main()
