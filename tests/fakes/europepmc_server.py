"""A fake Europe PMC REST server on loopback (``/search``, JSON, cursorMark paging).

Responses have the real shape of ``../shared/data/europepmc/search_cancer_core.json``
(``version, hitCount, nextCursorMark, nextPageUrl, request, resultList.result[...]``). Serve
:class:`~medlit.types.Article` objects (rendered as ``core`` results) and/or raw result dicts
taken from real responses::

    with FakeEuropePMC(articles=[...], results=json.load(f)["resultList"]["result"]) as fake:
        settings.europepmc.base_url = fake.base_url
        fake.enqueue(Fault.status(503))          # faults as in tests.fakes.eutils_server
        fake.served()                            # 200 answers so far

Matching is the same simple word match as the E-utilities fake; a ``PUB_YEAR:[a TO b]``
clause filters by year, a ``CREATION_DATE:[YYYY-MM-DD TO YYYY-MM-DD]`` clause (``*`` for an
open end) by the result's ``dateOfCreation`` (a result without one is outside every such
window). :meth:`FakeEuropePMC.add_article` adds a record with its creation date.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from medlit.types import Article
from tests.fakes.boolean_query import Term, matches, parse
from tests.fakes.eutils_server import _STOP, _WORD, Fault, SeenRequest

__all__ = ["FakeEuropePMC", "article_to_result"]


def article_to_result(article: Article) -> dict[str, Any]:
    """An Article as a Europe PMC ``core`` result entry."""
    abstract = "".join(
        (f"<h4>{s.label.title()}</h4>" if s.label else "") + s.text for s in article.abstract
    )
    result: dict[str, Any] = {
        "id": article.pmid or article.doi or article.title[:20],
        "source": "MED" if article.pmid else "PPR",
        "title": article.title,
        "authorString": ", ".join(article.authors) + ("." if article.authors else ""),
        "authorList": {"author": [{"fullName": a} for a in article.authors]},
        "journalInfo": {
            "dateOfPublication": article.pub_date,
            "yearOfPublication": article.year,
            "journal": {"title": article.journal},
        },
        "pubYear": str(article.year) if article.year else None,
        "abstractText": abstract or None,
        "language": article.language or "eng",
        "pubTypeList": {"pubType": article.publication_types},
        "isOpenAccess": "Y" if article.open_access else "N",
        "citedByCount": article.citation_count or 0,
    }
    if article.pmid:
        result["pmid"] = article.pmid
    if article.doi:
        result["doi"] = article.doi
    if article.pmcid:
        result["pmcid"] = article.pmcid
    if article.mesh_terms:
        result["meshHeadingList"] = {
            "meshHeading": [{"majorTopic_YN": "N", "descriptorName": m} for m in article.mesh_terms]
        }
    return {k: v for k, v in result.items() if v is not None}


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str) -> int | None:
    if cursor == "*":
        return 0
    try:
        raw = base64.b64decode(cursor.encode(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return int(raw[7:]) if raw.startswith("offset:") and raw[7:].isdigit() else None


class FakeEuropePMC:
    """A threaded Europe PMC ``search`` endpoint on 127.0.0.1.

    Args:
        articles: records to serve, rendered as core results.
        results: raw result dicts (e.g. from a real response) served as they are.
        rate_limit: requests allowed in any one-second window (None: no limit).
    """

    def __init__(
        self,
        articles: Iterable[Article] = (),
        *,
        results: Iterable[dict[str, Any]] = (),
        rate_limit: int | None = None,
    ) -> None:
        self.results = [article_to_result(a) for a in articles] + list(results)
        self.rate_limit = rate_limit
        self.full_texts: dict[str, bytes] = {}  # "PMC123" -> JATS, served as fullTextXML
        self.history: list[SeenRequest] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The REST base URL to configure (``settings.europepmc.base_url``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/europepmc/webservices/rest/"

    def start(self) -> FakeEuropePMC:
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

    def __enter__(self) -> FakeEuropePMC:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def enqueue(self, fault: Fault, *, times: int = 1) -> None:
        """Make the next ``times`` requests misbehave."""
        with self._lock:
            self._faults.extend([fault] * times)

    def served(self) -> int:
        """Requests answered with 200."""
        return sum(1 for r in self.history if r.status == 200)

    def add_article(self, article: Article, *, created: date) -> None:
        """Serve ``article`` (from now on), created in Europe PMC on ``created``."""
        result = article_to_result(article)
        result["dateOfCreation"] = result["firstIndexDate"] = created.isoformat()
        with self._lock:
            self.results.append(result)

    def _match(self, query: str) -> list[dict[str, Any]]:
        years = re.search(r"PUB_YEAR:\[(\d+) TO (\d+)\]", query)
        query = re.sub(r"\(?PUB_YEAR:\[[^\]]*\]\)?", " ", query)
        created = re.search(r"CREATION_DATE:\[(\S+) TO (\S+)\]", query)
        query = re.sub(r"\(?CREATION_DATE:\[[^\]]*\]\)?", " ", query)
        query = re.sub(r"(\s+AND)+\s*$", "", query.strip())
        tree = parse(query, lambda text: [w for w in _WORD.findall(text.lower()) if w not in _STOP])
        texts = [
            " ".join(str(r.get(k, "")) for k in ("title", "abstractText")).lower()
            for r in self.results
        ]
        spaced = [f" {' '.join(_WORD.findall(text))} " for text in texts]
        vocabulary = {w for text in spaced for w in text.split()}

        def known(term: Term) -> bool:
            if term.phrase:
                return any(f" {term.text} " in text for text in spaced)
            return term.text in vocabulary

        matched = []
        for result, text in zip(self.results, spaced, strict=True):
            tokens = set(text.split())
            if tree is not None:
                hit, _ = matches(
                    tree,
                    lambda t, text=text, tokens=tokens: (  # type: ignore[misc]
                        f" {t.text} " in text if t.phrase else t.text in tokens
                    ),
                    known,
                )
                if hit is False:
                    continue
            year = int(result.get("pubYear") or 0)
            if years and not int(years.group(1)) <= year <= int(years.group(2)):
                continue
            if created is not None:
                day = str(result.get("dateOfCreation") or "")
                low, high = (g if g != "*" else "" for g in created.groups())
                if not day or day < low or (high and day > high):
                    continue
            matched.append(result)
        return matched

    def handle(self, path: str, params: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        """Answer one request: (status, JSON body, extra headers)."""
        seen = SeenRequest(time.time(), "GET", path.rstrip("/").rsplit("/", 1)[-1], params)
        with self._lock:
            self.history.append(seen)
            recent = [r for r in self.history if seen.t - r.t < 1.0]
            fault = self._faults.popleft() if self._faults else None
        if self.rate_limit is not None and len(recent) > self.rate_limit:
            seen.status = 429
            return 429, b'{"errMsg": "Too many requests"}', {"Retry-After": "1"}
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.seconds)
        elif fault is not None and fault.kind in ("status", "body"):
            seen.status = fault.code
            return fault.code, fault.payload, fault.headers
        if seen.endpoint == "fullTextXML":  # GET {base}/PMC123/fullTextXML
            pmcid = path.rstrip("/").rsplit("/", 2)[-2].upper()
            jats = self.full_texts.get(pmcid)
            seen.status = 200 if jats is not None else 404
            if jats is None:
                return 404, b"", {}
            return 200, jats, {}
        if seen.endpoint != "search":
            seen.status = 404
            return 404, b'{"errMsg": "not found"}', {}
        offset = _offset(params.get("cursorMark", "*"))
        if offset is None:
            seen.status = 400
            return 400, b'{"errMsg": "Invalid cursorMark"}', {}
        size = int(params.get("pageSize", "25") or 25)
        matched = self._match(params.get("query", ""))
        page = matched[offset : offset + size]
        body: dict[str, Any] = {"version": "6.9", "hitCount": len(matched)}
        if offset + size < len(matched):
            body["nextCursorMark"] = _cursor(offset + size)
            body["nextPageUrl"] = (
                self.base_url
                + "search?"
                + urlencode({**params, "cursorMark": body["nextCursorMark"]})
            )
        body["request"] = {
            "queryString": params.get("query", ""),
            "resultType": params.get("resultType", "lite"),
            "cursorMark": params.get("cursorMark", "*"),
            "pageSize": size,
            "sort": params.get("sort", ""),
            "synonym": False,
        }
        body["resultList"] = {"result": page}
        data = json.dumps(body).encode()
        if fault is not None and fault.kind == "truncated":
            data = data[: len(data) // 2]
        seen.status = 200
        return 200, data, {}


def _make_handler(fake: FakeEuropePMC) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            status, body, headers = fake.handle(parts.path, params)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=UTF-8")
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler
