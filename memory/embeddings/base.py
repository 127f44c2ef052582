"""The embedder interface: text in, L2-normalised float32 vectors out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of a fixed dimension.

    `model_id` is recorded with each index so that vectors of different models are never mixed
    (one exception: the same weights at another precision, `memory.embeddings.model_ids`).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dims(self) -> int: ...

    def embed(self, text: str) -> np.ndarray:
        """One text -> a float32 vector of length `dims`, L2-normalised."""
        ...

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """Many texts -> a float32 matrix of shape (len(texts), dims), rows L2-normalised."""
        ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)
