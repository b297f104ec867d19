"""Identical text is embedded once: a content-hash memo in front of any :class:`Embedder`.

Two levels: an LRU in memory (per process), and optionally the store (the ``embedding_memo``
table), so a question asked again in a *new* process is answered from the store without loading
the model at all, which is what keeps a cached ``medlit ask`` under its start-up budget. Only
short texts (questions, titles: up to ``persist_max_chars``) are persisted; chunk vectors already
live in the evidence cache.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from medlit.embeddings.base import Embedder, Vectors, load_model

if TYPE_CHECKING:
    from medlit.storage.base import Store

__all__ = ["MemoEmbedder", "text_hash"]


def text_hash(text: str) -> str:
    """The memo key of a text: sha256 of its UTF-8 bytes (hex, 32 chars)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class MemoEmbedder:
    """Wrap ``inner`` so each distinct text is embedded at most once.

    Args:
        inner: the embedder that does the work.
        capacity: texts kept in the in-memory LRU (0 disables it).
        store: where vectors of short texts persist across processes (None: memory only).
        persist_max_chars: longest text persisted in the store.

    Attributes:
        computed: texts the inner embedder actually embedded (for tests and stats).
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        capacity: int = 4096,
        store: Store | None = None,
        persist_max_chars: int = 512,
    ) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.capacity = capacity
        self.store = store
        self.persist_max_chars = persist_max_chars
        self.computed = 0
        self._lru: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, reusing any vector already computed for the same text."""
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        keys = [text_hash(t) for t in texts]
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                vec = self._lru.get(key)
                if vec is None:
                    missing.setdefault(key, []).append(i)
                else:
                    self._lru.move_to_end(key)
                    out[i] = vec
        if missing and self.store is not None:
            stored = self.store.get_embeddings(self.model_id, list(missing))
            for key, vec in stored.items():
                for i in missing.pop(key):
                    out[i] = vec
                self._remember(key, vec)
        if missing:
            todo = list(missing)
            vectors = self.inner.embed([texts[missing[key][0]] for key in todo])
            self.computed += len(todo)
            persist: dict[str, Vectors] = {}
            for key, vec in zip(todo, vectors, strict=True):
                for i in missing[key]:
                    out[i] = vec
                self._remember(key, vec)
                if len(texts[missing[key][0]]) <= self.persist_max_chars:
                    persist[key] = vec
            if persist and self.store is not None:
                self.store.put_embeddings(self.model_id, persist)
        return out

    def load(self) -> None:
        """Load the inner embedder's model now (see :func:`medlit.embeddings.base.load_model`)."""
        load_model(self.inner)

    def remembered(self, text: str) -> Vectors | None:
        """``text``'s vector if the in-memory LRU holds it, else None.

        No store read and no model: cheap enough for an event loop (a cached question's
        vector then costs no hop to a worker thread).
        """
        if self.capacity <= 0:
            return None
        key = text_hash(text)
        with self._lock:
            vec = self._lru.get(key)
            if vec is None:
                return None
            self._lru.move_to_end(key)
            return vec.copy()

    def _remember(self, key: str, vec: Vectors) -> None:
        import numpy as np

        if self.capacity <= 0:
            return
        with self._lock:
            self._lru[key] = np.array(vec, dtype=np.float32)  # a copy: callers may mutate out
            self._lru.move_to_end(key)
            while len(self._lru) > self.capacity:
                self._lru.popitem(last=False)
