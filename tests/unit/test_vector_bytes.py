"""The stored vector format: float16 bytes (half of float32), read back as float32, with the
cosine of unit vectors within ~1e-3 of the float32 one."""

from __future__ import annotations

import numpy as np

from memory.embeddings.base import l2_normalise
from memory.stores.records import bytes_vector, vector_bytes, vector_nbytes
from memory.stores.schema import VECTOR_DTYPE


def _unit(n: int, dims: int = 384) -> np.ndarray:
    return l2_normalise(np.random.default_rng(7).normal(size=(n, dims)).astype(np.float32))


def test_a_vector_is_stored_in_half_the_bytes_and_read_back_as_float32() -> None:
    vec = _unit(1)[0]
    raw = vector_bytes(vec)
    assert VECTOR_DTYPE == "float16"
    assert len(raw) == vector_nbytes(384) == 768
    back = bytes_vector(raw)
    assert back.dtype == np.float32 and back.shape == (384,)
    assert np.max(np.abs(back - vec)) < 1e-3
    assert vector_bytes(back) == raw  # a second round trip changes nothing


def test_cosine_of_stored_unit_vectors_moves_by_less_than_1e_3() -> None:
    vecs = _unit(200)
    stored = np.stack([bytes_vector(vector_bytes(v)) for v in vecs])
    exact = vecs @ vecs[0]
    assert np.max(np.abs(stored @ stored[0] - exact)) < 1e-3
