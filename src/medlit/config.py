"""Settings: one pydantic model, built at the edge (CLI, API) and passed down.

Environment variables use the prefix ``MEDLIT_`` and one underscore between the section and the
field: ``MEDLIT_PUBMED_API_KEY`` sets ``settings.pubmed.api_key``; ``MEDLIT_HOME`` sets
``settings.home``. Complex fields take JSON (``MEDLIT_LLM_TASKS='{"answer": {"model": "x"}}'``).

The variables are read as pydantic-settings reads them (:func:`environment`), which is loaded
only for a variable that is not one plain value of a known field (JSON, a whole section, a
name it does not know): importing it costs a cached ``medlit ask`` a tenth of its start-up.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

from medlit.code_version import answering_code

__all__ = [
    "AgentSettings",
    "CacheSettings",
    "ChecksSettings",
    "EmbeddingSettings",
    "EuropePMCSettings",
    "FullTextSettings",
    "LLMSettings",
    "LLMTaskRoute",
    "LocalSettings",
    "PubMedSettings",
    "ResearchDepth",
    "ResearchSettings",
    "SearchSettings",
    "ServiceSettings",
    "Settings",
    "VerifyBandSettings",
    "environment",
    "mask_url",
]


def _default_home() -> Path:
    from platformdirs import user_data_path

    return user_data_path("medlit", appauthor=False)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _http_url(value: str | None) -> str | None:
    """An http(s) URL with a host, else a ValueError: a typo must fail at once (exit 3), not
    after every retry of every request."""
    from urllib.parse import urlsplit

    if value is None:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http:// or https:// URL with a host, not {value!r}")
    return value.strip()


class PubMedSettings(_Section):
    """NCBI E-utilities."""

    base_url: str = Field(
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/",
        description="E-utilities base URL (point it at a mirror or a test server).",
    )
    api_key: SecretStr | None = Field(
        None, description="NCBI API key: raises the rate limit from 3 to 10 requests/second."
    )
    email: str | None = Field(
        None, description="Contact e-mail sent with every request, as NCBI asks of tools."
    )
    tool: str = Field("medlit", description="Tool name sent with every request.")
    requests_per_second: float | None = Field(
        None,
        gt=0,
        description="Override the rate limit (default: 3/s, or 10/s with an api_key).",
    )
    timeout_s: float = Field(20.0, gt=0, description="Timeout of one HTTP request, seconds.")
    max_retries: int = Field(4, ge=0, description="Retries after 429, 5xx and timeouts.")
    backoff_base_s: float = Field(0.5, ge=0, description="First backoff delay; doubles per try.")
    backoff_max_s: float = Field(30.0, ge=0, description="Longest single backoff delay.")
    efetch_batch: int = Field(200, ge=1, le=10000, description="PMIDs per efetch request.")
    post_threshold: int = Field(
        200, ge=1, description="Id lists longer than this are sent by POST, not GET."
    )
    enabled: bool = Field(True, description="Use PubMed in search_all_providers.")

    _check_url = field_validator("base_url")(_http_url)

    @property
    def rate(self) -> float:
        """Requests per second this configuration may send."""
        if self.requests_per_second is not None:
            return self.requests_per_second
        return 10.0 if self.api_key else 3.0


class EuropePMCSettings(_Section):
    """Europe PMC REST API."""

    base_url: str = Field(
        "https://www.ebi.ac.uk/europepmc/webservices/rest/",
        description="Europe PMC REST base URL.",
    )
    page_size: int = Field(25, ge=1, le=1000, description="Results per page (cursorMark paging).")
    timeout_s: float = Field(20.0, gt=0, description="Timeout of one HTTP request, seconds.")
    max_retries: int = Field(3, ge=0, description="Retries after 429, 5xx and timeouts.")
    backoff_base_s: float = Field(0.5, ge=0, description="First backoff delay; doubles per try.")
    backoff_max_s: float = Field(30.0, ge=0, description="Longest single backoff delay.")
    requests_per_second: float = Field(10.0, gt=0, description="Politeness limit for Europe PMC.")
    enabled: bool = Field(True, description="Use Europe PMC in search_all_providers.")

    _check_url = field_validator("base_url")(_http_url)


class FullTextSettings(_Section):
    """Full text of open-access articles (PubMed Central JATS), read for the articles an
    answer or a research job is about to use."""

    mode: Literal["auto", "off"] = Field(
        "auto",
        description="auto: read the full text of the open-access articles among an answer's "
        "evidence (or a research job's articles to read), never of every search hit; off: "
        "abstracts only, exactly as before.",
    )
    max_per_answer: int = Field(
        3, ge=0, le=20, description="Full texts one answer may fetch (its best articles first)."
    )
    max_per_job: int = Field(20, ge=0, le=500, description="Full texts one research job may fetch.")
    passages_per_article: int = Field(
        4,
        ge=1,
        le=20,
        description="Full-text passages of one article added to an answer's evidence at most: "
        "the closest to the question among its Results (text, tables and figures).",
    )
    embed_per_article: int = Field(
        7,
        ge=1,
        le=200,
        description="Full-text chunks of one article embedded for a question: its Results "
        "chunks (text, tables, figures) that BM25 ranks highest for the question; the "
        "passages are chosen among them. Each costs 40-120 ms of one core (its tokens).",
    )
    max_bytes: int = Field(
        10_000_000,
        ge=10_000,
        le=200_000_000,
        description="Largest JATS document read (bytes); a larger one is refused, the "
        "abstract still serves.",
    )
    elink: Literal["stale", "always", "never"] = Field(
        "stale",
        description="When to ask E-utilities elink (pubmed -> pmc) for a PMCID the record lacks: "
        "stale: only for records not fetched from PubMed now (local corpus, Europe PMC); a "
        "PubMed record names its PMCID when PMC holds the article. always or never.",
    )
    europepmc_fallback: bool = Field(
        True, description="Try Europe PMC's fullTextXML when PMC efetch fails."
    )


class LocalSettings(_Section):
    """The local corpus (your own PubMed XML / MEDLINE files, indexed with SQLite FTS5)."""

    enabled: bool = Field(True, description="Use the local corpus when it holds articles.")


class SearchSettings(_Section):
    """How a question is searched: the default source, each provider's deadline, the articles
    kept and the sources left to rest after a failure."""

    default_source: Literal["pubmed", "europepmc", "local", "all"] = Field(
        "pubmed", description="Source used when a command is not given --source."
    )
    provider_timeout_s: float = Field(
        45.0, gt=0, description="Each provider's own deadline in a search of several sources."
    )
    english_only: bool = Field(True, description="Drop articles whose language is not English.")
    default_limit: int = Field(20, ge=1, le=10000, description="Results per provider by default.")
    max_query_chars: int = Field(2000, ge=10, description="Longest accepted query, characters.")
    failed_source_rest_s: float = Field(
        300.0,
        ge=0,
        description="After a source fails (its retries spent), a long-lived caller (research "
        "job, service) leaves it out of searches that have another source for this many "
        "seconds (its own retries cover a short blip, and a slow model's research job asks "
        "minutes apart); 0 asks it every time.",
    )


class LLMTaskRoute(_Section):
    """Where one task type goes; unset fields fall back to the LLM section's defaults."""

    provider: Literal["openai", "hf"] | None = Field(None, description="Provider kind.")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL for this task.")
    api_key: SecretStr | None = Field(None, description="API key for this task's provider.")
    model: str | None = Field(None, description="Model name for this task.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(None, ge=1, description="Completion token limit.")
    seed: int | None = Field(None, description="Sampling seed for this task's calls.")

    _check_url = field_validator("base_url")(_http_url)


class LLMSettings(_Section):
    """The LLM client: default route, per-task overrides, retries, prices."""

    provider: Literal["openai", "hf"] = Field(
        "openai",
        description="Default provider: any OpenAI-compatible server, or the HF Inference API.",
    )
    base_url: str | None = Field(
        None,
        description="OpenAI-compatible base URL (e.g. http://localhost:11434/v1 for Ollama).",
    )
    api_key: SecretStr | None = Field(None, description="API key (or HF token for provider hf).")
    model: str | None = Field(None, description="Default model for every task.")
    temperature: float = Field(0.1, ge=0, le=2, description="Default sampling temperature.")
    max_tokens: int = Field(1200, ge=1, description="Default completion token limit.")
    seed: int | None = Field(
        None,
        description="Sampling seed sent with every call (OpenAI, vLLM, llama.cpp and Ollama "
        "honour it), so a rerun reproduces its answers where the server allows; None: none "
        "is sent.",
    )
    timeout_s: float = Field(
        120.0,
        gt=0,
        description="Timeout of one LLM request, seconds; for a streamed reply, of its first "
        "chunk (a local model reads the whole prompt first). A request that timed out is "
        "retried with twice the limit, up to four times this.",
    )
    stream_idle_timeout_s: float = Field(
        60.0,
        gt=0,
        description="Streamed replies: the longest silence allowed between two chunks, "
        "seconds (no total limit: a slow model that keeps writing is never cut off).",
    )
    max_retries: int = Field(3, ge=0, description="Retries after 429 and timeouts.")
    backoff_base_s: float = Field(1.0, ge=0, description="First backoff delay; doubles per try.")
    backoff_max_s: float = Field(60.0, ge=0, description="Longest single backoff delay.")
    structured_output: bool = Field(
        True, description="Send response_format json_schema where the provider takes it."
    )
    tasks: dict[str, LLMTaskRoute] = Field(
        default_factory=dict, description="Per-task overrides, keyed by task type."
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="USD per million (prompt, completion) tokens, keyed by model name.",
    )

    _check_url = field_validator("base_url")(_http_url)

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: dict[str, LLMTaskRoute]) -> dict[str, LLMTaskRoute]:
        if value:
            from medlit.llm.tasks import LLMTask

            known = [task.value for task in LLMTask]
            unknown = sorted(set(value) - set(known))
            if unknown:
                raise ValueError(
                    f"unknown task {', '.join(map(repr, unknown))} (valid: {', '.join(known)})"
                )
        return value


class EmbeddingSettings(_Section):
    """Sentence embeddings (all-MiniLM-L6-v2, shipped inside PyPI packages)."""

    backend: Literal["onnx", "sentence-transformers"] = Field(
        "onnx",
        description="onnx: int8 ONNX model, 0.5 s cold start (default). "
        "sentence-transformers: the same model on PyTorch, ~9 s import.",
    )
    batch_size: int = Field(
        4,
        ge=1,
        description="Texts per model call. Small batches cost a passage least on CPU: 4 takes "
        "half the time of 32 (benchmarks/embed_batch.py).",
    )
    threads: int = Field(0, ge=0, description="Inference threads (0: onnxruntime's choice).")
    max_length: int = Field(
        256, ge=8, le=512, description="Tokens per text; longer texts are truncated (ST: 256)."
    )
    memo_size: int = Field(
        4096, ge=0, description="Embeddings kept in memory by content hash (0: no memo)."
    )
    persist_memo: bool = Field(
        True,
        description="Also keep question embeddings in the store, so a repeated question is "
        "never embedded again, even in a new process.",
    )


class VerifyBandSettings(_Section):
    """Tier 1's verified band: a candidate just below ``tau`` that passed the guard is served
    only if an LLM (task ``verify_cache_hit``) judges that one answer fully answers both
    questions. See :mod:`medlit.cache.verify`.

    The band opens only when all hold: ``enabled``, a model is configured for
    ``verify_cache_hit``, and a ``threshold`` is known for that model (set here, or shipped for
    a model that was measured). Otherwise tier 1 behaves exactly as without it.
    """

    enabled: bool = Field(
        True,
        description="Verify band candidates with the LLM when a calibrated threshold is known "
        "for the verifier model (off: tier 1 serves only at cosine >= tau).",
    )
    lower: float = Field(
        0.78,
        ge=0,
        le=1,
        description="Lowest cosine similarity sent to the verifier; below it is a miss "
        "(measured with benchmarks/cache_pairs.py --verify).",
    )
    threshold: float | None = Field(
        None,
        gt=0,
        le=1,
        description="P('Yes') from the token logprobs, the lower of both question orders, "
        "that a verified hit needs. None: the value shipped for the verifier model "
        "(medlit.cache.verify.CALIBRATED_THRESHOLDS), and no band for a model without one. "
        "Set it from benchmarks/cache_pairs.py --calibrate for another model.",
    )
    vote_lower: float = Field(
        0.88,
        ge=0,
        le=1,
        description="Only where the provider gives no logprobs: a plain one-word Yes in both "
        "orders is accepted, and only at cosine >= this (stricter than `lower`: a one-word "
        "vote of a small model accepts many different questions).",
    )
    max_calls: int = Field(
        2,
        ge=1,
        le=2,
        description="Verification calls per lookup at most: 2 asks one candidate in both "
        "orders (or two candidates that each fail the first order); 1 can only refuse.",
    )
    timeout_s: float = Field(
        20.0,
        gt=0,
        description="Longest wait for the verifier in one lookup; slower is a miss, never an "
        "error of the ask.",
    )


class CacheSettings(_Section):
    """The two-tier semantic cache."""

    enabled: bool = Field(True, description="Use the answer cache (tier 1) at all.")
    tau: float = Field(
        0.92,
        ge=0,
        le=1,
        description="Tier-1 cosine similarity a candidate needs; the guard then decides "
        "(docs/cache-guard.md). Chosen for safety: at 0.92 the guard serves none of 392 near "
        "questions that ask something else and all 183 rewordings that reach it "
        "(benchmarks/cache_contrast.py); precision 1.000 on medical question pairs "
        "(benchmarks/cache_pairs.py).",
    )
    min_score: float = Field(
        0.45, ge=0, le=1, description="Tier-1: the cached answer's retrieval score a hit needs."
    )
    subject_min_score: float | None = Field(
        0.25,
        ge=0,
        le=1,
        description="Tier-1: the retrieval score an answer needs to be kept, and a hit on it, "
        "when it misses min_score's bar (too few articles, or one alone, whose score is "
        "averaged over min_docs) but cites an article that speaks of the question's subject "
        "and outcome, or cites one article and its checks changed nothing; null keeps no "
        "such answer. Measured by benchmarks/admission.py (docs/cache-guard.md).",
    )
    guard: bool = Field(
        True,
        description="Serve a cached answer only when every word that differs is a spelling, "
        "an inflection, a vetted synonym or a function word (off: any candidate above tau).",
    )
    verify_band: VerifyBandSettings = Field(
        default_factory=VerifyBandSettings,
        description="LLM verification of candidates just below tau (JSON in the environment: "
        "MEDLIT_CACHE_VERIFY_BAND='{\"threshold\": 0.9}').",
    )
    answer_ttl_s: float = Field(30 * 86400.0, gt=0, description="Tier-1 time to live, seconds.")
    recheck_after_s: float = Field(
        7 * 86400.0,
        ge=0,
        description="A tier-1 answer served this long after it was stored or last checked "
        "first reruns its searches for articles entered since (one search per source): nothing "
        "new, it is served and says when it was checked; something new, the question is "
        "answered again from the stored evidence and the new articles, and the answer says "
        "what changed (docs/user-guide.md, Freshness). 0: every hit is checked. answer_ttl_s stays "
        "the upper bound.",
    )
    recheck_lease_s: float = Field(
        300.0,
        gt=0,
        description="How long one process's check of an answer for new articles keeps others "
        "(replicas sharing the store) from checking it too; they serve it as it is meanwhile.",
    )
    answer_capacity: int = Field(100_000, ge=1, description="Tier-1 entries kept (LRU).")
    evidence_ttl_s: float = Field(
        90 * 86400.0, gt=0, description="Tier-2 (articles and chunks) time to live, seconds."
    )
    evidence_capacity: int = Field(
        1_000_000, ge=1, description="Tier-2 chunks kept (LRU, by article)."
    )
    ann_dtype: Literal["f32", "f16", "i8"] = Field(
        "f16",
        description="Scalar type of the ANN index (usearch); similarities used for decisions "
        "are always recomputed exactly from the float32 vectors in SQLite.",
    )
    ann_connectivity: int = Field(16, ge=4, le=64, description="HNSW links per node (M).")
    ann_expansion_add: int = Field(128, ge=8, description="HNSW candidate list when adding.")
    ann_expansion_search: int = Field(
        128,
        ge=8,
        description="HNSW candidate list of the embedded store's tier-2 (chunks) index "
        "(recall vs speed; 64 lost recall@10 below 0.95 at a million chunks). PostgreSQL: "
        "pg_ef_search_chunks.",
    )
    ann_expansion_search_answers: int = Field(
        64,
        ge=8,
        description="HNSW candidate list of the embedded store's tier-1 (answers) index: a "
        "hundred thousand questions keep full recall at 64, and every lookup pays for a wider "
        "list. PostgreSQL: pg_ef_search_answers.",
    )
    pg_ef_search_answers: int = Field(
        40,
        ge=8,
        le=1000,
        description="PostgreSQL: HNSW candidate list (hnsw.ef_search) of the tier-1 index. "
        "pgvector's graph holds float32 vectors: 40 keeps recall@10 1.000 at 100,000 answers "
        "and costs half the time of 64 (benchmarks/cache_latency.py --ef-answers).",
    )
    pg_ef_search_chunks: int = Field(
        64,
        ge=8,
        le=1000,
        description="PostgreSQL: HNSW candidate list (hnsw.ef_search) of the tier-2 index. At "
        "a million chunks, 64 kept recall@10 0.96 (p99 18 ms idle), 80 0.97-0.98 (24 ms), 128 "
        "0.99 (30 ms) (benchmarks/cache_latency.py --ef-chunks).",
    )
    answer_exact_scan_max: int = Field(
        5_000,
        ge=0,
        description="PostgreSQL: a tier-1 lookup in a namespace of at most this many answers "
        "scans that namespace's rows exactly (its work never depends on another tenant's "
        "answers; ~2 us a row); a bigger namespace uses the shared HNSW index, filtered.",
    )
    flush_interval_s: float = Field(
        1.0,
        ge=0,
        description="Hit counters and LRU refreshes are written in one batch at most this "
        "often (and on close), keeping writes off the lookup path; 0 writes at every lookup.",
    )
    ann_delta_limit: int = Field(
        2_000,
        ge=0,
        description="Keys changed since an ANN index was saved that are kept in a small "
        "in-memory delta (the saved, memory-mapped index untouched; at most a twentieth of "
        "the index) before the index is copied, updated and saved. Adding evidence to a "
        "million-chunk index then costs milliseconds instead of seconds; each process that "
        "opens the index rebuilds the delta from the change log (~0.1 ms a key).",
    )
    sqlite_cache_mb: int = Field(
        64,
        ge=2,
        description="SQLite page cache per connection: keeps the upper levels of the chunk "
        "and article B-trees in memory (a tier-2 search reads ~18 random rows).",
    )
    sqlite_mmap_mb: int = Field(
        2048,
        ge=0,
        description="Read the database through a memory map of up to this size (fewer "
        "system calls per row; SQLite caps it at 2 GB by default); 0 turns it off.",
    )
    index_save_every: int = Field(
        2000,
        ge=1,
        description="Save an ANN index after this many changes (always saved on close; a "
        "stale index is repaired from SQLite on open).",
    )
    answer_index_cache_max: int = Field(
        64,
        ge=1,
        description="SQLite store: tier-1 indexes (one per tenant namespace) held in memory at "
        "once; the least recently used is saved and dropped past this, and opened again "
        "(memory-mapped, caught up from the change log) at its namespace's next lookup.",
    )


class ChecksSettings(_Section):
    """The checks that hold a model's answer to its evidence (``docs/checks.md`` lists them)."""

    disabled: list[str] = Field(
        default_factory=list,
        description="Ids of checks not to run, in ask and in research, e.g. "
        "MEDLIT_CHECKS_DISABLED='[\"wrong-years\"]' (docs/checks.md lists every id). An "
        "unknown id is an error.",
    )

    @field_validator("disabled")
    @classmethod
    def _known_checks(cls, value: list[str]) -> list[str]:
        if value:
            from medlit.checks import refuse_unknown

            refuse_unknown(value)
        return value


class AgentSettings(_Section):
    """The ask loop: scoring, stop rules, memory."""

    score_threshold: float = Field(
        0.55,
        ge=0,
        le=1,
        description=(
            "retrieval_score that, when confident and an article of the evidence speaks of the "
            "question's subject, stops the loop."
        ),
    )
    min_docs: int = Field(3, ge=1, description="Distinct articles needed to be confident.")
    max_iterations: int = Field(3, ge=1, description="Fetch rounds at most.")
    max_api_calls: int = Field(12, ge=1, description="Source calls per question at most.")
    stagnation_rounds: int = Field(2, ge=1, description="Rounds without gain before stopping.")
    min_gain: float = Field(0.01, ge=0, description="Score gain that counts as progress.")
    fetch_per_round: int = Field(20, ge=1, le=200, description="Articles asked for per round.")
    top_k: int = Field(8, ge=1, le=50, description="Evidence chunks given to the answer.")
    memory_summarize_every: int = Field(
        4, ge=1, description="Turns between LLM summaries of the chat memory."
    )
    prompt_version: str = Field("ask-v1", description="Part of the cache fingerprint.")
    min_evidence_similarity: float = Field(
        0.30,
        ge=0,
        le=1,
        description="Chunks less similar than this to the question are never used as "
        "evidence (an unrelated cached abstract must not become a 'finding').",
    )
    min_relevance: float = Field(
        0.45,
        ge=0,
        le=1,
        description="Cosine similarity a chunk needs for its article to count towards min_docs.",
    )
    direct_match_similarity: float = Field(
        0.85,
        ge=0,
        le=1,
        description="A chunk this similar to the question is a study of exactly this question: "
        "the evidence counts as confident even with fewer than min_docs articles.",
    )
    recency_weight: float = Field(
        0.1, ge=0, le=0.5, description="Share of a chunk's score that recency can move."
    )
    recency_half_life_years: float = Field(
        10.0, gt=0, description="Years after which an article's recency score halves."
    )
    study_type_weight: float = Field(
        0.15, ge=0, le=0.5, description="Share of a chunk's score the study design can move."
    )
    diversity_bonus: float = Field(
        0.03, ge=0, le=0.5, description="Bonus for the best chunk of each distinct article."
    )
    candidate_chunks: int = Field(
        60, ge=1, le=1000, description="Tier-2 chunks retrieved per round before scoring."
    )
    neighbour_chunks: int = Field(
        1, ge=0, le=5, description="Chunks either side of an evidence chunk added as context."
    )
    max_context_chars: int = Field(
        12000, ge=500, description="Evidence characters at most in the answer prompt."
    )
    prompt_evidence_tokens: int = Field(
        400,
        ge=0,
        description="Evidence tokens at most in the answer prompt (estimated, 4 characters a "
        "token): each article gives the sentences that bear on the question, ranked as the "
        "evidence digest ranks them, conclusions first. 0: whole chunks, as retrieved.",
    )
    prompt_sentences_per_article: int = Field(
        3, ge=1, le=20, description="Sentences of one article at most in the answer prompt."
    )
    max_query_terms: int = Field(
        8, ge=1, le=30, description="Content words at most in the generated PubMed query."
    )
    memory_recent_turns: int = Field(
        4, ge=1, le=50, description="Recent questions kept verbatim in a session's memory."
    )
    max_question_chars: int = Field(
        1000, ge=10, description="Longest accepted question for medlit ask, characters."
    )


class ResearchDepth(_Section):
    """How much one depth level (quick, standard, deep) of a research job may do."""

    min_sub_questions: int = Field(
        3,
        ge=1,
        description="Fewest sub-questions a plan should have (fewer: the planner is asked once "
        "more, and the report says the plan stayed short).",
    )
    max_sub_questions: int = Field(
        4, ge=1, description="Most sub-questions kept from the plan (highest priority first)."
    )
    max_depth: int = Field(
        1, ge=1, description="Deepest level researched: plan questions are depth 1, follow-ups +1."
    )
    results_per_question: int = Field(
        3, ge=1, le=50, description="Articles researched (facts extracted) per sub-question."
    )
    max_provider_calls: int = Field(
        30, ge=1, description="Budget: source HTTP requests while researching."
    )
    max_llm_calls: int = Field(
        25, ge=1, description="Budget: LLM requests while researching (fact extraction)."
    )
    max_seconds: float = Field(
        300.0,
        gt=0,
        description="Budget: wall-clock seconds of the whole job (planning, research, "
        "verification, the report; all runs of it). An LLM call still running when they are "
        "spent is cut off, and what is left is written without the model.",
    )


#: Each depth's limits. An override (``MEDLIT_RESEARCH_DEEP='{"max_seconds": 100}'``) changes
#: the fields it names and keeps the rest of its own depth's.
_DEPTHS: dict[str, dict[str, float]] = {
    "quick": {
        "min_sub_questions": 3,
        "max_sub_questions": 4,
        "max_depth": 1,
        "results_per_question": 3,
        "max_provider_calls": 30,
        "max_llm_calls": 25,
        "max_seconds": 300.0,
    },
    "standard": {
        "min_sub_questions": 4,
        "max_sub_questions": 6,
        "max_depth": 2,
        "results_per_question": 5,
        "max_provider_calls": 80,
        "max_llm_calls": 70,
        "max_seconds": 900.0,
    },
    "deep": {
        "min_sub_questions": 5,
        "max_sub_questions": 10,
        "max_depth": 3,
        "results_per_question": 8,
        "max_provider_calls": 200,
        "max_llm_calls": 200,
        "max_seconds": 2400.0,
    },
}


class ResearchSettings(_Section):
    """Deep-research jobs: their depths, budgets and workers."""

    max_question_chars: int = Field(2000, ge=10, description="Longest accepted question.")
    concurrency: int = Field(3, ge=1, le=16, description="Sub-questions researched at once.")
    min_section_words: int = Field(300, ge=50, description="Words each report section needs.")
    expand_tries: int = Field(2, ge=0, description="Tries to expand a short section.")
    lease_s: float = Field(
        60.0,
        ge=1.0,
        description="Seconds a running job's claim lasts unless renewed (renewed every third "
        "of it); a job whose process died is picked up again by a worker after this long.",
    )
    quick: ResearchDepth = Field(
        default_factory=lambda: ResearchDepth(**_DEPTHS["quick"]),
        description="Limits of --depth quick.",
    )
    standard: ResearchDepth = Field(
        default_factory=lambda: ResearchDepth(**_DEPTHS["standard"]),
        description="Limits of --depth standard (the default).",
    )
    deep: ResearchDepth = Field(
        default_factory=lambda: ResearchDepth(**_DEPTHS["deep"]),
        description="Limits of --depth deep.",
    )

    @field_validator("quick", "standard", "deep", mode="before")
    @classmethod
    def _over_own_depth(cls, value: Any, info: ValidationInfo) -> Any:
        """A partial override keeps its own depth's other limits, not quick's."""
        if isinstance(value, dict) and info.field_name is not None:
            return {**_DEPTHS[info.field_name], **value}
        return value

    max_follow_ups: int = Field(
        2, ge=0, description="Follow-up sub-questions one sub-question may raise (recursion)."
    )
    visited_similarity: float = Field(
        0.88,
        ge=0,
        le=1,
        description="Cosine similarity at which a sub-question counts as an already visited "
        "topic and is skipped.",
    )
    reuse_min_similarity: float = Field(
        0.85,
        ge=0,
        le=1,
        description="Cached (tier-2) chunk similarity at which it answers a sub-question "
        "without a new search (MiniLM puts merely related abstracts at 0.7-0.8).",
    )
    reuse_min_articles: int = Field(
        3, ge=1, description="Distinct cached articles needed to skip the search of a sub-question."
    )
    max_abstract_chars: int = Field(
        6000, ge=200, description="Abstract characters sent to the LLM per article."
    )
    min_article_similarity: float = Field(
        0.4,
        ge=0,
        le=1,
        description="Title similarity to the research question or the sub-question below "
        "which a found article that also lacks the question's subject words is not read "
        "(MiniLM: 0.8 on topic, 0.25-0.35 for unrelated articles a broad search brings).",
    )

    def depth_config(self, depth: str) -> ResearchDepth:
        """The limits of one depth level (``quick``, ``standard`` or ``deep``)."""
        config = {"quick": self.quick, "standard": self.standard, "deep": self.deep}.get(depth)
        if config is None:
            raise KeyError(depth)
        return config


class ServiceSettings(_Section):
    """The HTTP service (``medlit serve``)."""

    max_body_bytes: int = Field(
        65536, ge=1024, description="Largest request body accepted; a larger one gets a 413."
    )
    rate_limit_per_minute: int = Field(
        600,
        ge=0,
        description="Requests one API key may make per minute (0: no limit); a key may carry "
        "its own limit (medlit keys create --rate-limit).",
    )
    rate_limit_burst: int = Field(
        60, ge=1, description="Requests one API key may make at once before the rate applies."
    )
    research_workers: int = Field(
        2, ge=1, le=32, description="Research jobs the service runs at once."
    )
    research_tenant_concurrency: int = Field(
        0,
        ge=0,
        le=32,
        description="Research jobs one tenant may run at once, across every process sharing "
        "the store (0: one fewer than research_workers, at least 1, so another tenant's job "
        "always finds a free worker). Waiting jobs are taken tenant by tenant, the tenant "
        "with the fewest running first.",
    )
    research_tenant_queue: int = Field(
        20,
        ge=1,
        le=10000,
        description="Unfinished research jobs (queued or running) one tenant may have; one "
        "more is refused with a 429 and Retry-After.",
    )
    research_process: bool = Field(
        True,
        description="Run research jobs in a child process of the service (its own "
        "interpreter and GIL, started when the first job needs it), so a job's CPU work never "
        "delays a cached answer; false: on the service's own event loop.",
    )
    ask_concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="Cache misses answered at once (more wait their turn; hits never wait).",
    )
    background_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="How many nice levels below the service's CPU priority its background work "
        "runs: the embedding model's batches (a cache miss's new articles, its digest) and the "
        "research process. A core they share with cached answers goes to the cached answers "
        "first (0: same priority). Linux; elsewhere the work runs at normal priority.",
    )
    recheck_interval_s: float = Field(
        0.0,
        ge=0,
        description="Every this many seconds, the service checks the tier-1 answers due "
        "(cache.recheck_after_s) for new articles in the background, as `medlit cache "
        "recheck` does (0: off; a due answer is then checked when it is next asked for).",
    )
    key_cache_s: float = Field(
        2.0,
        ge=0,
        description="Seconds a verified API key is trusted before it is read again "
        "(a revoked key stops working within this time).",
    )


class Settings(BaseModel):
    """All of medlit's settings: the values given, else the environment's (``MEDLIT_...``,
    see :func:`environment`), else the defaults. Build once at the edge and pass down."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def __init__(self, **values: Any) -> None:
        super().__init__(**_given_over(environment(), values))

    home: Path = Field(
        default_factory=_default_home,
        description="Data directory: the store, the index, the local corpus, jobs, logs.",
    )
    namespace: str = Field("default", min_length=1, description="Tenant scope of the answer cache.")
    database_url: SecretStr | None = Field(
        None,
        description="PostgreSQL (with pgvector) shared by several service replicas and workers, "
        "e.g. postgresql://medlit:secret@db:5432/medlit: the caches, sessions, jobs and the NCBI "
        "rate-limit state live there. Unset: the embedded SQLite store under home.",
    )
    database_pool_size: int = Field(
        10, ge=1, le=200, description="Connections each process keeps to database_url at most."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "error",
        description="Log level of the structured log on stderr (commands report problems "
        "that matter themselves; 'warning' or 'info' shows the details behind them).",
    )
    pubmed: PubMedSettings = Field(default_factory=PubMedSettings)
    europepmc: EuropePMCSettings = Field(default_factory=EuropePMCSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    fulltext: FullTextSettings = Field(default_factory=FullTextSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    checks: ChecksSettings = Field(default_factory=ChecksSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)

    @field_validator("home", mode="before")
    @classmethod
    def _home_given(cls, value: object) -> object:
        # Path("") is the current directory: an empty MEDLIT_HOME would scatter the store there.
        if isinstance(value, str | Path) and not str(value).strip():
            raise ValueError("is empty; unset MEDLIT_HOME to use the default data directory")
        return value

    @field_validator("home", mode="after")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("database_url", mode="after")
    @classmethod
    def _check_database_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        scheme = value.get_secret_value().split(":", 1)[0].lower()
        if scheme not in ("postgresql", "postgres"):
            raise ValueError("database_url must be a postgresql://... URL")
        return value

    @property
    def database_label(self) -> str:
        """Where the store lives, safe to print: the SQLite path or the URL without password."""
        if self.database_url is None:
            return str(self.db_path)
        return mask_url(self.database_url.get_secret_value())

    @property
    def db_path(self) -> Path:
        """The SQLite database: the source of truth for caches, corpus, jobs, sessions."""
        return self.home / "medlit.sqlite3"

    def answer_fingerprint(self, sources: list[str], llm_model: str | None) -> str:
        """Hash of everything that shapes an answer: a change must not serve old answers."""
        return _answer_fingerprint(
            answering_code(),
            self.agent.prompt_version,
            llm_model or "extractive",
            tuple(sorted(sources)),
            self.search.english_only,
            self.fulltext.mode,
        )


@functools.lru_cache(maxsize=256)
def _answer_fingerprint(
    code: str,
    prompt: str,
    model: str,
    sources: tuple[str, ...],
    english_only: bool,
    fulltext: str = "off",
) -> str:
    # Memoised: every ask (every cached hit) needs it, and a few settings combinations exist.
    shaping = {
        "code": code,  # medlit.code_version: an upgrade's answers are its own
        "embedder": "all-MiniLM-L6-v2",
        "prompt": prompt,
        "model": model,
        "sources": list(sources),
        "english_only": english_only,
    }
    if fulltext != "off":  # answers read from full text are not abstract-only answers
        shaping["fulltext"] = fulltext
    raw = json.dumps(shaping, sort_keys=True).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for logs and ``medlit config``)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


ENV_PREFIX = "MEDLIT_"
_PLAIN = (str, int, float, bool, Path, SecretStr)


def _plain(annotation: Any) -> bool:
    """Whether a field of this type takes its variable's text as it is (pydantic-settings
    parses JSON for a model, a list, a dict or a union holding one)."""
    if annotation in _PLAIN or annotation is type(None):
        return True
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return all(isinstance(arg, str) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return all(_plain(arg) for arg in typing.get_args(annotation))
    return False


@functools.cache
def _plain_names() -> dict[str, tuple[str, ...]]:
    """``medlit_<field>`` and ``medlit_<section>_<field>`` of every field of a plain type:
    where each sets its value."""
    prefix = ENV_PREFIX.lower()
    names: dict[str, tuple[str, ...]] = {}
    for name, info in Settings.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, _Section):
            for sub, sub_info in kind.model_fields.items():
                if _plain(sub_info.annotation):
                    names[f"{prefix}{name}_{sub}"] = (name, sub)
        elif _plain(kind):
            names[f"{prefix}{name}"] = (name,)
    return names


def environment() -> dict[str, Any]:
    """The settings the ``MEDLIT_`` variables give, as pydantic-settings reads them (names in
    any case; ``_`` between section and field; JSON for complex fields), not yet validated.

    Raises:
        pydantic_settings.SettingsError: a complex field's value is not JSON.
    """
    prefix = ENV_PREFIX.lower()
    given = [(k.lower(), v) for k, v in os.environ.items() if k.lower().startswith(prefix)]
    names = _plain_names()
    values: dict[str, Any] = {}
    for name, value in given:
        where = names.get(name)
        if where is None or not value:  # JSON, a section, a name it does not know, "": theirs
            return _read_by_pydantic_settings()
        if len(where) == 1:
            values[where[0]] = value
        else:
            values.setdefault(where[0], {})[where[1]] = value
    if len({name for name, _ in given}) < len(given):  # the same name in two cases
        return _read_by_pydantic_settings()
    return values


def _read_by_pydantic_settings() -> dict[str, Any]:
    from pydantic_settings import EnvSettingsSource

    values: dict[str, Any] = EnvSettingsSource(_environment_reader())()
    return values


@functools.cache
def _environment_reader() -> Any:
    """A pydantic-settings model of :class:`Settings`' fields (never validated: its source
    reads the variables)."""
    from pydantic import create_model
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class _Reader(BaseSettings):
        model_config = SettingsConfigDict(
            env_prefix=ENV_PREFIX,
            env_nested_delimiter="_",
            env_nested_max_split=1,
            extra="forbid",
        )

    fields: Any = {name: (info.annotation, info) for name, info in Settings.model_fields.items()}
    return create_model("Settings", __base__=_Reader, **fields)


def _given_over(environment: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` over ``environment``, section by section where both give a section's fields
    as a dict (as pydantic-settings merges them)."""
    merged = dict(environment)
    for name, value in given.items():
        below = merged.get(name)
        if isinstance(below, dict) and isinstance(value, dict):
            merged[name] = _given_over(below, value)
        else:
            merged[name] = value
    return merged
