"""The hybrid query pair of each store: its index, text fields and filters, built for recall.

Recall depends on the stores (their indexes and filters), never the other way round.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from memory.keys import Keys
from memory.models import MemoryType, RecallHit
from memory.recall.hybrid import HybridRequest, RecallWeights, build_request
from memory.recall.statements import StatementModel
from memory.stores.episodic import RETURN_FIELDS as EPISODIC_FIELDS
from memory.stores.episodic import TEXT_FIELDS as EPISODIC_TEXT
from memory.stores.episodic import EpisodicStore
from memory.stores.semantic import RETURN_FIELDS as SEMANTIC_FIELDS
from memory.stores.semantic import TEXT_FIELDS as SEMANTIC_TEXT
from memory.stores.semantic import SemanticStore


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
) -> list[tuple[list[RecallHit], Callable[[str], str], list[str], str]]:
    """What `hydrate` reads for the hits of each store: key, fields, the text field (and the
    session's latest summary, read in the same round trip)."""
    episodic_key: Callable[[str], str] = functools.partial(keys.episodic, user_id)
    groups: list[tuple[list[RecallHit], Callable[[str], str], list[str], str]] = [
        (episodic, episodic_key, EPISODIC_FIELDS, "description"),
        (semantic, keys.semantic, SEMANTIC_FIELDS, "fact"),
    ]
    if summary is not None:
        groups.append(([summary], episodic_key, EPISODIC_FIELDS, "description"))
    return groups


def _narrowed(filters: dict[str, Any]) -> bool:
    return any(v for k, v in filters.items() if k != "active_only")
