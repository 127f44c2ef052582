"""The metrics recorder with an in-memory fake Redis client injected through its constructor."""

from __future__ import annotations

from typing import Any

import redis

from memory.keys import Keys
from memory.metrics import MetricsRecorder


class FakeRedis:
    """The few commands the recorder uses: XADD/XLEN/XRANGE on a stream, HINCRBY/HGETALL, DEL;
    a stream id is the sample's `ts` and its place in the stream (ids only ever grow)."""

    def __init__(self, fail: bool = False) -> None:
        self.streams: dict[str, list[tuple[bytes, dict[bytes, bytes]]]] = {}
        self.hashes: dict[str, dict[bytes, int]] = {}
        self.maxlen: dict[str, int] = {}
        self.round_trips = 0
        self.entries_sent = 0  # stream entries replied
        self.added = 0  # every sample's sequence number: ids grow as in Redis
        self.fail = fail

    def pipeline(self, transaction: bool = True) -> FakePipeline:
        return FakePipeline(self)

    def xrange(self, name: str, min: str = "-", max: str = "+", count: int | None = None) -> list:
        after = min.startswith("(")
        lo = id_of(min.lstrip("(")) if min.lstrip("(") not in ("-", "") else (-1, -1)
        out = [
            e
            for e in self.streams.get(name, [])
            if (id_of(e[0]) > lo if after else id_of(e[0]) >= lo)
        ]
        out = out[:count] if count else out
        self.entries_sent += len(out)
        return out

    def xlen(self, name: str) -> int:
        return len(self.streams.get(name, []))

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

    def xlen(self, name: str) -> None:
        self.ops.append(("read", (self.r.xlen, (name,), {})))

    def xrange(self, name: str, **kw: Any) -> None:
        self.ops.append(("read", (self.r.xrange, (name,), kw)))

    def execute(self) -> list:
        self.r.round_trips += 1
        if self.r.fail:
            raise redis.ConnectionError("Connection refused")
        replies: list[Any] = []
        for op, args in self.ops:
            if op == "read":
                read, a, kw = args
                replies.append(read(*a, **kw))
            elif op == "xadd":
                name, fields, maxlen = args
                stream = self.r.streams.setdefault(name, [])
                stream.append(
                    (
                        f"{fields['ts']}-{self.r.added}".encode(),
                        {k.encode(): v.encode() for k, v in fields.items()},
                    )
                )
                self.r.added += 1
                if maxlen:
                    self.r.maxlen[name] = maxlen
                    del stream[:-maxlen]
                replies.append(True)
            else:
                name, key, amount = args
                h = self.r.hashes.setdefault(name, {})
                h[key.encode()] = h.get(key.encode(), 0) + amount
                replies.append(True)
        return replies


def id_of(raw: str | bytes) -> tuple[int, int]:
    ms, _, seq = (raw.decode() if isinstance(raw, bytes) else raw).partition("-")
    return int(ms), int(seq or 0)


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


def test_a_read_fetches_only_new_samples_and_follows_trims_and_rewrites() -> None:
    fake = FakeRedis()
    m = recorder(fake, max_entries=4)
    key = "t:metrics:{metrics}:latency"
    for i in range(3):
        m.record("episodic", "recall", float(i))
    assert [s["ms"] for s in m.latency_samples()] == [0.0, 1.0, 2.0]
    sent = fake.entries_sent
    for i in range(3, 6):
        m.record("episodic", "recall", float(i))
    assert [s["ms"] for s in m.latency_samples()] == [2.0, 3.0, 4.0, 5.0]  # trimmed to 4
    assert fake.entries_sent - sent == 3 + 1  # the new ones, and the stream's first entry
    # deleted and written again with older ids (as a benchmark seeds a history): read afresh
    fake.streams[key] = [(b"5-0", {b"ts": b"5", b"type": b"semantic", b"op": b"add", b"ms": b"7"})]
    assert [(s["type"], s["ms"], s["hit"]) for s in m.latency_samples()] == [
        ("semantic", 7.0, None)
    ]
