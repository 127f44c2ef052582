"""Embedding cache: an in-process LRU in front of RedisVL's `EmbeddingsCache`, for query
embeddings only (a memory keeps its vector in its hash). Texts are embedded and keyed with their
secrets masked; a user purge drops their entries; hits and misses are counted per level."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import numpy as np
import redis
from redisvl.extensions.cache.embeddings import EmbeddingsCache

from memory.embeddings.base import Embedder
from memory.metrics import MetricsRecorder
from memory.writing.secrets import PiiPolicy, lenient, mask_text

log = logging.getLogger(__name__)


class CachedEmbedder:
    """Wraps an embedder; same interface plus `embed_query` (cached) and cache management."""

    def __init__(
        self,
        embedder: Embedder,
        client: redis.Redis,
        name: str,
        ttl_s: int | None,
        metrics: MetricsRecorder | None = None,
        local_size: int = 2048,
        pii: PiiPolicy = "keep",
    ) -> None:
        self.inner = embedder
        # A search is never refused for an email in it: under `refuse` it is masked here.
        self._pii = lenient(pii)
        self._cache = EmbeddingsCache(name=name, ttl=ttl_s or None, redis_client=client)
        self._local: OrderedDict[str, np.ndarray] = OrderedDict()
        self._local_size = local_size
        self._metrics = metrics

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dims(self) -> int:
        return self.inner.dims

    def masked(self, text: str) -> str:
        """The text as it is embedded and cached: its secrets masked."""
        return mask_text(text, self._pii)

    def embed(self, text: str) -> np.ndarray:
        return self.inner.embed(self.masked(text))

    def embed_many(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_many([self.masked(t) for t in texts])

    def load(self) -> None:
        """Opens the model now, if it opens on first use (`OnnxMiniLMEmbedder.load`)."""
        load = getattr(self.inner, "load", None)
        if callable(load):
            load()

    def close(self) -> None:
        """Stops the model's worker threads, if it has any (a later bulk call restarts them)."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def embed_query(self, text: str) -> tuple[np.ndarray, str]:
        """Embedding of a query and where it came from: 'local', 'redis' or 'model'."""
        vec = self.local(text)
        if vec is not None:
            return vec, "local"
        text = self.masked(text)
        try:
            entry = self._cache.get(text, self.model_id)
        except redis.RedisError as e:
            log.warning("Embedding cache unavailable: %s", e)
            entry = None
        if entry is not None:
            vec = np.asarray(entry["embedding"], dtype=np.float32)
            self._count("embed_cache_redis_hit")
            source = "redis"
        else:
            vec = self.inner.embed(text)
            self._count("embed_cache_miss")
            try:
                self._cache.set(text, self.model_id, vec.tolist())
            except redis.RedisError as e:
                log.warning("Could not write the embedding cache: %s", e)
            source = "model"
        self._remember(text, vec)
        return vec, source

    # --- the recall's pipelined path -------------------------------------------------------
    # Recall folds the Redis level into its own round trips: the lookup rides in its first
    # pipeline (after the store marker), the write (or the TTL refresh of a hit) in its next
    # one, so it is queued only once the marker was verified. Entries are RedisVL's own (its
    # key and entry layout): `EmbeddingsCache.get` and `set` read and write the same.
    # Each masks the text first, like `embed_query`: the cache's key and entry never hold a
    # secret of the query.
    def local(self, text: str) -> np.ndarray | None:
        """The in-process hit for a query, counted; None when it must be looked up."""
        text = self.masked(text)
        vec = self._local.get(text)
        if vec is not None:
            self._local.move_to_end(text)
            self._count("embed_cache_local_hit")
        return vec

    def queue_lookup(self, pipe: Any, text: str) -> None:
        pipe.hgetall(self._cache._make_cache_key(self.masked(text), self.model_id))

    def from_lookup(self, text: str, raw: Any, pipe: Any) -> tuple[np.ndarray, str]:
        """The query's vector from the queued lookup's reply (the model on a miss); queues the
        cache write or TTL refresh on `pipe` (a later pipeline). Returns (vector, source)."""
        text = self.masked(text)
        entry = self._cache._process_cache_data(raw) if raw else None
        ttl = self._cache._resolve_ttl(None)
        key = self._cache._make_cache_key(text, self.model_id)
        if entry is not None:
            vec = np.asarray(entry["embedding"], dtype=np.float32)
            self._count("embed_cache_redis_hit")
            source = "redis"
        else:
            vec = self.inner.embed(text)
            self._count("embed_cache_miss")
            key, mapping = self._cache._prepare_entry_data(text, self.model_id, vec.tolist())
            pipe.hset(key, mapping=mapping)
            source = "model"
        if ttl:
            pipe.expire(key, ttl)
        self._remember(text, vec)
        return vec, source

    def forget(self, texts: list[str]) -> None:
        """Drop the cached embeddings of these texts (both levels)."""
        texts = [self.masked(t) for t in texts]
        for t in texts:
            self._local.pop(t, None)
        if texts:
            self._cache.mdrop(texts, self.model_id)

    def clear_local(self) -> None:
        self._local.clear()

    def _remember(self, text: str, vec: np.ndarray) -> None:
        self._local[text] = vec
        if len(self._local) > self._local_size:
            self._local.popitem(last=False)

    def _count(self, name: str) -> None:
        if self._metrics is not None:
            self._metrics.count(name)
