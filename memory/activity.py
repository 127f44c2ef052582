"""What happened to a user's memories, per day (created, replaced, merged, forgotten, expired),
and taking back a write (`MemoryHistory`, the coordinator's `history`). Created and replaced are
read from the memories by their own dates, merges from the merge records; forgotten and expired
are counted when they go, as numbers only, never a text or an id."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import redis

from memory.admin.stats import queue_write_note
from memory.keys import Keys
from memory.models import check_id, now_ms
from memory.replies import as_str
from memory.stores.quotes import drop_quotes, quoting_answers

if TYPE_CHECKING:
    from memory.embeddings import CachedEmbedder
    from memory.stores import Stores

Gone = Literal["forgotten", "expired"]
EVENTS = ("created", "replaced", "merged", "forgotten", "expired")
#: Event types of records that log the conversation (not things remembered about the user).
LOG_KINDS = frozenset({"interaction"})


def day_of(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def record(
    client: redis.Redis | redis.client.Pipeline,
    keys: Keys,
    user_id: str,
    event: Gone,
    n: int,
    at_ms: int | None = None,
) -> None:
    """Count `n` memories of the user that went (forgotten or expired) on the day of `at_ms`."""
    if n > 0:
        client.hincrby(keys.activity(check_id(user_id)), f"{day_of(at_ms or now_ms())}:{event}", n)


def per_day(
    episodic: list[dict[str, Any]],
    merges: list[dict[str, Any]],
    gone: Counter[tuple[str, str]],
) -> list[dict[str, Any]]:
    """Rows {day, event, count}, by day then event order: created and replaced from the
    user's episodic records (logged exchanges left out: they are the conversation), merged
    from the merge records (undone ones left out), forgotten and expired from `gone`."""
    counts: Counter[tuple[str, str]] = Counter(gone)
    when = {str(r.get("id")): int(r.get("timestamp") or 0) for r in episodic}
    for r in episodic:
        if str(r.get("event_type") or "") in LOG_KINDS:
            continue
        ts = int(r.get("timestamp") or r.get("created_at") or 0)
        if ts > 0:
            counts[(day_of(ts), "created")] += 1
        by = str(r.get("superseded_by") or "")
        if by and when.get(by):
            counts[(day_of(when[by]), "replaced")] += 1
    for m in merges:
        if not m.get("undone") and int(m.get("at_ms") or 0) > 0:
            counts[(day_of(int(m["at_ms"])), "merged")] += len(m.get("member_ids") or [])
    order = {e: i for i, e in enumerate(EVENTS)}
    keys = sorted(counts, key=lambda k: (k[0], order.get(k[1], len(EVENTS))))
    return [{"day": day, "event": event, "count": counts[(day, event)]} for day, event in keys]


class MemoryHistory:
    """A user's memories over time: what happened per day, and undoing a write."""

    def __init__(self, stores: Stores, embedder: CachedEmbedder) -> None:
        self._stores = stores
        self._embedder = embedder

    def per_day(self, user_id: str) -> list[dict[str, Any]]:
        """The user's activity per day, read from the store: rows {day, event, count} (see
        `per_day` above; counts only)."""
        stores, user_id = self._stores, check_id(user_id)
        fields = {"id", "timestamp", "created_at", "superseded_by", "event_type"}
        episodic = [
            m.model_dump(mode="json", include=fields)
            for m in stores.episodic.get_many(user_id, stores.episodic.ids_for_user(user_id))
        ]
        r, keys = stores.client, stores.keys
        merge_ids = [as_str(m) for m in r.zrange(keys.user_merges(user_id), 0, -1)]
        raws = r.mget([keys.merge(user_id, m) for m in merge_ids]) if merge_ids else []
        merges = [json.loads(as_str(raw)) for raw in raws if raw]
        gone: Counter[tuple[str, str]] = Counter()  # forgotten and expired, per (day, event)
        for field, value in r.hgetall(keys.activity(user_id)).items():
            day, _, event = as_str(field).partition(":")
            gone[(day, event)] += int(value)
        return per_day(episodic, merges, gone)

    def undo_write(self, user_id: str, memory_id: str, replaced_id: str | None = None) -> None:
        """Take back an episodic memory a turn just stored: it is deleted and the memory it
        replaced (`replaced_id`, kept as history) is active again (recalled, or still paused
        if the user paused it), in one transaction."""
        episodic = self._stores.episodic
        mem = episodic.get(check_id(user_id), memory_id)
        # NotFoundError when it is gone
        old = episodic.get(user_id, replaced_id) if replaced_id else None
        quoted = quoting_answers(self._stores, user_id, memory_id)
        pipe = self._stores.client.pipeline(transaction=True)
        episodic.delete_many(pipe, user_id, [memory_id])
        if old is not None:
            episodic.reinstate(pipe, user_id, old.id, old.paused)
        queue_write_note(pipe, self._stores.keys, user_id)  # the Stats version
        pipe.execute()
        drop_quotes(self._stores, user_id, quoted, mem.description)
        self._embedder.forget([mem.description])
