"""Word pairs judged once and remembered: what lets a reworded question reach a cached answer.

The guard (:mod:`medlit.cache.guard`) serves a cached answer only when every word that differs
between the two questions is known to say the same thing. It knows which words differ
("differs: older / elderly"): a much smaller question than whether two whole questions are the
same, and one whose answer serves every later question that uses the same words.

**A pair** is the new question's differing words and the cached question's (at most three on
each side, both sides non-empty: a word only one question says is never a pair), in a *context
kind*: the question's type as its frame reads it (:class:`medlit.words.frame.
QuestionFrame`: effect, risk, diagnosis ...; the frames the guard compares, handed in by the
cache). A pair is considered only when nothing else stands between the
two questions: the same relations in the same order, frames that agree (type, yes/no,
direction, populations) and the guard's related-question checks passing (negation, number,
population, drug, opposite outcome ...). Its verdict is kept in the store
(:class:`WordPairStore`, portable SQL: the SQLite and the PostgreSQL store alike, so every
replica sees it), scoped like the answers it serves (per namespace), with who decided (a model
or a person), which model, its score and when:

- ``same``: later questions differing by this pair are served, with no model call; every
  answer so served is remembered with the pair, and revoking the pair
  (``medlit cache words revoke``) deletes those answers;
- ``different``: refused, the refusal says so;
- ``pending``: refused for now; the question is answered normally and the pair waits for the
  judge or a person (``medlit cache words approve``).

**The judge** (:class:`WordJudge`) asks the configured model (task ``verify_cache_hit``), in
the question's own words, whether one side can stand for the other without changing what is
asked, in both directions; P("Yes") from the first token's logprobs, the lower of the two, at
least :data:`JUDGE_THRESHOLD`. It runs in the background after the lookup has missed: a lookup
never waits for it. It opens only for a model whose precision on the contrast set's pairs
(``medlit cache calibrate``, kept in the store per model and prompt version) is at least
:data:`REQUIRED_PRECISION` on at least :data:`MIN_ACCEPTED` accepted pairs; otherwise pairs
wait for a person.

**The seed vocabulary** (:func:`medlit.words.seed.seed_relation`: WordNet's synonym sets): a
pair it lists is marked as a candidate in ``medlit cache words``; it is never served on that
alone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from medlit.cache.verify import TASK, ask_yes
from medlit.errors import MedlitError
from medlit.llm.tasks import resolve_route
from medlit.log import get_logger
from medlit.words.frame import QuestionFrame, frame_of

if TYPE_CHECKING:
    from medlit.cache.guard import Asked, QuestionGuard
    from medlit.config import Settings
    from medlit.llm.client import LLMClient
    from medlit.storage.base import Connection, Migration, Store

__all__ = [
    "JUDGE_THRESHOLD",
    "MIN_ACCEPTED",
    "PROMPT_VERSION",
    "REQUIRED_PRECISION",
    "Calibration",
    "PairRecord",
    "Settled",
    "WordJudge",
    "WordPair",
    "WordPairStore",
    "judge_messages",
    "open_word_judge",
    "pairs_between",
]

log = get_logger("cache.word_pairs")

PROMPT_VERSION = "pairs-v1"
#: P("Yes") a judgement needs in both directions.
JUDGE_THRESHOLD = 0.9
#: The contrast-set precision a model needs before its verdicts serve answers.
REQUIRED_PRECISION = 0.99
#: ... measured on at least this many accepted pairs: 2 right of 2 shows no 0.99 (with none
#: wrong of 30, the error's 95% upper bound is 9.5%; one wrong of 30 is already below 0.99).
MIN_ACCEPTED = 30
_MAX_WORDS = 3

Verdict = Literal["same", "different", "pending"]


@dataclass(frozen=True, slots=True)
class WordPair:
    """The words one question says where the other says others, in a context kind.

    Attributes:
        new: the new question's words (lower case, as written, in order).
        cached: the cached question's words.
        context: the question's type (its frame's ``kind``).
    """

    new: str
    cached: str
    context: str

    @property
    def words(self) -> tuple[str, str]:
        """The two sides in a fixed order (a pair is the same pair either way round)."""
        a, b = sorted((self.new, self.cached))
        return a, b

    def __str__(self) -> str:
        return f"{self.new} / {self.cached} ({self.context})"


def _frames_agree(a: QuestionFrame, b: QuestionFrame) -> bool:
    """Same type, yes/no, direction, and the same populations of every kind both name (a
    population one question names by a word the frame does not read, "older" where the other
    says "elderly", is the pair itself: the judge's to settle)."""
    if (a.kind, a.yes_no, a.direction) != (b.kind, b.yes_no, b.direction):
        return False
    for kind in {p.kind for p in a.populations} & {p.kind for p in b.populations}:
        names_a = {p.name for p in a.populations if p.kind == kind}
        if names_a != {p.name for p in b.populations if p.kind == kind}:
            return False
    return True


def pairs_between(guard: QuestionGuard, new: Asked, cached: Asked) -> WordPair | None:
    """The pair that is all that differs between ``new`` and ``cached`` (each a question's
    frame, or its text), or None when something else does (see the module docstring)."""
    from medlit.cache.wording import word_difference

    new_text = new.question if isinstance(new, QuestionFrame) else new
    cached_text = cached.question if isinstance(cached, QuestionFrame) else cached
    difference = word_difference(new_text, cached_text)
    if difference.order is not None or not (difference.only_new and difference.only_cached):
        return None
    if len(difference.only_new) > _MAX_WORDS or len(difference.only_cached) > _MAX_WORDS:
        return None
    a, b = frame_of(new), frame_of(cached)
    if not guard.check_related(a, b).ok or not _frames_agree(a, b):
        return None
    return WordPair(" ".join(difference.only_new), " ".join(difference.only_cached), a.kind)


# --- the store -------------------------------------------------------------------------------


def _create_pairs(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS cache_word_pairs (
               namespace TEXT NOT NULL,
               word_a TEXT NOT NULL,
               word_b TEXT NOT NULL,
               context TEXT NOT NULL,
               verdict TEXT NOT NULL,
               decided_by TEXT NOT NULL,
               model TEXT NOT NULL,
               score DOUBLE PRECISION,
               example_new TEXT NOT NULL,
               example_cached TEXT NOT NULL,
               created_at DOUBLE PRECISION NOT NULL,
               decided_at DOUBLE PRECISION,
               PRIMARY KEY (namespace, word_a, word_b, context)
           )"""
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS cache_word_pair_uses (
               namespace TEXT NOT NULL,
               word_a TEXT NOT NULL,
               word_b TEXT NOT NULL,
               context TEXT NOT NULL,
               answer_id BIGINT NOT NULL,
               used_at DOUBLE PRECISION NOT NULL,
               PRIMARY KEY (namespace, word_a, word_b, context, answer_id)
           )"""
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS cache_judge_calibration (
               model TEXT NOT NULL,
               prompt_version TEXT NOT NULL,
               pairs BIGINT NOT NULL,
               same_pairs BIGINT NOT NULL,
               accepted BIGINT NOT NULL,
               wrong BIGINT NOT NULL,
               contrast TEXT NOT NULL,
               measured_at DOUBLE PRECISION NOT NULL,
               PRIMARY KEY (model, prompt_version)
           )"""
    )


MIGRATIONS: list[Migration] = [_create_pairs]


@dataclass(frozen=True, slots=True)
class PairRecord:
    """One remembered pair as ``medlit cache words`` lists it."""

    namespace: str
    words: tuple[str, str]
    context: str
    verdict: Verdict
    decided_by: str
    model: str
    score: float | None
    example_new: str
    example_cached: str
    created_at: float
    decided_at: float | None
    uses: int = 0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A judge model's measurement on the contrast set's pairs.

    Attributes:
        model: the model's name.
        prompt_version: the judge prompt measured (:data:`PROMPT_VERSION`).
        pairs: pairs judged; ``same_pairs`` of them true rewordings.
        accepted: pairs the judge called the same; ``wrong`` of them were not.
        contrast: which contrast set (file and parts).
        measured_at: epoch seconds.
    """

    model: str
    prompt_version: str
    pairs: int
    same_pairs: int
    accepted: int
    wrong: int
    contrast: str
    measured_at: float

    @property
    def precision(self) -> float | None:
        """Right among accepted (None: it accepted nothing, so nothing is measured)."""
        return None if not self.accepted else (self.accepted - self.wrong) / self.accepted

    @property
    def recall(self) -> float:
        """True rewordings accepted, of all."""
        return (self.accepted - self.wrong) / self.same_pairs if self.same_pairs else 0.0

    @property
    def opens(self) -> bool:
        """Whether this measurement opens the judge: precision >= :data:`REQUIRED_PRECISION`
        on at least :data:`MIN_ACCEPTED` accepted pairs, with the current prompt."""
        return (
            self.prompt_version == PROMPT_VERSION
            and self.accepted >= MIN_ACCEPTED
            and self.precision is not None
            and self.precision >= REQUIRED_PRECISION
        )


_COLUMNS = (
    "namespace, word_a, word_b, context, verdict, decided_by, model, score, example_new, "
    "example_cached, created_at, decided_at"
)


class WordPairStore:
    """Remembered pairs and their verdicts (tables created on first use, on either store)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._judges: dict[str, WordJudge] = {}
        store.apply_migrations("word_pairs", MIGRATIONS)

    def judge(self, model: str, llm: Callable[[], LLMClient]) -> WordJudge:
        """The one judge of ``model`` over these pairs (it knows which pairs it is judging)."""
        if model not in self._judges:
            self._judges[model] = WordJudge(llm, model, self)
        return self._judges[model]

    def verdict(self, namespace: str, pair: WordPair) -> Verdict | None:
        """The verdict on ``pair`` in ``namespace`` (None: never met)."""
        a, b = pair.words
        rows = self._store.read(
            "SELECT verdict FROM cache_word_pairs "
            "WHERE namespace = ? AND word_a = ? AND word_b = ? AND context = ?",
            (namespace, a, b, pair.context),
        )
        return rows[0][0] if rows else None

    def propose(self, namespace: str, pair: WordPair, new: str, cached: str) -> bool:
        """Remember ``pair`` as pending (with the questions it was met in); False when it is
        known already."""
        a, b = pair.words
        with self._store.transaction() as conn:
            cur = conn.execute(
                f"INSERT INTO cache_word_pairs ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, 'pending', '', '', NULL, ?, ?, ?, NULL) "
                "ON CONFLICT (namespace, word_a, word_b, context) DO NOTHING",
                (namespace, a, b, pair.context, new, cached, time.time()),
            )
        return bool(cur.rowcount)

    def decide(
        self,
        namespace: str,
        pair: WordPair,
        verdict: Verdict,
        *,
        by: str,
        model: str = "",
        score: float | None = None,
    ) -> None:
        """Record a verdict (a model's, or a person's: ``by="person"``)."""
        a, b = pair.words
        now = time.time()
        with self._store.transaction() as conn:
            conn.execute(
                f"INSERT INTO cache_word_pairs ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (namespace, word_a, word_b, context) DO UPDATE SET "
                "verdict = excluded.verdict, decided_by = excluded.decided_by, "
                "model = excluded.model, score = excluded.score, "
                "decided_at = excluded.decided_at",
                (namespace, a, b, pair.context, verdict, by, model, score, pair.new,
                 pair.cached, now, now),
            )  # fmt: skip

    def record_use(self, namespace: str, pair: WordPair, answer_id: int) -> None:
        """Remember that ``answer_id`` was served through ``pair`` (revocation drops it)."""
        a, b = pair.words
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO cache_word_pair_uses "
                "(namespace, word_a, word_b, context, answer_id, used_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT "
                "(namespace, word_a, word_b, context, answer_id) DO UPDATE SET "
                "used_at = excluded.used_at",
                (namespace, a, b, pair.context, answer_id, time.time()),
            )

    def pairs(
        self, namespace: str | None = None, verdict: Verdict | None = None
    ) -> list[PairRecord]:
        """Remembered pairs (of one namespace, of one verdict), newest first."""
        sql = f"SELECT {_COLUMNS} FROM cache_word_pairs WHERE 1 = 1"
        params: list[Any] = []
        if namespace is not None:
            sql += " AND namespace = ?"
            params.append(namespace)
        if verdict is not None:
            sql += " AND verdict = ?"
            params.append(verdict)
        rows = self._store.read(sql + " ORDER BY created_at DESC", params)
        uses = {
            (r[0], r[1], r[2], r[3]): int(r[4])
            for r in self._store.read(
                "SELECT namespace, word_a, word_b, context, count(*) FROM cache_word_pair_uses "
                "GROUP BY namespace, word_a, word_b, context"
            )
        }
        return [
            PairRecord(
                r[0], (r[1], r[2]), r[3], r[4], r[5], r[6],
                None if r[7] is None else float(r[7]), r[8], r[9], float(r[10]),
                None if r[11] is None else float(r[11]), uses.get((r[0], r[1], r[2], r[3]), 0),
            )
            for r in rows
        ]  # fmt: skip

    def _matching(
        self, namespace: str, first: str, second: str, context: str | None
    ) -> list[WordPair]:
        a, b = sorted((first.lower().strip(), second.lower().strip()))
        return [
            WordPair(r.words[0], r.words[1], r.context)
            for r in self.pairs(namespace)
            if r.words == (a, b) and context in (None, r.context)
        ]

    def approve(self, namespace: str, first: str, second: str, context: str | None = None) -> int:
        """A person's "same" for the remembered pair (every context kind, or one); returns
        how many pairs changed."""
        found = self._matching(namespace, first, second, context)
        for pair in found:
            self.decide(namespace, pair, "same", by="person")
        return len(found)

    def revoke(
        self, namespace: str, first: str, second: str, context: str | None = None
    ) -> tuple[int, int]:
        """A person's "different": the pair serves nothing more, and the cached answers it let
        through are deleted. Returns (pairs changed, answers deleted)."""
        found = self._matching(namespace, first, second, context)
        answers: list[int] = []
        for pair in found:
            self.decide(namespace, pair, "different", by="person")
            a, b = pair.words
            where = "namespace = ? AND word_a = ? AND word_b = ? AND context = ?"
            params = (namespace, a, b, pair.context)
            answers += [
                int(r[0])
                for r in self._store.read(
                    f"SELECT answer_id FROM cache_word_pair_uses WHERE {where}", params
                )
            ]
            with self._store.transaction() as conn:
                conn.execute(f"DELETE FROM cache_word_pair_uses WHERE {where}", params)
        dropped = self._store.delete_answers(sorted(set(answers))) if answers else 0
        return len(found), dropped

    def calibration(self, model: str) -> Calibration | None:
        """The kept measurement of ``model`` with the current prompt, if any."""
        rows = self._store.read(
            "SELECT model, prompt_version, pairs, same_pairs, accepted, wrong, contrast, "
            "measured_at FROM cache_judge_calibration WHERE model = ? AND prompt_version = ?",
            (model, PROMPT_VERSION),
        )
        if not rows:
            return None
        r = rows[0]
        return Calibration(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[6], r[7])

    def calibrations(self) -> list[Calibration]:
        """Every kept measurement (any model, any prompt version)."""
        rows = self._store.read(
            "SELECT model, prompt_version, pairs, same_pairs, accepted, wrong, contrast, "
            "measured_at FROM cache_judge_calibration ORDER BY measured_at DESC"
        )
        return [
            Calibration(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[6], r[7])
            for r in rows
        ]

    def keep_calibration(self, calibration: Calibration) -> None:
        """Keep (or replace) a model's measurement."""
        c = calibration
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO cache_judge_calibration (model, prompt_version, pairs, same_pairs, "
                "accepted, wrong, contrast, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (model, prompt_version) DO UPDATE SET pairs = excluded.pairs, "
                "same_pairs = excluded.same_pairs, accepted = excluded.accepted, "
                "wrong = excluded.wrong, contrast = excluded.contrast, "
                "measured_at = excluded.measured_at",
                (c.model, c.prompt_version, c.pairs, c.same_pairs, c.accepted, c.wrong,
                 c.contrast, c.measured_at),
            )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Settled:
    """What the remembered pairs say of one guard refusal.

    Attributes:
        pair: the pair that is all that differs (None: something else differs too).
        verdict: its remembered verdict (None: never met before).
    """

    pair: WordPair | None
    verdict: Verdict | None

    @property
    def ok(self) -> bool:
        """Served: the pair is known to say the same."""
        return self.verdict == "same"

    @property
    def unsettled(self) -> bool:
        """The pair is the only obstacle and nobody has said "different" yet."""
        return self.pair is not None and self.verdict in (None, "pending")


def settle(
    pairs: WordPairStore, guard: QuestionGuard, namespace: str, new: Asked, cached: Asked
) -> Settled:
    """Read the verdict on the pair between ``new`` and ``cached`` (their frames, or their
    texts; no model, no write)."""
    pair = pairs_between(guard, new, cached)
    if pair is None:
        return Settled(None, None)
    return Settled(pair, pairs.verdict(namespace, pair))


# --- the judge -------------------------------------------------------------------------------

_SYSTEM = """You check one change of wording in a medical question. You see the question and \
a replacement: some words, and the words that would stand in their place. Answer Yes only if the \
question asks exactly the same thing after the replacement: the same people, treatment, \
comparison, outcome, timing, direction of effect and amount. A different person, body part, \
drug, dose, time, direction (more / less, better / worse) or a broader or narrower term is No.

Examples:
Question: Is vitamin D deficiency common in elderly nursing home residents?
Replace "elderly" with "older": Yes
Question: Does exercise improve sleep quality in adults?
Replace "improve" with "worsen": No
Question: Does obesity affect clinical outcomes after knee replacement?
Replace "outcomes" with "results": Yes
Question: Is laparoscopic surgery safe in children?
Replace "children" with "adults": No
Question: Do we need antibiotics after dental extraction?
Replace "need" with "require": Yes
Question: Is early surgery better than late surgery for hip fracture?
Replace "early" with "delayed": No
Question: Does aspirin reduce the risk of colorectal cancer?
Replace "colorectal" with "gastric": No

Reply with one word: Yes or No."""


def judge_messages(question: str, replaced: str, by: str) -> list[dict[str, str]]:
    """The judge's prompt: in ``question``, may ``by`` stand for ``replaced``?"""
    return [
        {"role": "system", "content": _SYSTEM},
        {
            "role": "user",
            "content": f'Question: {" ".join(question.split())}\nReplace "{replaced}" with "{by}":',
        },
    ]


class WordJudge:
    """Judges pairs with the configured model, in the background of a lookup.

    Args:
        llm: returns the LLM client (called only when a pair is judged).
        model: the judge model's name (kept with every verdict).
        pairs: where verdicts are kept.
        timeout_s: one pair's time limit (both directions).
    """

    def __init__(
        self,
        llm: Callable[[], LLMClient],
        model: str,
        pairs: WordPairStore,
        *,
        timeout_s: float = 120.0,
    ) -> None:
        self._llm = llm
        self.model = model
        self.pairs = pairs
        self.timeout_s = timeout_s
        self._running: dict[tuple[str, str, str, str], asyncio.Task[Verdict | None]] = {}

    async def _ask(self, question: str, replaced: str, by: str) -> float:
        score, _mode = await ask_yes(self._llm(), judge_messages(question, replaced, by))
        return score

    async def score(self, pair: WordPair, new: str, cached: str) -> float:
        """P("Yes"), the lower of both directions (the second not asked after a clear No).

        Raises:
            LLMError: a call failed.
        """
        first = await self._ask(cached, pair.cached, pair.new)
        if first < JUDGE_THRESHOLD:
            return first
        return min(first, await self._ask(new, pair.new, pair.cached))

    async def judge(self, namespace: str, pair: WordPair, new: str, cached: str) -> Verdict | None:
        """Judge ``pair`` and keep the verdict; None when the model failed (it stays pending)
        or the pair was settled meanwhile (by another process, or a person)."""
        known = await asyncio.to_thread(self.pairs.verdict, namespace, pair)
        if known in ("same", "different"):
            return None
        try:
            async with asyncio.timeout(self.timeout_s):
                p = await self.score(pair, new, cached)
        except Exception as exc:  # in the background: an error left unretrieved helps no one
            log.warning(
                "word_pair_judge_failed", model=self.model, error=str(exc) or type(exc).__name__
            )
            return None
        verdict: Verdict = "same" if p >= JUDGE_THRESHOLD else "different"
        await asyncio.to_thread(
            self.pairs.decide, namespace, pair, verdict, by="model", model=self.model, score=p
        )
        return verdict

    def schedule(self, namespace: str, pair: WordPair, new: str, cached: str) -> bool:
        """Judge ``pair`` in the background (once at a time per pair); False when it is being
        judged already. The caller does not wait: the task runs on the event loop."""
        key = (namespace, *pair.words, pair.context)
        if key in self._running:
            return False
        task = asyncio.get_running_loop().create_task(self.judge(namespace, pair, new, cached))
        self._running[key] = task
        task.add_done_callback(lambda _t: self._running.pop(key, None))
        return True

    async def drain(self) -> None:
        """Wait for the pairs being judged (shutdown, tests)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)


def open_word_judge(
    settings: Settings, llm: Callable[[], LLMClient], pairs: WordPairStore
) -> WordJudge | None:
    """The judge, or None: no model for ``verify_cache_hit``, or none whose kept calibration
    reaches :data:`REQUIRED_PRECISION` (pairs then wait for a person)."""
    route = resolve_route(settings.llm, TASK)
    if not route.configured or route.model is None:
        return None
    calibration = pairs.calibration(route.model)
    if calibration is None or not calibration.opens:
        return None
    return pairs.judge(route.model, llm)


# --- calibration -----------------------------------------------------------------------------


async def calibrate(
    judge: WordJudge,
    items: Sequence[tuple[WordPair, str, str, bool]],
    *,
    contrast: str,
    scores: list[tuple[WordPair, bool, float]] | None = None,
) -> Calibration:
    """Judge each (pair, new question, cached question, truly the same) and measure.

    A failed call counts as a refusal (the pair would wait). Nothing is kept here: the caller
    keeps the result (:meth:`WordPairStore.keep_calibration`). ``scores`` receives each
    (pair, truly the same, P("Yes")).
    """
    accepted = wrong = 0
    for pair, new, cached, same in items:
        try:
            p = await judge.score(pair, new, cached)
        except MedlitError:
            p = 0.0
        if p >= JUDGE_THRESHOLD:
            accepted += 1
            wrong += not same
        if scores is not None:
            scores.append((pair, same, p))
    return Calibration(
        judge.model,
        PROMPT_VERSION,
        len(items),
        sum(same for *_, same in items),
        accepted,
        wrong,
        contrast,
        time.time(),
    )


def contrast_items(
    rows: Iterable[dict[str, str]], guard: QuestionGuard
) -> list[tuple[WordPair, str, str, bool]]:
    """The contrast set's pairs: each row (``group``, ``cached``, ``asked``) whose only
    difference is a pair, once per distinct pair and context (``group == "reword"``: the same)."""
    seen: set[tuple[str, str, str]] = set()
    items: list[tuple[WordPair, str, str, bool]] = []
    for row in rows:
        pair = pairs_between(guard, row["asked"], row["cached"])
        if pair is None or (*pair.words, pair.context) in seen:
            continue
        seen.add((*pair.words, pair.context))
        items.append((pair, row["asked"], row["cached"], row["group"] == "reword"))
    return items
