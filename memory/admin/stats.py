"""Counts per memory type, for the CLI, the model's `get_memory_stats` tool and the pages.

A user's stats count only what that user can recall (their memories, the shared facts and
their own); how many other people use the store is in the store-wide stats (no user) only.
`note_write` and `writes_version`: the counters a page caches a user's figures under.
"""

from __future__ import annotations

import time

import redis
from redisvl.query import CountQuery

from memory.keys import Keys
from memory.queries import ListQuery
from memory.replies import as_str
from memory.service import MemoryStats
from memory.stores import Stores


def memory_stats(
    stores: Stores, user_id: str | None = None, session_id: str | None = None
) -> MemoryStats:
    stats: MemoryStats = {
        "episodic": {"memory_count": stores.episodic.count(user_id)},
        "semantic": {"fact_count": stores.semantic.count(visible_to=user_id)},
        "procedural": {},
        "short_term": {},
        "user_id": user_id,
        "session_id": session_id,
    }
    if not user_id:
        stats["users"] = int(stores.client.scard(stores.keys.users))
        stats["procedural"] = {"total_procedures": int(stores.procedural.index.query(CountQuery()))}
        return stats
    rows, total = stores.procedural.list_page(user_id, ListQuery(page_size=1000))
    execs = sum(r["executions"] for r in rows)
    stats["procedural"] = {
        "total_procedures": total,
        "total_executions": execs,
        "overall_avg_score": round(sum(r["avg_score"] * r["executions"] for r in rows) / execs, 4)
        if execs
        else None,
        "recommended": sum(1 for r in rows if r["recommended"]),
    }
    stats["episodic"]["paused"] = stores.episodic.count_paused(user_id)
    stats["short_term"] = {"sessions": len(stores.short_term.sessions(user_id))}
    if session_id:
        stats["short_term"]["message_count"] = stores.short_term.count(user_id, session_id)
        stats["short_term"]["ttl_seconds"] = stores.short_term.ttl(user_id, session_id)
    return stats


def note_write(client: redis.Redis, keys: Keys, user_id: str | None) -> int:
    """Bump the user's write counter after a write to their memories (the shared counter when
    the write names no user): after the write, so a reader that sees the new version reads
    the new data. Returns the new count."""
    pipe = client.pipeline(transaction=True)
    queue_write_note(pipe, keys, user_id)
    return int(pipe.execute()[-1])


def queue_write_note(pipe: redis.client.Pipeline, keys: Keys, user_id: str | None) -> None:
    """`note_write` inside the caller's transaction. A counter that is gone (a purge leaves
    nothing of the user) starts again at the clock in microseconds, not at 1: a version cached
    before the purge is never met again."""
    key = keys.writes(user_id) if user_id else keys.shared_writes
    pipe.set(key, time.time_ns() // 1000, nx=True)
    pipe.incr(key)


def writes_version(client: redis.Redis, keys: Keys, user_id: str) -> str:
    """The user's and the shared write counters, as one version string (one round trip; two
    single-key reads: the keys are in different hash slots)."""
    pipe = client.pipeline(transaction=False)
    pipe.get(keys.writes(user_id))
    pipe.get(keys.shared_writes)
    mine, shared = (as_str(v) if v is not None else "0" for v in pipe.execute())
    return f"{mine}.{shared}"
