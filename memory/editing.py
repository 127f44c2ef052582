"""Editing memories from the UI and the CLI: validated changes, re-embedding on text change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory.episodic import EpisodicStore, embedding_text
from memory.errors import InvalidInputError, NotFoundError
from memory.models import MemoryType, check_id
from memory.semantic import SemanticStore

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

EPISODIC_EDITABLE = {
    "text",
    "description",
    "context",
    "event_type",
    "tags",
    "metadata",
    "importance",
    "expires_at",
    "pinned",
    "timestamp",
}
SEMANTIC_EDITABLE = {
    "text",
    "fact",
    "category",
    "fact_type",
    "context",
    "source",
    "pinned",
    "importance",
}


def apply_update(
    coord: MemoryCoordinator,
    user_id: str,
    mtype: MemoryType,
    memory_id: str,
    changes: dict[str, Any],
) -> dict[str, Any]:
    check_id(user_id)
    if not changes:
        raise InvalidInputError("Nothing to change.")
    if mtype is MemoryType.EPISODIC:
        return _update_episodic(coord, user_id, memory_id, changes)
    if mtype is MemoryType.SEMANTIC:
        return _update_semantic(coord, user_id, memory_id, changes)
    if mtype is MemoryType.PROCEDURAL:
        if set(changes) - {"pinned"}:
            raise InvalidInputError("Procedural patterns are learned; only 'pinned' can change.")
        coord.procedural.set_pinned(user_id, memory_id, bool(changes["pinned"]))
        return coord.get_memory(user_id, mtype, memory_id)
    raise InvalidInputError("Short-term messages cannot be edited; delete them instead.")


def _update_episodic(
    coord: MemoryCoordinator, user_id: str, memory_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    unknown = set(changes) - EPISODIC_EDITABLE
    if unknown:
        raise InvalidInputError(f"Cannot change {sorted(unknown)} of an episodic memory.")
    old = coord.episodic.get(user_id, memory_id)
    text = changes.get("text", changes.get("description", old.description))
    expires = changes.get("expires_at", old.expires_at)
    # Re-validate the whole record with the store's own rules (same as a new memory).
    new = EpisodicStore.build(
        user_id,
        text,
        event_type=changes.get("event_type", old.event_type),
        context=changes.get("context", old.context),
        metadata=changes.get("metadata", old.metadata),
        tags=changes.get("tags", old.tags),
        importance=changes.get("importance", old.importance),
        timestamp_ms=changes.get("timestamp", old.timestamp),
        expires_at_ms=expires if expires != old.expires_at else None,
        session_id=old.session_id,
        memory_id=old.id,
        created_at=old.created_at,
    )
    new = new.model_copy(
        update={
            "access_count": old.access_count,
            "last_accessed": old.last_accessed,
            "pinned": bool(changes.get("pinned", old.pinned)),
            "superseded_by": old.superseded_by,
            "expires_at": expires,
        }
    )
    if new.description != old.description or new.context != old.context:
        vec = coord.embedder.embed(embedding_text(new.description, new.context))
        coord.embedder.forget([old.description])
    else:
        raw = coord.episodic.get_vector(memory_id)
        if raw is None:
            raise NotFoundError(f"No episodic memory {memory_id!r}.")
        vec = raw  # type: ignore[assignment]
    pipe = coord.redis.pipeline(transaction=True)
    coord.episodic.write(pipe, new, vec)
    if not expires:
        pipe.persist(coord.keys.episodic(memory_id))
    pipe.execute()
    return coord.get_memory(user_id, MemoryType.EPISODIC, memory_id)


def _update_semantic(
    coord: MemoryCoordinator, user_id: str, fact_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    unknown = set(changes) - SEMANTIC_EDITABLE
    if unknown:
        raise InvalidInputError(f"Cannot change {sorted(unknown)} of a semantic fact.")
    old = coord.semantic.get(fact_id)
    if old.added_by and old.added_by != user_id:
        raise NotFoundError(f"No semantic fact {fact_id!r} added by this user.")
    new = SemanticStore.build(
        changes.get("text", changes.get("fact", old.fact)),
        category=changes.get("category", old.category),
        fact_type=changes.get("fact_type", old.fact_type),
        context=changes.get("context", old.context),
        source=changes.get("source", old.source),
        added_by=old.added_by,
        metadata=old.metadata,
        importance=changes.get("importance", old.importance),
        fact_id=old.id,
        timestamp_ms=old.timestamp,
    )
    new = new.model_copy(update={"pinned": bool(changes.get("pinned", old.pinned))})
    vec: Any
    if new.fact != old.fact:
        vec = coord.embedder.embed(new.fact)
    else:  # unchanged text: keep the stored vector bytes
        vec = coord.redis.hget(coord.keys.semantic(fact_id), "embedding")
    pipe = coord.redis.pipeline(transaction=True)
    coord.semantic.write(pipe, new, vec)
    pipe.execute()
    return coord.get_memory(user_id, MemoryType.SEMANTIC, fact_id)
