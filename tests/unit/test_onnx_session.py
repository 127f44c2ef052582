"""The ONNX embedder's session settings and parallel runs (issue 19 item 5: bulk ingest)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from memory.embeddings import OnnxMiniLMEmbedder
from memory.embeddings.onnx_minilm import BATCH_SIZE, MAX_WORKERS


def test_each_model_run_uses_one_thread() -> None:
    """Parallelism comes from runs on worker threads, not from a thread pool inside a run:
    its threads waited for each other after each small op (and spun on the cores Redis
    needed)."""
    options = OnnxMiniLMEmbedder()._session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1


def test_bulk_batches_run_on_worker_threads_and_keep_each_texts_vector() -> None:
    embedder = OnnxMiniLMEmbedder(workers=2)
    texts = [f"memory number {i}: " + "word " * (i % 23) for i in range(5 * BATCH_SIZE + 3)]
    seen: set[str] = set()
    run = embedder._run

    def recording_run(batch: list[str]) -> np.ndarray:
        seen.add(threading.current_thread().name)
        return run(batch)

    embedder._run = recording_run  # type: ignore[method-assign]
    bulk = embedder.embed_many(texts)
    assert seen and all(name.startswith("embed") for name in seen)
    # same vector as the text embedded alone, in whatever batch and thread it ran
    alone = np.stack([run([t])[0] for t in texts])
    assert np.allclose(bulk, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)


def test_a_single_batch_runs_in_the_callers_thread() -> None:
    embedder = OnnxMiniLMEmbedder(workers=2)
    embedder.embed_many(["one text", "and another"])
    assert embedder._pool is None


def test_workers_follow_the_cpus_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container pinned to one CPU of a 64-CPU host runs one batch at a time; a large
    machine runs at most MAX_WORKERS (each run holds its activations)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert OnnxMiniLMEmbedder().workers == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert OnnxMiniLMEmbedder().workers == MAX_WORKERS
    assert OnnxMiniLMEmbedder(workers=3).workers == 3


def test_concurrent_callers_share_the_workers_and_get_their_own_vectors() -> None:
    """The app's bookkeeping worker and a chat session may embed at the same time."""
    embedder = OnnxMiniLMEmbedder(workers=2)
    a = [f"first caller's memory {i}" for i in range(3 * BATCH_SIZE)]
    b = [f"a second caller asks about topic {i} " * (1 + i % 4) for i in range(2 * BATCH_SIZE)]
    inputs = [a, b, a, b]
    got: list[np.ndarray | None] = [None] * len(inputs)

    def call(k: int) -> None:
        got[k] = embedder.embed_many(inputs[k])

    callers = [threading.Thread(target=call, args=(k,)) for k in range(len(inputs))]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    expected = {id(a): embedder.embed_many(a), id(b): embedder.embed_many(b)}
    for texts, vecs in zip(inputs, got, strict=True):
        assert vecs is not None
        assert np.allclose(vecs, expected[id(texts)], atol=1e-6)
