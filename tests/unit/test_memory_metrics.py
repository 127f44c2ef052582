"""The metrics recorder with an in-memory fake Redis client injected through its constructor."""

from __future__ import annotations

from typing import Any

import redis

from memory.keys import Keys
from memory.metrics import MetricsRecorder


class FakeRedis:
    """The few commands the recorder uses: XADD/XRANGE on a stream, HINCRBY/HGETALL, DEL."""

    def __init__(self, fail: bool = False) -> None:
        self.streams: dict[str, list[tuple[bytes, dict[bytes, bytes]]]] = {}
        self.hashes: dict[str, dict[bytes, int]] = {}
        self.maxlen: dict[str, int] = {}
        self.round_trips = 0
        self.fail = fail

    def pipeline(self, transaction: bool = True) -> FakePipeline:
        return FakePipeline(self)

    def xrange(self, name: str, min: str = "-", max: str = "+", count: int | None = None) -> list:
        entries = self.streams.get(name, [])
        lo = int(min.split("-")[0]) if min not in ("-", "") else 0
        out = [e for e in entries if int(e[1][b"ts"]) >= lo]
        return out[:count] if count else out

    def hgetall(self, name: str) -> dict[bytes, bytes]:
        return {k: str(v).encode() for k, v in self.hashes.get(name, {}).items()}

    def delete(self, *names: str) -> int:
        n = 0
        for name in names:
            n += int(self.streams.pop(name, None) is not None)
            n += int(self.hashes.pop(name, None) is not None)
        return n


class FakePipeline:
    def __init__(self, r: FakeRedis) -> None:
        self.r = r
        self.ops: list[tuple[str, tuple[Any, ...]]] = []

    def xadd(
        self, name: str, fields: dict[str, str], maxlen: int | None = None, approximate: bool = True
    ) -> None:
        self.ops.append(("xadd", (name, fields, maxlen)))

    def hincrby(self, name: str, key: str, amount: int = 1) -> None:
        self.ops.append(("hincrby", (name, key, amount)))

    def execute(self) -> list:
        self.r.round_trips += 1
        if self.r.fail:
            raise redis.ConnectionError("Connection refused")
        for op, args in self.ops:
            if op == "xadd":
                name, fields, maxlen = args
                stream = self.r.streams.setdefault(name, [])
                stream.append(
                    (
                        f"{len(stream)}-0".encode(),
                        {k.encode(): v.encode() for k, v in fields.items()},
                    )
                )
                if maxlen:
                    self.r.maxlen[name] = maxlen
                    del stream[:-maxlen]
            else:
                name, key, amount = args
                h = self.r.hashes.setdefault(name, {})
                h[key.encode()] = h.get(key.encode(), 0) + amount
        return [True] * len(self.ops)


def recorder(fake: FakeRedis, max_entries: int = 1000) -> MetricsRecorder:
    return MetricsRecorder(fake, Keys("t"), max_entries, background=False)  # type: ignore[arg-type]


def test_samples_carry_type_operation_latency_and_hit() -> None:
    fake = FakeRedis()
    m = recorder(fake)
    m.record("episodic", "recall", 12.3456, hit=True)
    m.record("semantic", "recall", 3.0, hit=False)
    m.record("episodic", "add", 1.5)
    samples = m.latency_samples()
    assert [(s["type"], s["op"], s["ms"], s["hit"]) for s in samples] == [
        ("episodic", "recall", 12.346, True),
        ("semantic", "recall", 3.0, False),
        ("episodic", "add", 1.5, None),
    ]
    assert all(s["ts"] > 0 for s in samples)


def test_nothing_is_written_until_a_flush_and_then_in_one_round_trip() -> None:
    fake = FakeRedis()
    m = recorder(fake)
    for i in range(50):
        m.record("episodic", "recall", float(i), hit=i % 2 == 0)
    m.count("embed_cache_miss", 3)
    assert fake.round_trips == 0 and fake.streams == {}
    m.flush()
    assert fake.round_trips == 1
    assert len(fake.streams["t:metrics:{metrics}:latency"]) == 50
    m.flush()  # nothing new: no round trip
    assert fake.round_trips == 1


def test_retention_is_bounded() -> None:
    fake = FakeRedis()
    m = recorder(fake, max_entries=10)
    for i in range(25):
        m.record("procedural", "recall", float(i))
    samples = m.latency_samples()
    assert fake.maxlen["t:metrics:{metrics}:latency"] == 10
    assert len(samples) == 10
    assert samples[-1]["ms"] == 24.0  # the newest are kept


def test_counters_add_up_across_flushes() -> None:
    fake = FakeRedis()
    m = recorder(fake)
    m.count("embed_cache_miss")
    m.count("embed_cache_local_hit", 2)
    m.count("embed_cache_redis_hit", 0)  # zero is not written
    assert m.counters() == {"embed_cache_miss": 1, "embed_cache_local_hit": 2}
    m.count("embed_cache_miss")
    assert m.counters()["embed_cache_miss"] == 2


def test_since_filters_older_samples() -> None:
    m = recorder(FakeRedis())
    m.record("episodic", "add", 1.0)
    (first,) = m.latency_samples()
    assert m.latency_samples(since_ms=first["ts"] + 10_000) == []


def test_an_unreachable_redis_never_breaks_the_caller() -> None:
    fake = FakeRedis(fail=True)
    m = recorder(fake)
    m.record("episodic", "recall", 1.0, hit=True)
    m.count("embed_cache_miss")
    m.flush()  # logged, not raised
    m.close()
    assert fake.streams == {}
