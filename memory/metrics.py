"""Latency samples and counters of memory operations in Redis, bounded: samples are buffered and
written by a background thread (no round trip on the answer path) to a stream capped with
MAXLEN; counters live in one hash."""

from __future__ import annotations

import logging
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
    def latency_samples(self, since_ms: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Samples newer than `since_ms`, oldest first: ts, type, op, ms, hit (None/True/False)."""
        self.flush()
        raw = cast(
            "list[tuple[Any, dict[Any, Any]]]",
            self._r.xrange(self._keys.metrics_latency, min=f"{since_ms}-0", count=limit) or [],
        )
        # Tens of thousands of samples for the Stats page: each field is read by its key,
        # not every key and value run through `as_str` (that was half the page's run).
        names: tuple[Any, ...] = ("ts", "type", "op", "ms", "hit")
        if raw and isinstance(next(iter(raw[0][1]), b""), bytes):
            names = tuple(n.encode() for n in names)
        ts, mtype, op, ms, hit = names
        out = []
        for _id, f in raw:
            h = as_str(f.get(hit, ""))
            out.append(
                {
                    "ts": int(f[ts]),
                    "type": as_str(f[mtype]),
                    "op": as_str(f[op]),
                    "ms": float(f[ms]),
                    "hit": None if h == "" else h == "1",
                }
            )
        return out

    def last_sample_id(self) -> str:
        """The id of the newest latency sample ("" when none): changes with every sample, so
        a reader that kept the samples knows cheaply whether they are still current."""
        self.flush()
        last = self._r.xrevrange(self._keys.metrics_latency, count=1)
        return as_str(last[0][0]) if last else ""

    def counters(self) -> dict[str, int]:
        self.flush()
        raw = self._r.hgetall(self._keys.metrics_counters)
        return {as_str(k): int(v) for k, v in raw.items()}
