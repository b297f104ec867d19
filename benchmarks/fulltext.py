"""Cost of reading full text: parse, chunk and embed per article, and the work added per answer.

    python benchmarks/fulltext.py --data ../shared/data/pmc_oa --repeat 2
    python benchmarks/fulltext.py --embed-per-article 8 --agreement --ask

Over the eight real JATS articles of ``../shared/data/pmc_oa`` (PMC open-access subset), per
article, best of ``--repeat`` runs each, what the product does when an answer reads the body:

* parse: :func:`medlit.sources.jats.parse_jats`;
* chunk: :func:`medlit.cache.chunking.chunk_article` (the whole list: the study sections'
  chunks, ``study`` in the table) and :func:`~medlit.cache.chunking.embedded_chunks`, the
  choice of the Results chunks tier 2 embeds for the question (BM25 over the article's Results
  chunks, at most ``fulltext.embed_per_article``: ``embedded`` in the table);
* embed: those chosen chunks, with the default ONNX MiniLM on ``--threads`` intra-op threads
  (1: one core).

The question is the one an answer would ask: for the EPIC article (``6605965a``) the question
whose answer is only in its Results (oral contraceptives and colorectal cancer in
pre-menopausal women); for the others the article's title. The target is parse + chunk + embed
<= 1 s of CPU per article on one core.

Added latency per answer: what ``read_full_text`` adds to an answer in this process for the
``--per-answer`` (``fulltext.max_per_answer``, 3) costliest articles: parse, then the tier-2
write with the question (:meth:`medlit.cache.EvidenceCache.add_articles`: chunk, choose,
embed, store; the article, held abstract-only since the search found it, is stored again with
its body, its abstract's vectors coming from the product's memoised embedder) into a real
SQLite store, and the chunk search over them. Then a second question on the same articles:
only its picks tier 2 lacks are embedded. The network time of ``efetch db=pmc`` is not in it
(one request per article under the shared E-utilities limit: at 3/s, at least 0.33 s apart,
on NCBI's own response time). The import of ``bm25s`` (once per process) is printed apart.

``--ask`` also asks the EPIC question end to end (:class:`medlit.assistant.Assistant`, a fresh
home each time, the fake E-utilities server of the tests serving the eight articles on
loopback, a fake LLM) with ``fulltext.mode`` ``auto`` and ``off``, and prints the ``read_full_text``
step's time (fetch on loopback, parse, chunk, choose, embed, store, search) and both totals.

``--agreement`` also measures what the cap gives up: for each article it embeds every Results
chunk, takes the ``passages_per_article`` (4) the embedding ranks closest to the question among
them all (what the answer would pick with no cap), and prints the share of those the BM25 choice
of 4 to 12 chunks holds, and whether the EPIC chunk with the answer is chosen.

Wall time moves with the machine's load (printed: on a shared machine every figure scales with
it); the CPU time of this process (one embedding thread: what one core spends) is printed
beside it and is the figure the target is read on.

Last line: ``parse_cpu_ms_mean=... chunk_cpu_ms_mean=... embed_cpu_ms_mean=... chunks_mean=...
embedded_mean=... per_article_cpu_ms_mean=... per_article_cpu_ms_max=... answer_added_ms=...
answer_added_cpu_ms=... second_question_ms=... bm25s_import_ms=... [ask_read_full_text_ms=...
ask_added_ms=...] load=...``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from lxml import etree

from medlit.cache import EvidenceCache
from medlit.cache.chunking import (
    FULL_TEXT_EMBEDDED,
    chunk_article,
    embedded_chunks,
    is_results_chunk,
    rank_lexically,
)
from medlit.config import CacheSettings
from medlit.embeddings.memo import MemoEmbedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.sources.jats import parse_jats
from medlit.storage.sqlite import SqliteStore
from medlit.types import AbstractSection, Article

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pmc_oa"
#: The question of the EPIC article whose answer is only in its Results (issue 48).
QUESTIONS = {
    "6605965a": "Is oral contraceptive use associated with colorectal cancer risk in "
    "pre-menopausal women?",
}
#: A second question on the same articles (the tier-2 top-up of an answer that follows).
SECOND = "What were the adverse effects and how many participants dropped out?"


def _best(fn, repeat: int):  # type: ignore[no-untyped-def]
    """(best wall ms, best CPU ms of this process, result) over ``repeat`` runs."""
    best, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best * 1000.0, best_cpu * 1000.0, out


def _words(element: etree._Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _record(path: Path) -> Article:
    """The article's PubMed-like record from the JATS front matter: PMID, title, abstract."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(path.read_bytes(), parser)
    pmid = next(
        (n.text.strip() for n in root.iter("article-id") if n.get("pub-id-type") == "pmid"),
        path.stem,
    )
    abstract = root.find(".//front//abstract")
    sections: list[AbstractSection] = []
    if abstract is not None:
        for sec in abstract.findall("sec") or [abstract]:
            text = " ".join(_words(p) for p in sec.iter("p"))
            if text:
                sections.append(AbstractSection(label=_words(sec.find("title")), text=text))
    return Article(pmid=pmid, title=_words(root.find(".//front//article-title")), abstract=sections)


def _answer(files, records, questions, worst, embedder, k):  # type: ignore[no-untyped-def]
    """(wall ms, CPU ms, second question's wall ms) of what one answer adds (see docstring)."""
    with tempfile.TemporaryDirectory() as tmp, SqliteStore(Path(tmp) / "b.sqlite3") as store:
        cache = EvidenceCache(store, CacheSettings())
        cache.add_articles([records[i] for i in worst], embedder)  # found by the search
        query = embedder.embed([questions[worst[0]]])[0]
        start, cpu = time.perf_counter(), time.process_time()
        read = [
            records[i].model_copy(update={"full_text": parse_jats(files[i].read_bytes())})
            for i in worst
        ]
        cache.add_articles(read, embedder, question=questions[worst[0]], full_text_chunks=k)
        cache.search_chunks(np.asarray(query, dtype=np.float32), 60)
        added = (time.perf_counter() - start) * 1000.0
        added_cpu = (time.process_time() - cpu) * 1000.0
        start = time.perf_counter()
        cache.add_articles(read, embedder, question=SECOND, full_text_chunks=k)
        second = (time.perf_counter() - start) * 1000.0
    return added, added_cpu, second


#: Words of the EPIC Results passage that holds the answer.
EPIC_ANSWER = "pre- or peri-menopausal women (HR, 1.19; 95% CI: 0.96–1.48)"
CAPS = (4, 5, 6, 7, 8, 10, 12)


def _agreement(articles, questions, embedder, passages: int = 4) -> None:  # type: ignore[no-untyped-def]
    """Share of the embedding's uncapped picks that each cap's BM25 choice holds."""
    held = {cap: 0 for cap in CAPS}
    total = 0
    epic: dict[int, bool] = {}
    for article, question in zip(articles, questions, strict=True):
        results = [c for c in chunk_article(article) if is_results_chunk(c)]
        vectors = embedder.embed([c.text for c in results])
        query = embedder.embed([question])[0]
        best = set(np.argsort(-(vectors @ query))[:passages].tolist())
        order = rank_lexically(question, [c.text for c in results])
        total += len(best)
        for cap in CAPS:
            held[cap] += len(best & set(order[:cap]))
            if any(EPIC_ANSWER in c.text for c in results):
                epic[cap] = any(EPIC_ANSWER in results[i].text for i in order[:cap])
    print(f"\nshare of the embedding's {passages} uncapped picks that the BM25 choice holds:")
    for cap in CAPS:
        found = {True: "chosen", False: "NOT chosen"}.get(epic.get(cap), "")
        print(f"  {cap:>2} chunks: {held[cap] / total:.2f}   EPIC answer chunk {found}")


def _ask(files: list[Path]) -> dict[str, dict[str, float]]:
    """The EPIC question's ``timings_ms`` with full text (``auto``) and without (``off``), after
    a first ask that loads the model (not counted)."""
    import asyncio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fakes
    from tests.fakes.eutils_server import FakeEutils
    from tests.fakes.evidence_llm import EvidenceResponder
    from tests.fakes.fixtures import sample_articles
    from tests.fakes.llm_server import FakeLLMServer

    from medlit.assistant import Assistant
    from medlit.config import Settings

    async def ask(settings: Settings) -> dict[str, float]:
        async with Assistant(settings) as assistant:
            result = await assistant.ask(QUESTIONS["6605965a"])
        return result.timings_ms

    out: dict[str, dict[str, float]] = {}
    with (
        FakeEutils(articles=sample_articles(), rate_limit=None, rate_limit_with_key=None) as eu,
        FakeLLMServer() as llm,
    ):
        llm.responder = EvidenceResponder(lambda pmids: "No")
        for path in files:
            eu.add_jats(path.read_bytes())
        for mode in ("warm-up", "auto", "off"):
            with tempfile.TemporaryDirectory() as home:
                settings = Settings(home=Path(home))
                settings.pubmed.base_url = eu.base_url
                settings.pubmed.requests_per_second = 50.0
                settings.fulltext.mode = "off" if mode == "warm-up" else mode  # type: ignore[assignment]
                settings.fulltext.europepmc_fallback = False
                settings.agent.min_docs = 2
                settings.agent.fetch_per_round = 5
                settings.llm.base_url = llm.base_url
                settings.llm.model = "fake-model"
                out[mode] = asyncio.run(ask(settings))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of .nxml files")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measure (best kept)")
    parser.add_argument("--threads", type=int, default=1, help="embedding intra-op threads")
    parser.add_argument("--per-answer", type=int, default=3, help="full texts one answer reads")
    parser.add_argument(
        "--embed-per-article",
        type=int,
        default=FULL_TEXT_EMBEDDED,
        help="fulltext.embed_per_article: Results chunks embedded per article",
    )
    parser.add_argument(
        "--ask",
        action="store_true",
        help="also time the EPIC question end to end with full text auto and off (fakes)",
    )
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="also embed every Results chunk and print what each cap keeps of the uncapped picks",
    )
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("*.nxml"))
    if not files:
        sys.exit(f"no .nxml files in {args.data} (needs ../shared/data/pmc_oa)")
    start = time.perf_counter()
    importlib.import_module("bm25s")  # what the first full text of a process pays once
    import_ms = (time.perf_counter() - start) * 1000.0
    embedder = OnnxEmbedder(threads=args.threads)
    embedder.embed(["warm up the model"])  # the model load is not an article's cost
    k = args.embed_per_article
    print(
        f"{'article':<24} {'KB':>4} {'study':>6} {'embedded':>9} {'parse':>6} {'chunk':>6} "
        f"{'embed':>6} {'cpu':>6} {'wall':>6}   (ms; parse, chunk, embed: CPU of this process)"
    )
    rows, records, questions, read = [], [], [], []
    for path in files:
        data = path.read_bytes()
        record = _record(path)
        question = QUESTIONS.get(path.stem, record.title)
        records.append(record)
        questions.append(question)
        parse_ms, parse_cpu, full = _best(lambda data=data: parse_jats(data), args.repeat)
        article = record.model_copy(update={"full_text": full})
        read.append(article)

        def chunk(article: Article = article, question: str = question) -> list:  # type: ignore[type-arg]
            return [c for c in embedded_chunks(chunk_article(article), question, k)]

        chunk_ms, chunk_cpu, chosen = _best(chunk, args.repeat)
        study = sum(1 for c in chunk_article(article) if c.from_full_text)
        body = [c.text for c in chosen if c.from_full_text]
        embed_ms, embed_cpu, _ = _best(lambda body=body: embedder.embed(body), args.repeat)
        total = parse_ms + chunk_ms + embed_ms
        cpu = parse_cpu + chunk_cpu + embed_cpu
        rows.append((parse_cpu, chunk_cpu, embed_cpu, study, len(body), total, cpu))
        print(
            f"{path.name:<24} {len(data) // 1024:>4} {study:>6} {len(body):>9} "
            f"{parse_cpu:>6.1f} {chunk_cpu:>6.1f} {embed_cpu:>6.0f} {cpu:>6.0f} {total:>6.0f}"
        )

    worst = sorted(range(len(rows)), key=lambda i: -rows[i][6])[: args.per_answer]
    memo = MemoEmbedder(embedder)  # the product's embedder: identical texts embedded once
    added, added_cpu, second = _answer(files, records, questions, worst, memo, k)
    if args.agreement:
        _agreement(read, questions, embedder)
    ask_added = ask_step = 0.0
    if args.ask:
        timings = _ask(files)
        auto, off = timings["auto"], timings["off"]
        ask_step = auto.get("read_full_text", 0.0)
        ask_added = auto["total"] - off["total"]
        steps = sorted(set(auto) | set(off), key=lambda k: -abs(auto.get(k, 0) - off.get(k, 0)))
        print("\nthe EPIC question end to end (ms): step, with full text, without")
        for step in [*[k for k in steps if k != "total"][:5], "total"]:
            print(f"  {step:<16} {auto.get(step, 0):>8.0f} {off.get(step, 0):>8.0f}")
    load = os.getloadavg()[0]
    n = len(rows)

    def mean(i: int) -> float:
        return sum(r[i] for r in rows) / n

    print(
        f"\n{n} articles; at most {k} Results chunks embedded per article; embedding on "
        f"{args.threads} thread(s); load average {load:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"an answer reading the {args.per_answer} costliest full texts adds {added:.0f} ms "
        f"({added_cpu:.0f} ms CPU) in-process (parse, chunk, choose, embed, store, search; "
        f"network not included); a second question on them adds {second:.0f} ms; "
        f"importing bm25s (once per process) {import_ms:.0f} ms"
    )
    print(
        f"parse_cpu_ms_mean={mean(0):.1f} chunk_cpu_ms_mean={mean(1):.1f} "
        f"embed_cpu_ms_mean={mean(2):.0f} chunks_mean={mean(3):.1f} embedded_mean={mean(4):.1f} "
        f"per_article_cpu_ms_mean={mean(6):.0f} "
        f"per_article_cpu_ms_max={max(r[6] for r in rows):.0f} "
        f"answer_added_ms={added:.0f} answer_added_cpu_ms={added_cpu:.0f} "
        f"second_question_ms={second:.0f} bm25s_import_ms={import_ms:.0f} "
        + (
            f"ask_read_full_text_ms={ask_step:.0f} ask_added_ms={ask_added:.0f} "
            if args.ask
            else ""
        )
        + f"load={load:.1f}"
    )


if __name__ == "__main__":
    main()
