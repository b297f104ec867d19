"""A hostile user's inputs, run through the real CLI: one line on stderr, the documented exit
code, never a traceback, and the store intact afterwards (issue 11).

Every case is a ``medlit`` subprocess (``python -m medlit``) against a data directory that
already holds a cached answer and a local corpus, and the fake E-utilities server on loopback.
The cases run a few at a time in threads (each subprocess costs about a second); the tests then
assert one case each, and a last test checks that the shared data directory still serves what
it held.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fakes.eutils_server import FakeEutils
from tests.fakes.fixtures import sample_articles
from tests.fakes.pubmed_render import articles_to_xml
from tests.integration.test_ask_flow import Q1, corpus

pytestmark = pytest.mark.slow  # ~50 subprocesses: about 40 s of CPU, 4 at a time

BAD = "aspirin \udcff\udcfe stroke?"  # what Python makes of the bytes b"\xff\xfe" in argv
ARTICLES_ADDED = len(sample_articles())
OTHER_ARTICLES = corpus()[ARTICLES_ADDED:]  # not in the corpus before the cases run
#: One retry would sleep an hour: a case that retries cannot finish within ``medlit``'s 180 s.
RETRY_HOUR_S = 3600
SLOW_RETRIES = {
    "MEDLIT_PUBMED_MAX_RETRIES": "5",
    "MEDLIT_PUBMED_BACKOFF_BASE_S": str(RETRY_HOUR_S),
    "MEDLIT_PUBMED_BACKOFF_MAX_S": str(RETRY_HOUR_S),
}


@dataclass
class Case:
    """One command line and what it must do."""

    id: str
    args: list[str]
    code: int
    says: str = ""  # a fragment of the one stderr line (errors only)
    env: dict[str, str] = field(default_factory=dict)
    home: str | None = None  # another MEDLIT_HOME (relative names live under the tmp dir)
    read_only: bool = False  # run with the home mounted read-only
    check: Callable[[subprocess.CompletedProcess[str]], None] | None = None


@dataclass
class World:
    """The shared data directory, its files, and the fake PubMed."""

    root: Path
    home: Path
    eutils: FakeEutils
    outcomes: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    elapsed: dict[str, float] = field(default_factory=dict)


def _env(world: World, case_env: dict[str, str], home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update(
        MEDLIT_HOME=str(home),
        MEDLIT_PUBMED_BASE_URL=world.eutils.base_url,
        MEDLIT_PUBMED_REQUESTS_PER_SECOND="50",
        MEDLIT_PUBMED_MAX_RETRIES="1",
        MEDLIT_PUBMED_BACKOFF_BASE_S="0.05",
        MEDLIT_AGENT_MIN_DOCS="2",
        HF_HUB_OFFLINE="1",
        COLUMNS="200",
    )
    env.update(case_env)
    return env


def medlit(
    world: World, *args: str, env: dict[str, str] | None = None, home: Path | None = None,
    read_only: bool = False,
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run ``python -m medlit ARGS`` as a user would."""
    home = home or world.home
    command = [sys.executable, "-m", "medlit", *args]
    if read_only:
        command = _read_only_wrapper(home) + command
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        env=_env(world, env or {}, home),
        cwd=world.root,
        timeout=180,
        check=False,
    )


def _read_only_wrapper(home: Path) -> list[str]:
    # root ignores permissions: mount the home read-only in a private mount namespace.
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", script, str(home)]


def _can_mount_read_only() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", 'mount --bind -o ro "$0" "$0"', "/tmp"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


# -- the files a hostile user feeds to `corpus add` --------------------------------------------

ENTITY_BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>99000001</PMID><Article>
<ArticleTitle>&lol9;</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>
"""


def _xxe(secret: Path) -> bytes:
    return f"""<?xml version="1.0"?>
<!DOCTYPE PubmedArticleSet [ <!ENTITY xxe SYSTEM "file://{secret}"> ]>
<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>99000002</PMID><Article>
<ArticleTitle>Leak &xxe; here</ArticleTitle>
<Abstract><AbstractText>Aspirin xxeprobe study.</AbstractText></Abstract>
</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>
""".encode()


NUL_MEDLINE = (
    b"PMID- 99000003\nTI  - Nulprobe\x00 aspirin \x1b[31mand stroke\x00\n"
    b"AB  - Aspirin\x00 reduced nulprobe stroke events.\nLA  - eng\n\n"
)


def _files(root: Path) -> None:
    good = articles_to_xml(sample_articles())
    (root / "good.xml").write_bytes(good)
    (root / "good2.xml").write_bytes(articles_to_xml(OTHER_ARTICLES))
    damaged = bytearray(gzip.compress(good * 3))
    for i in range(len(damaged) // 3, len(damaged) // 3 + 120, 5):
        damaged[i] ^= 0xFF
    (root / "corrupt.xml.gz").write_bytes(bytes(damaged))
    (root / "binary.bin").write_bytes(bytes(range(256)) * 40)
    (root / "bomb.xml").write_bytes(ENTITY_BOMB)
    (root / "secret.txt").write_text("root:x:0:0:secretmarker\n")
    (root / "xxe.xml").write_bytes(_xxe(root / "secret.txt"))
    (root / "nul.txt").write_bytes(NUL_MEDLINE)
    (root / "a-directory").mkdir()
    (root / "existing-dir").mkdir()
    (root / "not-a-dir").write_text("a regular file\n")
    (root / "garbled-home").mkdir()
    for name in ("medlit.sqlite3", "ratelimit.sqlite3", "corpus.sqlite3"):
        (root / "garbled-home" / name).write_bytes(b"not a database " * 700)


# -- the table ---------------------------------------------------------------------------------


def _no_raw_bytes(result: subprocess.CompletedProcess[str]) -> None:
    assert all(ch.isprintable() or ch == "\n" for ch in result.stderr), repr(result.stderr)


def _good_file_added(result: subprocess.CompletedProcess[str]) -> None:
    assert f"added {len(OTHER_ARTICLES)}, updated 0, skipped 0 (1 of 2 files failed)" in (
        result.stdout
    )


def _cached(result: subprocess.CompletedProcess[str]) -> None:
    data = json.loads(result.stdout)
    assert data["cache"]["tier1"] == "hit" and data["api_calls"]["pubmed"] == 0


# fmt: off
CASES = [
    # 1. text that is not valid UTF-8: bad input, naming the argument
    Case("ask-bad-utf8", ["ask", BAD], 2, "the question contains bytes that are not valid UTF-8"),
    Case("search-bad-utf8", ["search", BAD], 2, "the query contains bytes that are not valid"),
    Case("session-bad-utf8", ["ask", Q1, "--session", "s\udcff"], 2, "the session id contains"),
    Case("research-bad-utf8", ["research", BAD], 2, "the research question contains bytes"),
    Case("status-bad-utf8", ["research", "status", "j\udcff"], 2, "the job id contains bytes"),
    Case("resume-bad-utf8", ["research", "resume", "j\udcff"], 2, "the job id contains bytes"),
    Case("namespace-env-bad-utf8", ["cache", "stats"], 3, "MEDLIT_NAMESPACE contains bytes",
         env={"MEDLIT_NAMESPACE": "n\udcff"}),
    # 2. corpus add: each bad file fails alone, with one line naming it
    Case("corpus-corrupt-gzip-and-good", ["corpus", "add", "corrupt.xml.gz", "good2.xml"], 5,
         "corrupt.xml.gz: cannot read", check=_good_file_added),
    Case("corpus-directory", ["corpus", "add", "a-directory"], 2, "a-directory: is a directory"),
    Case("corpus-missing", ["corpus", "add", "nope.xml"], 2, "nope.xml: no such file"),
    Case("corpus-binary", ["corpus", "add", "binary.bin"], 5, "binary.bin:", check=_no_raw_bytes),
    Case("corpus-device", ["corpus", "add", "/dev/null"], 2, "/dev/null: not a regular file"),
    Case("corpus-bad-utf8-name", ["corpus", "add", "caf\udce9.xml"], 2,
         "the file name 'caf\\xe9.xml' contains bytes", check=_no_raw_bytes),
    Case("corpus-entity-bomb", ["corpus", "add", "bomb.xml"], 5, "bomb.xml:"),
    Case("corpus-xxe", ["corpus", "add", "xxe.xml"], 0),
    Case("corpus-nul-bytes", ["corpus", "add", "nul.txt"], 0),
    # 3. bad configuration: exit 3 at once, one line
    Case("tasks-not-json", ["ask", Q1], 3, "MEDLIT_LLM_TASKS: not valid JSON",
         env={"MEDLIT_LLM_TASKS": "{not json"}),
    Case("prices-garbage", ["ask", Q1], 3, "MEDLIT_LLM_PRICES: not valid JSON",
         env={"MEDLIT_LLM_PRICES": "garbage"}),
    Case("tasks-unknown-name", ["ask", Q1], 3, "unknown task 'summarise' (valid: plan_query,",
         env={"MEDLIT_LLM_TASKS": '{"summarise": {"model": "x"}}'}),
    Case("tasks-wrong-shape", ["ask", Q1], 3, "invalid setting llm.tasks",
         env={"MEDLIT_LLM_TASKS": '["answer"]'}),
    Case("base-url-not-a-url", ["search", "aspirin"], 3, "must be an http:// or https:// URL",
         env={"MEDLIT_PUBMED_BASE_URL": "notaurl", **SLOW_RETRIES}),
    Case("base-url-ftp", ["search", "aspirin"], 3, "not 'ftp://x'",
         env={"MEDLIT_PUBMED_BASE_URL": "ftp://x", **SLOW_RETRIES}),
    Case("llm-base-url-no-scheme", ["ask", Q1], 3, "invalid setting llm.base_url",
         env={"MEDLIT_LLM_BASE_URL": "localhost:11434/v1"}),
    Case("home-empty", ["cache", "stats"], 3, "invalid setting home: is empty",
         env={"MEDLIT_HOME": ""}),
    # 4. a data directory that cannot hold data: exit 7, naming it
    Case("home-file-ask", ["ask", Q1], 7, "not-a-dir (MEDLIT_HOME) is not a directory",
         home="not-a-dir"),
    Case("home-file-cache-stats", ["cache", "stats"], 7, "is not a directory", home="not-a-dir"),
    Case("home-file-research-list", ["research", "list"], 7, "is not a directory",
         home="not-a-dir"),
    Case("home-file-search", ["search", "aspirin"], 7, "is not a directory", home="not-a-dir"),
    Case("home-dev-null", ["ask", Q1], 7, "/dev/null (MEDLIT_HOME) is not a directory",
         home="/dev/null"),
    Case("home-under-a-file", ["corpus", "stats"], 7, "cannot be created: Not a directory",
         home="not-a-dir/sub"),
    Case("home-garbled-ask", ["ask", Q1], 7, "medlit.sqlite3: file is not a database",
         home="garbled-home"),
    Case("home-garbled-search", ["search", "aspirin"], 7, "ratelimit.sqlite3: file is not a",
         home="garbled-home"),
    Case("home-read-only-search", ["search", "aspirin"], 7, "(MEDLIT_HOME) is read-only",
         read_only=True),
    Case("home-read-only-ask", ["ask", Q1, "--json"], 7, "(MEDLIT_HOME) is read-only",
         read_only=True),
    # 5. --out that cannot be written: refused before any work
    Case("out-missing-dir", ["research", "aspirin and stroke", "--out", "nonexist/sub/r.md"], 2,
         "the directory nonexist/sub does not exist"),
    Case("out-is-directory", ["research", "aspirin and stroke", "--out", "existing-dir"], 2,
         "existing-dir is a directory"),
    Case("out-bad-utf8", ["research", "aspirin and stroke", "--out", "r\udcff.md"], 2,
         "the --out path contains bytes"),
    # what already worked, and must keep working
    Case("ask-empty", ["ask", "   "], 2, "the question is empty"),
    Case("ask-20000-chars", ["ask", "why " * 5000], 2, "the question is too long"),
    # a question or query typed without quotes is the same text as with them
    Case("ask-bare-words", ["ask", *Q1.split(), "--json"], 0, check=_cached),
    Case("research-bare-words", ["research", "aspirin", "and", "stroke", "--out",
                                 "nonexist/sub/r.md"], 2,
         "the directory nonexist/sub does not exist"),
    # a slip for a subcommand with a job id is refused, not researched (a job costs LLM calls)
    Case("research-report-job", ["research", "report", "3f2a9c1d0b7e"], 2,
         "did you mean 'medlit research resume 3f2a9c1d0b7e --out report.md'?"),
    Case("research-typo-status", ["research", "staus", "3f2a9c", "--json"], 2,
         "did you mean 'medlit research status 3f2a9c'?"),
    Case("research-stop-job", ["research", "stop", "3f2a"], 2,
         "'stop' is not a research subcommand; did you mean 'medlit research cancel 3f2a'?"),
    Case("research-start-question", ["research", "start", "Does binge drinking harm? ",
                                     "--depth", "quick"], 2,
         "'start' is not a research subcommand: a job starts from its question alone, medlit "
         "research 'Does binge drinking harm?'"),
    Case("research-job-id-alone", ["research", "54b8ae41e85e"], 2,
         "'54b8ae41e85e' looks like a research job id; did you mean 'medlit research status "
         "54b8ae41e85e'?"),
    Case("research-hex-word", ["research", "ace2", "--out", "nonexist/sub/r.md"], 2,
         "the directory nonexist/sub does not exist"),
    Case("research-list-limit-0", ["research", "list", "--limit", "0"], 2,
         "Invalid value for '--limit'"),
    Case("research-typo-alone", ["research", "exprot"], 2,
         "did you mean 'medlit research export'? (To research the word, use 'medlit research "
         "run exprot'.)"),
    # an option's value is not a word of the slip
    Case("research-typo-with-out", ["research", "staus", "--out", "nonexist/sub/r.md"], 2,
         "did you mean 'medlit research status'?"),
    Case("research-report-job-depth", ["research", "report", "3f2a9c", "--depth", "quick"], 2,
         "did you mean 'medlit research resume 3f2a9c --out report.md'?"),
    # more words than a subcommand takes: the question it may be, quoted
    Case("research-status-question", ["research", "status", "of", "the", "trials"], 2,
         "'medlit research status' takes JOB_ID, not 'of the trials'; to research a question "
         "that begins with 'status', quote it: medlit research 'status of the trials'"),
    # ...but the same words quoted, or words that are no job id, are a question
    Case("research-near-word-alone", ["research", "statins", "--out", "nonexist/sub/r.md"], 2,
         "the directory nonexist/sub does not exist"),
    Case("research-quoted-report-job", ["research", "report 3f2a9c", "--out",
                                        "nonexist/sub/r.md"], 2,
         "the directory nonexist/sub does not exist"),
    Case("research-show-word", ["research", "show", "efficacy", "--out", "nonexist/sub/r.md"],
         2, "the directory nonexist/sub does not exist"),
    Case("research-start-alone", ["research", "start", "--depth", "quick"], 2,
         "'start' is not a research subcommand: a job starts from its question alone"),
    Case("research-start-word", ["research", "start", "dates", "--out", "nonexist/sub/r.md"],
         2, "the directory nonexist/sub does not exist"),
    # the session id rule of POST /v1/ask holds in the CLI too
    Case("session-with-space", ["ask", Q1, "--session", "my notes"], 2,
         "the session id 'my notes' is not valid: use 1-128 letters"),
    Case("session-129-chars", ["ask", Q1, "--session", "s" * 129], 2, "is not valid"),
    Case("search-control-chars", ["search", "aspirin\x01 stroke\x1b[31m", "--json"], 0),
    Case("ask-control-chars-cached", ["ask", Q1.replace(" ", "\x01", 1) + "\x07\x1b", "--json"],
         0, check=_cached),
    Case("local-sql-injection", ["search", "--source", "local", "--json",
                                 "aspirin'; DROP TABLE articles; --"], 0),
    Case("local-fts5-syntax", ["search", "--source", "local", "--json",
                               'NEAR(aspirin stroke) AND "unclosed * ^ OR ('], 0),
    Case("research-status-unknown", ["research", "status", "nosuchjob"], 4, "no research job"),
    Case("research-resume-unknown", ["research", "resume", "nosuchjob"], 4, "no research job"),
    Case("research-status-path-like", ["research", "status", "../../etc/passwd"], 4,
         "no research job"),
    Case("research-resume-path-like", ["research", "resume", "../../x"], 4, "no research job"),
    Case("session-path-like", ["ask", Q1, "--session", "../../etc/passwd", "--json"], 2,
         "the session id '../../etc/passwd' is not valid"),
    Case("search-bad-source", ["search", "aspirin", "--source", "scopus"], 2, "unknown source"),
    Case("clear-bad-utf8-namespace", ["cache", "clear", "--namespace", "n\udcff", "--yes"], 2,
         "the namespace contains bytes"),
    Case("usage-not-an-int", ["search", "aspirin", "--limit", "many"], 2,
         "Invalid value for '--limit'"),
    Case("usage-bad-depth", ["research", "aspirin", "--depth", "huge"], 2, "'huge' is not one of"),
    Case("usage-missing-argument", ["ask"], 2, "Missing argument 'QUESTION'"),
    Case("usage-unknown-command", ["summon"], 2, "No such command 'summon'"),
]
# fmt: on


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("hostile")
    _files(root)
    with FakeEutils(articles=corpus(), rate_limit=None, rate_limit_with_key=None) as eutils:
        w = World(root=root, home=root / "home", eutils=eutils)
        first = medlit(w, "ask", Q1, "--json")  # the cached answer every case must leave alone
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["cache"]["tier1"] == "miss"
        added = medlit(w, "corpus", "add", "good.xml")
        assert added.returncode == 0, added.stderr
        w.outcomes = _run_all(w)
        slowest = sorted(w.elapsed.items(), key=lambda kv: -kv[1])[:8]
        print("slowest cases:", ", ".join(f"{k} {v:.1f}s" for k, v in slowest))
        yield w


def _run_all(w: World) -> dict[str, subprocess.CompletedProcess[str]]:
    read_only_ok = _can_mount_read_only() if os.geteuid() == 0 else True

    def one(case: Case) -> tuple[str, subprocess.CompletedProcess[str] | None]:
        if case.read_only and not read_only_ok:
            return case.id, None
        home = w.home if case.home is None else w.root / case.home
        if case.read_only and os.geteuid() != 0:
            return case.id, _chmod_read_only(w, case, home)
        started = time.monotonic()
        result = medlit(w, *case.args, env=case.env, home=home, read_only=case.read_only)
        w.elapsed[case.id] = time.monotonic() - started
        return case.id, result

    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(pool.map(one, CASES))
    return {k: v for k, v in done.items() if v is not None}


def _chmod_read_only(w: World, case: Case, home: Path) -> subprocess.CompletedProcess[str]:
    # Not root: permissions are enough (restored at once; the other cases share this home).
    read_only_home = w.root / f"ro-{case.id}"
    shutil.copytree(home, read_only_home)
    read_only_home.chmod(0o555)
    try:
        return medlit(w, *case.args, env=case.env, home=read_only_home)
    finally:
        read_only_home.chmod(0o755)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_one_line_and_the_documented_exit_code(world: World, case: Case) -> None:
    result = world.outcomes.get(case.id)
    if result is None:
        pytest.skip("cannot make a read-only directory here (root without mount namespaces)")
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == case.code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if case.code == 0:
        assert lines == [], result.stderr
    else:
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ") and case.says in lines[0], lines[0]
    if case.check is not None:
        case.check(result)


def test_bad_configuration_fails_at_once(world: World) -> None:
    # These cases allow 5 retries an hour apart: a bad URL taken and retried would sleep an hour,
    # so the bound below (far under an hour, far over a loaded machine's start-up) tells the two
    # apart whatever the load, where a bound near a start-up's wall time would not.
    for case in (c for c in CASES if c.id in ("base-url-not-a-url", "base-url-ftp")):
        started = time.monotonic()
        result = medlit(world, *case.args, env=case.env, home=world.home)
        elapsed = time.monotonic() - started
        assert result.returncode == case.code, (case.id, result.stderr)
        assert case.says in result.stderr, (case.id, result.stderr)
        assert elapsed < RETRY_HOUR_S / 20, (case.id, elapsed)


def test_nothing_hostile_reached_the_corpus(world: World) -> None:
    found = medlit(world, "search", "--source", "local", "--json", "aspirin nulprobe xxeprobe")
    assert found.returncode == 0, found.stderr
    text = found.stdout
    assert "Nulprobe" in text and "\\u0000" not in text and "\\u001b" not in text
    assert "secretmarker" not in text  # the external entity was never read
    assert "lollol" not in text


def test_the_store_is_intact_afterwards(world: World) -> None:
    stats = medlit(world, "cache", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["answers"]["entries"] >= 1 and data["evidence"]["articles"] > 0
    corpus_stats = medlit(world, "corpus", "stats", "--json")
    assert corpus_stats.returncode == 0, corpus_stats.stderr
    # good.xml, good2.xml, the MEDLINE record cleaned of NULs, the XXE record (entity unread)
    assert json.loads(corpus_stats.stdout)["articles"] >= ARTICLES_ADDED + len(OTHER_ARTICLES) + 2
    again = medlit(world, "ask", Q1, "--json")
    assert again.returncode == 0, again.stderr
    _cached(again)
    listed = medlit(world, "research", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []  # no job was started
    assert not (world.root / "nonexist").exists()
