"""Session neighbours of recall's best candidates: which turns of their sessions to look at, and
the reads that find them, split so the timeline reads ride in a pipeline the caller sends anyway
(`memory.recall.hybrid` scores them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redis

from memory.replies import as_str


def seeds_of(scored: dict[str, dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The best `n` scored candidates that are logged exchanges with a session and a time."""
    return sorted(
        (
            c
            for c in scored.values()
            if c["session"] and c["timestamp"] and c["rec"].get("event_type") == "interaction"
        ),
        key=lambda c: c["final"],
        reverse=True,
    )[:n]


def queue_timeline_reads(
    pipe: Any,
    seeds: Sequence[dict[str, Any]],
    timeline_key: Callable[[str], str],
    hops: int,
    window_ms: int,
) -> None:
    """Per seed: the `hops` nearest earlier and later memories of its session, read from the
    session's timeline (a sorted set: two O(log n) range reads per seed)."""
    for c in seeds:
        key, t = timeline_key(c["session"]), c["timestamp"]
        pipe.zrevrangebyscore(key, f"({t}", t - window_ms, start=0, num=hops)
        pipe.zrangebyscore(key, f"({t}", t + window_ms, start=0, num=hops)


def links_from(seeds: Sequence[dict[str, Any]], sides: list[Any]) -> dict[str, dict[str, int]]:
    """Neighbour id -> {seed id: hops}, from the replies of `queue_timeline_reads` (popped from
    the front of `sides`)."""
    links: dict[str, dict[str, int]] = {}
    for c in seeds:
        seed_id = c["rec"]["id"]
        for _ in range(2):
            for hops, member in enumerate(sides.pop(0), 1):
                rid = as_str(member)
                prev = links.setdefault(rid, {}).get(seed_id)
                links[rid][seed_id] = hops if prev is None else min(prev, hops)
    return links


def read_rows(
    client: redis.Redis, prefix: str, ids: Sequence[str], fields: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The given fields of the active memories among `ids` (one pipelined round trip), as
    search result rows; deleted (a stale timeline entry), superseded or paused ones are left out."""
    names = [*fields, "status", "paused"]
    pipe = client.pipeline(transaction=False)
    for rid in ids:
        pipe.hmget(prefix + rid, names)
    out: dict[str, dict[str, Any]] = {}
    for rid, values in zip(ids, pipe.execute(), strict=True):
        rec = dict(zip(names, values, strict=True))
        paused = rec.pop("paused") == b"1"
        if rec["timestamp"] is None or as_str(rec.pop("status") or b"") != "active" or paused:
            continue
        out[rid] = {"id": prefix + rid, **{k: v for k, v in rec.items() if v is not None}}
    return out
