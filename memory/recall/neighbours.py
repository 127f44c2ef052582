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
    window_ms: int,
) -> None:
    """Per seed: one O(log n) range read of its session's timeline (a sorted set by time),
    the turns within `window_ms` either side of it with their times; `links_from` keeps the
    nearest ones each way. A session's turns that close together are few: one read of both
    sides costs less than a read per side."""
    for c in seeds:
        key, t = timeline_key(c["session"]), c["timestamp"]
        pipe.zrangebyscore(key, t - window_ms, t + window_ms, withscores=True)


def links_from(
    seeds: Sequence[dict[str, Any]], windows: list[Any], hops: int
) -> dict[str, dict[str, int]]:
    """Neighbour id -> {seed id: hops}, from the replies of `queue_timeline_reads` (popped from
    the front of `windows`): the `hops` nearest earlier and later turns of each seed (a turn
    of the seed's very time is neither), nearest first; ties in time in the order Redis
    gives them each way (by member, reversed for the earlier side)."""
    links: dict[str, dict[str, int]] = {}
    for c in seeds:
        seed_id, t = c["rec"]["id"], c["timestamp"]
        window = [(as_str(member), float(score)) for member, score in windows.pop(0)]
        earlier = [rid for rid, score in reversed(window) if score < t][:hops]
        later = [rid for rid, score in window if score > t][:hops]
        for side in (earlier, later):
            for n, rid in enumerate(side, 1):
                prev = links.setdefault(rid, {}).get(seed_id)
                links[rid][seed_id] = n if prev is None else min(prev, n)
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
