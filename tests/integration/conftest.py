"""Fixtures of the integration tests: a `MemoryCoordinator` on the session's Redis Stack.

The ONNX embedder is loaded once per session and handed to each test's coordinator through the
constructor, so a test pays only for its own namespace.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import redis

from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.embeddings import OnnxMiniLMEmbedder
from memory.models import MemoryType
from memory.stores.records import bytes_vector
from memory.stores.schema import VECTOR_FIELD
from tests.in_process import run_main


def stored_vector(
    coordinator: MemoryCoordinator, user_id: str, memory_type: MemoryType, memory_id: str
) -> np.ndarray:
    """The vector stored with an episodic memory or a fact, as recall reads it."""
    keys = coordinator.keys
    key = (
        keys.episodic(user_id, memory_id)
        if memory_type is MemoryType.EPISODIC
        else keys.semantic(memory_id)
    )
    raw = coordinator.redis.hget(key, VECTOR_FIELD)
    assert isinstance(raw, bytes), f"no vector stored at {key}"
    return bytes_vector(raw)


class SessionEmbedder:
    """The real ONNX MiniLM embedder, loaded once, remembering the vectors it computed.

    The model is deterministic, so a remembered vector is the vector the model would give;
    it only saves re-embedding the knowledge file in every test's fresh namespace."""

    def __init__(self) -> None:
        self.inner = OnnxMiniLMEmbedder()
        self.model_id = self.inner.model_id
        self.dims = self.inner.dims
        self._memo: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vecs = self.inner.embed_many(missing)
            with self._lock:
                self._memo.update(zip(missing, vecs, strict=True))
        with self._lock:
            rows = [self._memo[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.dims), dtype=np.float32)


@pytest.fixture(scope="session")
def embedder() -> SessionEmbedder:
    return SessionEmbedder()


@pytest.fixture
def coordinator(
    redis_client: redis.Redis, embedder: SessionEmbedder, settings: Settings
) -> Iterator[MemoryCoordinator]:
    """A coordinator in this test's namespace (knowledge file loaded); closed after the test."""
    coord = MemoryCoordinator(redis_client, embedder, settings)
    yield coord
    coord.close()


@pytest.fixture
def snapshot(redis_client: redis.Redis, namespace: str) -> Callable[[], dict[bytes, bytes]]:
    """Every key of the namespace that holds memories (not metrics, not the query-embedding
    cache) with its serialised content: equal snapshots mean nothing was written or removed."""

    def take() -> dict[bytes, bytes]:
        out: dict[bytes, bytes] = {}
        for key in redis_client.scan_iter(match=f"{namespace}*", count=1000):
            if b":metrics:" in key or key.startswith(f"{namespace}_embedcache".encode()):
                continue
            out[key] = redis_client.dump(key) or b""
        return out

    return take


Run = Callable[..., subprocess.CompletedProcess]


def cli_env(redis_url: str, namespace: str, **settings: str) -> dict[str, str]:
    """The environment of a `python -m memory` subprocess on the session's Redis, in this
    test's namespace (the ONNX embedder unless `settings` say otherwise), none of the
    caller's own settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "REDIS_", "EMBEDDING_", "OLLAMA_", "KNOWLEDGE_"))
    }
    env.update(
        REDIS_URL=redis_url,
        MEMORY_NAMESPACE=namespace,
        EMBEDDING_PROVIDER="onnx",
        PYTHONPATH=str(PROJECT_ROOT),
    )
    return {**env, **settings}


@pytest.fixture
def cli(redis_url: str, namespace: str, tmp_path: Path, coordinator: MemoryCoordinator) -> Run:
    """`python -m memory ARGS`, run in this process (`memory.cli.main`, as a subprocess would
    see it: tests/in_process.py); `ok`: assert exit 0; keywords: environment overrides. The
    coordinator fixture loads the knowledge file first."""
    from memory.cli import main

    env = cli_env(redis_url, namespace)

    def run(*args: str, ok: bool = True, **overrides: str) -> subprocess.CompletedProcess:
        # cwd: away from the project's .env
        proc = run_main(main, list(args), env={**env, **overrides}, cwd=tmp_path, prog="memory")
        if ok:
            assert proc.returncode == 0, proc.stderr
        return proc

    return run


@pytest.fixture
def cli_process(
    redis_url: str, namespace: str, tmp_path: Path, coordinator: MemoryCoordinator
) -> Run:
    """Like `cli`, as a real `python -m memory` subprocess: for what only a process shows
    (the module entry point, argv bytes from the OS, the import path)."""
    env = cli_env(redis_url, namespace)

    def run(*args: str, ok: bool = True, **overrides: str) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "memory", *args],
            cwd=tmp_path,  # away from the project's .env
            env={**env, **overrides},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if ok:
            assert proc.returncode == 0, proc.stderr
        return proc

    return run
