"""The hybrid query pair of each store: its index, text fields and filters, built for recall.

Recall depends on the stores (their indexes and filters), never the other way round.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import redis

from memory.keys import Keys
from memory.models import MemoryType, RecallHit
from memory.recall.hybrid import HybridRequest, RecallWeights, build_request
from memory.recall.statements import StatementModel
from memory.stores.episodic import RETURN_FIELDS as EPISODIC_FIELDS
from memory.stores.episodic import TAG_WORDS as EPISODIC_TAGS
from memory.stores.episodic import TEXT_FIELDS as EPISODIC_TEXT
from memory.stores.episodic import EpisodicStore
from memory.stores.records import decode
from memory.stores.semantic import RETURN_FIELDS as SEMANTIC_FIELDS
from memory.stores.semantic import TEXT_FIELDS as SEMANTIC_TEXT
from memory.stores.semantic import SemanticStore

#: (hits, key of an id, fields to read, the field that is the hit's text)
HydrationGroup = tuple[list[RecallHit], Callable[[str], str], list[str], str]


def episodic_request(
    store: EpisodicStore,
    keys: Keys,
    user_id: str,
    query_text: str,
    query_vec: np.ndarray,
    k: int,
    weights: RecallWeights,
    statements: StatementModel | None = None,
    **filters: Any,
) -> HybridRequest:
    return build_request(
        MemoryType.EPISODIC,
        store.index,
        query_text,
        query_vec,
        EPISODIC_TEXT,
        store.filter_for(user_id, **filters),
        k,
        weights,
        # Neighbours come from the session timeline, which knows no filters: only for
        # unfiltered recall (the agent's), not for a search narrowed by type, tags or time.
        timeline_key=None if _narrowed(filters) else functools.partial(keys.timeline, user_id),
        statements=statements,
        tag_words=EPISODIC_TAGS,
    )


def semantic_request(
    store: SemanticStore,
    user_id: str,
    query_text: str,
    query_vec: np.ndarray,
    k: int,
    weights: RecallWeights,
    category: str | None = None,
) -> HybridRequest:
    return build_request(
        MemoryType.SEMANTIC,
        store.index,
        query_text,
        query_vec,
        SEMANTIC_TEXT,
        # shared facts and this user's own: another user's facts are never recalled here
        store.filter_for(category=category, visible_to=user_id),
        k,
        weights,
    )


def hydration_groups(
    keys: Keys,
    user_id: str,
    episodic: list[RecallHit],
    semantic: list[RecallHit],
    summary: RecallHit | None = None,
) -> list[HydrationGroup]:
    """What `hydrate` reads for the hits of each store: key, fields, the text field (and the
    session's latest summary, read in the same round trip)."""
    episodic_key: Callable[[str], str] = functools.partial(keys.episodic, user_id)
    groups: list[HydrationGroup] = [
        (episodic, episodic_key, EPISODIC_FIELDS, "description"),
        (semantic, keys.semantic, SEMANTIC_FIELDS, "fact"),
    ]
    if summary is not None:
        groups.append(([summary], episodic_key, EPISODIC_FIELDS, "description"))
    return groups


def queue_reads(
    pipe: Any, key_of: Callable[[str], str], fields: list[str], ids: list[str]
) -> list[str]:
    """Queue the reads `hydrate` would send for these ids (ahead of it, in a round trip the
    caller sends anyway); returns their keys, in order, for `prefetched`."""
    keys = [key_of(i) for i in ids]
    for key in keys:
        pipe.hmget(key, fields)
    return keys


def hydrate(
    client: redis.Redis,
    groups: Sequence[HydrationGroup],
    prefetched: dict[str, list[Any]] | None = None,
) -> None:
    """Read the stored fields of every hit, all types in one pipelined round trip (none when
    `prefetched`, key -> the values read by `queue_reads`, holds them all).

    A memory deleted between the search and this read is dropped from its list."""
    known = prefetched or {}
    pipe = client.pipeline(transaction=False)
    keys = [[key_of(h.id) for h in hits] for hits, key_of, _, _ in groups]  # built once
    for (_, _, fields, _), group_keys in zip(groups, keys, strict=True):
        for key in group_keys:
            if key not in known:
                pipe.hmget(key, fields)
    replies = iter(pipe.execute()) if len(pipe) else iter(())
    for (hits, _, fields, text_field), group_keys in zip(groups, keys, strict=True):
        kept = []
        for h, key in zip(hits, group_keys, strict=True):
            values = known.get(key)
            if values is None:
                values = next(replies)
            if all(v is None for v in values):
                continue
            rec = decode({f: v for f, v in zip(fields, values, strict=True) if v is not None})
            rec["id"] = h.id
            h.record = rec
            h.text = str(rec.get(text_field, ""))
            kept.append(h)
        hits[:] = kept


def _narrowed(filters: dict[str, Any]) -> bool:
    return any(v for k, v in filters.items() if k != "active_only")
