"""Bookkeeping that recall and the write path cause, done off the answer path by one background
worker: warm-up (the statement classifier's fit), access counts of recalled memories, the user's
cached query texts (for a purge), a logged exchange's final vector. A failure is logged, never
raised: it must not cost anyone an answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import redis

from memory.keys import Keys
from memory.stores.episodic import EpisodicStore

log = logging.getLogger(__name__)


class Bookkeeper:
    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        episodic: EpisodicStore,
        cache_ttl_s: int,
        masked: Callable[[str], str] = lambda text: text,
    ) -> None:
        """`masked`: the text as the embedding cache keys it (its secrets masked): the query
        noted is that text, never the one typed."""
        self._r = client
        self._masked = masked
        self._keys = keys
        self._episodic = episodic
        self._cache_ttl_s = cache_ttl_s
        # One worker: tasks run in order, so `drain` waits for everything queued before it.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-bg")

    def note_query(self, user_id: str, query: str) -> None:
        """Remember that this user's query text is in the embedding cache."""
        self._pool.submit(self._note, user_id, query)

    def refine_vector(
        self, user_id: str, memory_id: str, text: str, embed: Callable[[str], np.ndarray]
    ) -> None:
        """Re-embed a stored memory from `text` (a logged exchange is written at once with the
        question's cached vector; its vector of record is `description (context)`, the
        assistant's reply included, like every other write path)."""
        self._pool.submit(self._refine, user_id, memory_id, text, embed)

    def prepare(self, task: Callable[[], object]) -> None:
        """Run a warm-up task (fitting a model recall needs) before the first answer needs
        it; a failure is logged, and the task runs again when recall needs it."""
        self._pool.submit(self._prepare, task)

    def after_recall(self, user_id: str, query: str | None, memory_ids: list[str]) -> None:
        """A finished recall's query noted (None: nothing embedded) and its hits' access
        counted: one task, queued once the recall is done (mid-recall, the woken worker took
        turns with it for the interpreter)."""
        if query is not None or memory_ids:
            self._pool.submit(self._after_recall, user_id, query, memory_ids)

    def drain(self) -> None:
        """Wait for queued bookkeeping (before a purge or import reads the user's keys)."""
        self._pool.submit(lambda: None).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _note(self, user_id: str, query: str) -> None:
        key = self._keys.user_queries(user_id)
        try:
            pipe = self._r.pipeline(transaction=False)
            pipe.sadd(key, self._masked(query))
            if self._cache_ttl_s:
                pipe.expire(key, self._cache_ttl_s)
            pipe.execute()
        except redis.RedisError as e:
            log.warning("Could not note a cached query: %s", e)

    def _refine(
        self, user_id: str, memory_id: str, text: str, embed: Callable[[str], np.ndarray]
    ) -> None:
        try:
            self._episodic.replace_vector(user_id, memory_id, embed(text))
        except Exception as e:  # noqa: BLE001 - the quick vector stays; recall still works
            log.warning("Could not refine the vector of %s: %s", memory_id, e)

    def _prepare(self, task: Callable[[], object]) -> None:
        try:
            task()
        except Exception as e:  # noqa: BLE001 - recall retries the task when it needs it
            log.warning("A warm-up task failed: %s", e)

    def _after_recall(self, user_id: str, query: str | None, memory_ids: list[str]) -> None:
        if query is not None:
            self._note(user_id, query)
        if not memory_ids:
            return
        try:
            self._episodic.touch(user_id, memory_ids)
        except redis.RedisError as e:
            log.warning("Could not update access counts: %s", e)
