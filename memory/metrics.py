"""Latency samples and counters of memory operations in Redis, bounded: samples are buffered and
written by a background thread (no round trip on the answer path) to a stream capped with
MAXLEN; counters live in one hash."""

from __future__ import annotations

import bisect
import logging
import sys
import threading
import time
from typing import Any, cast

import redis

from memory.boundary import translate_store_errors
from memory.keys import Keys
from memory.replies import as_str

log = logging.getLogger(__name__)


@translate_store_errors  # the Stats page reads it: a down Redis is a message there
class MetricsRecorder:
    def __init__(
        self,
        client: redis.Redis,
        keys: Keys,
        max_entries: int = 50_000,
        flush_interval_s: float = 0.5,
        background: bool = True,
    ) -> None:
        self._r = client
        self._keys = keys
        self._max = max_entries
        self._samples: list[dict[str, str]] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interval = flush_interval_s
        self._thread: threading.Thread | None = None
        self._read_lock = threading.Lock()  # the samples read so far, shared by the pages:
        self._read: list[dict[str, Any]] = []
        self._read_ids: list[tuple[int, int]] = []  # their stream ids, (ms, sequence)
        if background:
            self._thread = threading.Thread(target=self._loop, name="metrics-flush", daemon=True)
            self._thread.start()

    # --- recording ---------------------------------------------------------------------
    def record(self, memory_type: str, operation: str, ms: float, hit: bool | None = None) -> None:
        sample = {
            "ts": str(int(time.time() * 1000)),
            "type": memory_type,
            "op": operation,
            "ms": f"{ms:.3f}",
            "hit": "" if hit is None else ("1" if hit else "0"),
        }
        with self._lock:
            self._samples.append(sample)

    def count(self, name: str, n: int = 1) -> None:
        if n:
            with self._lock:
                self._counts[name] = self._counts.get(name, 0) + n

    # --- flushing ----------------------------------------------------------------------
    def flush(self) -> None:
        with self._lock:
            samples, self._samples = self._samples, []
            counts, self._counts = self._counts, {}
        if not samples and not counts:
            return
        try:
            pipe = self._r.pipeline(transaction=False)
            for s in samples:
                pipe.xadd(self._keys.metrics_latency, dict(s), maxlen=self._max, approximate=True)  # type: ignore[arg-type]
            for name, n in counts.items():
                pipe.hincrby(self._keys.metrics_counters, name, n)
            pipe.execute()
        except redis.RedisError as e:  # metrics must never break memory operations
            log.warning("Could not write %d metric samples: %s", len(samples), e)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.flush()

    def close(self) -> None:
        self._stop.set()
        self.flush()

    # --- reading -----------------------------------------------------------------------
    def latency_samples(self, since_ms: int = 0) -> list[dict[str, Any]]:
        """Samples newer than `since_ms`, oldest first: ts, type, op, ms, hit (None/True/False).
        The samples read are kept in this process, and a read fetches only those added since:
        decoding the whole stream (50k samples) was most of a Stats visit. Shared: never change
        them."""
        self.flush()
        with self._read_lock:
            self._catch_up()
            return self._read[bisect.bisect_left(self._read_ids, (since_ms, 0)) :]

    def _catch_up(self) -> None:
        """Drop the kept samples the stream trimmed and add the new ones; read it all again
        when the two disagree on how many there are (a stream deleted or rewritten)."""
        key = self._keys.metrics_latency
        for _ in range(2):
            after = "({}-{}".format(*self._read_ids[-1]) if self._read_ids else "-"
            pipe = self._r.pipeline(transaction=True)  # the three readings of one moment
            pipe.xlen(key)
            pipe.xrange(key, count=1)
            pipe.xrange(key, min=after)
            n, first, new = cast("tuple[int, list[Any], list[Any]]", pipe.execute())
            cut = bisect.bisect_left(self._read_ids, _id(first[0][0])) if first else len(self._read)
            del self._read[:cut], self._read_ids[:cut]
            self._read_ids += (_id(i) for i, _ in new)
            self._read += (self._decode(f) for _, f in new)
            if len(self._read) == n:
                return
            self._read, self._read_ids = [], []

    @staticmethod
    def _decode(f: dict[bytes, bytes]) -> dict[str, Any]:
        # each field read by its key (the client replies in bytes); the few types and steps
        # interned: one string each, however many samples name them
        hit = f.get(b"hit", b"")
        return {
            "ts": int(f[b"ts"]),
            "type": sys.intern(f[b"type"].decode()),
            "op": sys.intern(f[b"op"].decode()),
            "ms": float(f[b"ms"]),
            "hit": None if hit == b"" else hit == b"1",
        }

    def counters(self) -> dict[str, int]:
        self.flush()
        raw = self._r.hgetall(self._keys.metrics_counters)
        return {as_str(k): int(v) for k, v in raw.items()}


def _id(raw: Any) -> tuple[int, int]:
    ms, _, seq = as_str(raw).partition("-")
    return int(ms), int(seq)
