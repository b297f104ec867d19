"""Sentence embeddings behind the :class:`Embedder` protocol.

``load_embedder(settings, store)`` is the one entry point: the int8 ONNX all-MiniLM-L6-v2
(default) or the same model on sentence-transformers, memoised by content hash.
"""

from __future__ import annotations

from medlit.embeddings.base import MODEL_DIM, MODEL_NAME, Embedder, load_embedder, normalise
from medlit.embeddings.memo import MemoEmbedder, text_hash

__all__ = [
    "MODEL_DIM",
    "MODEL_NAME",
    "Embedder",
    "MemoEmbedder",
    "load_embedder",
    "normalise",
    "text_hash",
]
