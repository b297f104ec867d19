"""Test vectors: reproducible random unit vectors of the embedder's width."""

from __future__ import annotations

import numpy as np

DIM = 384


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    """A float32 unit vector drawn from ``seed`` (the same seed, the same vector)."""
    vec = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return vec / np.linalg.norm(vec)
