"""The verified band of tier 1: an LLM judges candidates just below ``tau``.

Cosine similarity of MiniLM embeddings cannot tell "metformin in pregnancy" from "metformin in
children" well enough to serve answers below ``tau``; a small LLM reading both questions can,
when it is *scored* rather than asked to vote. For a candidate in ``[lower, tau)`` that passed
every other check (fingerprint, TTL, retrieval score, the medical-difference guard):

* the ``verify_cache_hit`` task is asked whether the answer to the cached question can be
  reused for the new one (the same kind of information about the same condition, drug, dose and
  person; six worked examples in the prompt), replying with one word, ``Yes`` or ``No``;
* the score is P("Yes") read from the first token's logprobs (every spelling of Yes among the
  top alternatives), asked in both orders, taking the lower (small models favour one position);
  the second order is skipped when the first is already below the threshold;
* only where the provider gives no logprobs, a plain one-word ``Yes`` in both orders is
  accepted, and only at cosine >= ``vote_lower`` (a small model's vote accepts about half of
  the different questions it sees in the band: it is not enough alone);
* anything else (another word, an error, a timeout) is a miss.

The threshold is per verifier model: a shipped value for models that were measured
(:data:`CALIBRATED_THRESHOLDS`, from ``benchmarks/cache_pairs.py --calibrate``) or the user's
``cache.verify_band.threshold``; with neither, the band stays closed.

Verdicts are remembered in the store per (cached entry, normalised new question, verifier
model) (:class:`VerdictStore`), so a pair is never judged twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from medlit.config import Settings, VerifyBandSettings
from medlit.errors import MedlitError
from medlit.llm.tasks import resolve_route
from medlit.log import get_logger

if TYPE_CHECKING:
    from medlit.llm.base import TokenLogprob
    from medlit.llm.client import LLMClient
    from medlit.storage.base import Connection, Migration

__all__ = [
    "CALIBRATED_THRESHOLDS",
    "PROMPT_VERSION",
    "TASK",
    "HitVerifier",
    "Judgement",
    "VerdictStore",
    "ask_yes",
    "open_verifier",
    "question_key",
    "same_probability",
    "verifier_threshold",
    "verify_messages",
]

log = get_logger("cache.verify")

TASK = "verify_cache_hit"
PROMPT_VERSION = "v2"

#: Verifier thresholds measured with ``benchmarks/cache_pairs.py --calibrate`` (verified hits at
#: precision 0.99 on ``mqp_dev.csv``), keyed by the model name the route uses. A model is listed
#: only if held-out (grouped CV) precision also reaches 0.99. The one model measured,
#: ``local-qwen`` (1.5B), falls short held out (figures in docs/benchmarks.md): not listed.
CALIBRATED_THRESHOLDS: dict[str, float] = {}

_TOP_LOGPROBS = 10
_SYSTEM = """You decide whether a stored answer to one medical question can be reused for another \
question. Reuse is allowed only if both questions ask for the same kind of information (cause, \
symptoms, diagnosis, treatment, prevention, risk, prognosis, frequency, definition, safety) about \
the same condition, drug, dose and person. Wording, spelling, greetings and personal details that \
do not change the answer do not matter.

Examples:
Q1: What are the side effects of lisinopril?
Q2: Does lisinopril cause any side effects?
Answer: Yes

Q1: How is shingles treated?
Q2: How common is shingles in older adults?
Answer: No

Q1: Can ibuprofen be taken during pregnancy?
Q2: Is ibuprofen safe for children?
Answer: No

Q1: I keep getting headaches after I run. What could be causing them?
Q2: What causes headaches after running?
Answer: Yes

Q1: What are the risk factors for gout?
Q2: What is gout a risk factor for?
Answer: No

Q1: What is psoriasis?
Q2: How can I get rid of psoriasis at home?
Answer: No

Reply with one word: Yes or No."""
#: The one word that accepts a pair (any case, spacing or quoting of it).
_YES = "yes"

Mode = Literal["logprobs", "vote"]


def verify_messages(first: str, second: str) -> list[dict[str, str]]:
    """The ``verify_cache_hit`` prompt for one order of the two questions."""
    return [
        {"role": "system", "content": _SYSTEM},
        {
            "role": "user",
            "content": f"Q1: {' '.join(first.split())}\n"
            f"Q2: {' '.join(second.split())}\n"
            "Can the answer to Q1 be reused for Q2?",
        },
    ]


def _word(token: str) -> str:
    return token.strip().strip("\"'*.:`").lower()


def same_probability(logprobs: Sequence[TokenLogprob] | None) -> float | None:
    """P("Yes": the cached answer can be reused) at the first generated token, or ``None``
    without logprobs.

    Every spelling among the alternatives counts (``Yes``, `` yes``, ``YES``); the mass on
    anything else (No, other words) counts against it.
    """
    if not logprobs:
        return None
    first = logprobs[0]
    alternatives = dict(first.top) if first.top else {first.token: first.logprob}
    alternatives.setdefault(first.token, first.logprob)
    return min(1.0, sum(math.exp(lp) for tok, lp in alternatives.items() if _word(tok) == _YES))


async def ask_yes(llm: LLMClient, messages: list[dict[str, str]]) -> tuple[float, Mode]:
    """One yes/no call of :data:`TASK` (the verifier's and the word-pair judge's): P("Yes")
    from the first token's log-probabilities, or without them a vote, 1.0 for the one word
    "Yes" alone (any case, spacing or quoting) and 0.0 for anything else.

    Raises:
        LLMError: the call failed.
    """
    reply = await llm.complete(
        TASK, messages, temperature=0.0, max_tokens=2, top_logprobs=_TOP_LOGPROBS
    )
    p = same_probability(reply.logprobs)
    if p is not None:
        return p, "logprobs"
    return (1.0 if _word(reply.text) == _YES else 0.0), "vote"


def question_key(question: str) -> str:
    """The remembered-verdict key of a question: case and spacing do not matter."""
    norm = " ".join(question.lower().split()).rstrip(" ?.!")
    return hashlib.sha256(norm.encode()).hexdigest()[:32]


def verifier_threshold(settings: VerifyBandSettings, model: str | None) -> float | None:
    """The threshold for ``model``: the user's, else the shipped one, else ``None`` (closed)."""
    if settings.threshold is not None:
        return settings.threshold
    if model is None:
        return None
    return CALIBRATED_THRESHOLDS.get(model)


def open_verifier(settings: Settings, llm: Callable[[], LLMClient]) -> HitVerifier | None:
    """The band's verifier, or ``None`` when the band is closed: switched off, no model for
    ``verify_cache_hit``, or no threshold calibrated for that model."""
    band = settings.cache.verify_band
    if not band.enabled:
        return None
    route = resolve_route(settings.llm, TASK)
    if not route.configured or route.model is None:
        return None
    threshold = verifier_threshold(band, route.model)
    if threshold is None:
        return None
    return HitVerifier(llm, band, threshold=threshold, model=route.model)


@dataclass(frozen=True)
class Judgement:
    """What the verifier concluded about one pair.

    Attributes:
        score: P(Yes), the lower over the orders asked (vote mode: 1.0 for Yes in every
            order asked, else 0.0).
        complete: both orders were asked (an incomplete judgement is only a refusal).
        mode: ``logprobs`` or ``vote`` (the provider gave no logprobs).
        calls: LLM calls made for it (0 when remembered).
    """

    score: float
    complete: bool
    mode: Mode
    calls: int = 0


class HitVerifier:
    """Judges (cached question, new question) pairs with the ``verify_cache_hit`` task.

    Args:
        llm: returns the LLM client (called only when a pair is judged, so a lookup that
            needs no verification never opens it); the call is routed and accounted like
            every task.
        settings: ``cache.verify_band``.
        threshold: the calibrated threshold of ``model``.
        model: the verifier model's name (remembered verdicts are per model).
    """

    def __init__(
        self,
        llm: Callable[[], LLMClient],
        settings: VerifyBandSettings,
        *,
        threshold: float,
        model: str,
    ) -> None:
        self._llm = llm
        self.settings = settings
        self.threshold = threshold
        self.model = model

    def accepts(self, judgement: Judgement, similarity: float) -> bool:
        """Whether ``judgement`` serves the cached answer at ``similarity``."""
        if not judgement.complete:
            return False
        if judgement.mode == "vote":
            return judgement.score >= 1.0 and similarity >= self.settings.vote_lower
        return judgement.score >= self.threshold

    def refuses(self, judgement: Judgement, similarity: float) -> bool:
        """Whether ``judgement`` is a definite no (an incomplete one may still be a yes)."""
        if judgement.complete:
            return not self.accepts(judgement, similarity)
        if judgement.mode == "vote":
            return judgement.score < 1.0 or similarity < self.settings.vote_lower
        return judgement.score < self.threshold

    async def ask(self, first: str, second: str) -> tuple[float, Mode]:
        """One order: P(Yes) (or the vote, 1.0/0.0, without logprobs).

        Raises:
            LLMError: the call failed (the caller treats it as a miss).
        """
        return await ask_yes(self._llm(), verify_messages(first, second))

    async def judge(
        self,
        cached_question: str,
        new_question: str,
        similarity: float,
        *,
        budget: int,
        tally: list[int] | None = None,
    ) -> Judgement:
        """Ask in up to two orders (within ``budget`` calls), stopping at a definite no.

        ``tally`` (a one-item list) counts the calls sent, even when one then fails.

        Raises:
            LLMError: a call failed or timed out.
        """
        tally = tally if tally is not None else [0]
        tally[0] += 1
        score, mode = await self.ask(cached_question, new_question)
        judgement = Judgement(score, complete=False, mode=mode, calls=1)
        if self.refuses(judgement, similarity) or budget < 2:
            return judgement
        tally[0] += 1
        second, mode2 = await self.ask(new_question, cached_question)
        if "vote" in (mode, mode2):
            # One order without logprobs: both count as votes (Yes only at P >= 0.5 is not
            # the stricter rule; demand the word itself, or a sure score, in every order).
            score, second, mode = float(score >= 1.0), float(second >= 1.0), "vote"
        return Judgement(min(score, second), complete=True, mode=mode, calls=2)

    async def judge_in_time(
        self, cached_question: str, new_question: str, similarity: float, *, budget: int
    ) -> tuple[Judgement | None, int]:
        """:meth:`judge` within ``settings.timeout_s``: (the judgement, or ``None`` on any
        failure or timeout, a miss; the calls sent)."""
        tally = [0]
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                judgement = await self.judge(
                    cached_question, new_question, similarity, budget=budget, tally=tally
                )
        except (TimeoutError, MedlitError) as exc:
            log.warning("cache_verify_failed", model=self.model, error=str(exc) or "timeout")
            return None, tally[0]
        return judgement, tally[0]


class _VerdictDB(Protocol):
    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int: ...

    def transaction(self) -> AbstractContextManager[Connection]: ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


def _create_verdicts(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS cache_verdicts (
               answer_id BIGINT NOT NULL,
               question_key TEXT NOT NULL,
               model TEXT NOT NULL,
               score DOUBLE PRECISION NOT NULL,
               complete BIGINT NOT NULL,
               mode TEXT NOT NULL,
               created_at DOUBLE PRECISION NOT NULL,
               PRIMARY KEY (answer_id, question_key, model)
           )"""
    )
    conn.execute("CREATE INDEX IF NOT EXISTS cache_verdicts_age ON cache_verdicts (created_at)")


MIGRATIONS: list[Migration] = [_create_verdicts]


class VerdictStore:
    """Remembered verdicts, one row per (cached entry, normalised new question, model).

    The score is kept, not the decision, so a changed threshold applies to old verdicts too.
    Portable SQL: it runs unchanged on the SQLite and the PostgreSQL store.
    """

    def __init__(self, store: _VerdictDB) -> None:
        self._store = store
        store.apply_migrations("verify", MIGRATIONS)

    def get(self, answer_id: int, question: str, model: str) -> Judgement | None:
        """The remembered judgement of this pair by ``model``, if any."""
        rows = self._store.read(
            "SELECT score, complete, mode FROM cache_verdicts "
            "WHERE answer_id = ? AND question_key = ? AND model = ?",
            (answer_id, question_key(question), model),
        )
        if not rows:
            return None
        score, complete, mode = rows[0]
        return Judgement(float(score), bool(complete), "vote" if mode == "vote" else "logprobs")

    def put(self, answer_id: int, question: str, model: str, judgement: Judgement) -> None:
        """Remember (or replace) a judgement."""
        with self._store.transaction() as conn:
            conn.execute(
                """INSERT INTO cache_verdicts
                   (answer_id, question_key, model, score, complete, mode, created_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (answer_id, question_key, model) DO UPDATE SET
                   score = excluded.score, complete = excluded.complete,
                   mode = excluded.mode, created_at = excluded.created_at""",
                (
                    answer_id,
                    question_key(question),
                    model,
                    judgement.score,
                    int(judgement.complete),
                    judgement.mode,
                    time.time(),
                ),
            )

    def purge(self, created_before: float) -> int:
        """Forget verdicts older than ``created_before`` (their entries have expired)."""
        with self._store.transaction() as conn:
            cur = conn.execute("DELETE FROM cache_verdicts WHERE created_at < ?", (created_before,))
        return int(cur.rowcount or 0)
