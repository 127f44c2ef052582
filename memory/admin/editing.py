"""The editor's operations on single memories: list a page, read, change, delete. Changes are
validated with the stores' own rules and a changed text is embedded again. A user sees the
shared facts and their own; shared facts change (and a fact is shared) only `as_admin`."""

from __future__ import annotations

from typing import Any

import redis

from memory.embeddings import CachedEmbedder
from memory.errors import InvalidInputError, NotAllowedError, NotFoundError
from memory.models import EpisodicMemory, MemoryType, SemanticFact, check_id
from memory.queries import ListQuery
from memory.replies import as_str
from memory.stores import Stores
from memory.stores.episodic import EpisodicStore, embedding_text
from memory.stores.quotes import drop_quotes, quoting_answers
from memory.stores.schema import VECTOR_FIELD
from memory.stores.semantic import SemanticStore
from memory.stores.usage import queue_drop

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
    "paused",
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
    "shared",
}


def list_memories(
    stores: Stores, user_id: str, mtype: MemoryType, q: ListQuery
) -> tuple[list[dict[str, Any]], int]:
    """(rows, total). Rows are records as dicts with an `id` and a `text` key."""
    check_id(user_id)
    if mtype is MemoryType.EPISODIC:
        return stores.episodic.list_page(user_id, q)
    if mtype is MemoryType.SEMANTIC:
        return stores.semantic.list_page(user_id, q)
    if mtype is MemoryType.PROCEDURAL:
        return stores.procedural.list_page(user_id, q)
    sessions = [q.session_id] if q.session_id else stores.short_term.sessions(user_id)
    rows: list[dict[str, Any]] = []
    for s in sessions:
        for m in stores.short_term.all_messages(user_id, s):
            rows.append({**m.model_dump(), "session_id": s, "text": m.content})
    rows.sort(key=lambda r: r["timestamp"], reverse=q.descending)
    start = (q.page - 1) * q.page_size
    return rows[start : start + q.page_size], len(rows)


def read_memory(stores: Stores, user_id: str, mtype: MemoryType, memory_id: str) -> dict[str, Any]:
    check_id(user_id)
    if mtype is MemoryType.EPISODIC:
        mem = stores.episodic.get(user_id, memory_id)
        return {**mem.model_dump(mode="json"), "text": mem.description}
    if mtype is MemoryType.SEMANTIC:
        fact = _visible_fact(stores, user_id, memory_id)
        return {**fact.model_dump(mode="json"), "text": fact.fact, "is_shared": fact.is_shared}
    if mtype is MemoryType.PROCEDURAL:
        p = stores.procedural.get(user_id, memory_id)
        return {**p.model_dump(mode="json"), "text": p.query_pattern}
    for s in stores.short_term.sessions(user_id):
        for m in stores.short_term.all_messages(user_id, s):
            if m.id == memory_id:
                return {**m.model_dump(mode="json"), "session_id": s, "text": m.content}
    raise NotFoundError(f"No short-term message {memory_id!r}.")


def _visible_fact(stores: Stores, user_id: str, fact_id: str) -> SemanticFact:
    fact = stores.semantic.get(fact_id)
    if not fact.is_shared and fact.added_by != user_id:
        raise NotFoundError(f"No semantic fact {fact_id!r} for this user.")
    return fact


def _changeable_fact(stores: Stores, user_id: str, fact_id: str, as_admin: bool) -> SemanticFact:
    fact = _visible_fact(stores, user_id, fact_id)
    if fact.is_shared and not as_admin:
        raise NotAllowedError(
            "This fact is shared knowledge, recalled for every user: only an admin can "
            "change or delete it."
        )
    return fact


def delete_memory(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    mtype: MemoryType,
    memory_id: str,
    as_admin: bool = False,
) -> None:
    """Delete one memory of this user (a semantic fact they added; a shared one only with
    `as_admin`)."""
    check_id(user_id)
    pipe = stores.client.pipeline(transaction=True)
    if mtype is MemoryType.EPISODIC:
        mem = stores.episodic.get(user_id, memory_id)
        quoted = quoting_answers(stores, user_id, memory_id)
        stores.episodic.delete_many(pipe, user_id, [memory_id])
        pipe.execute()
        drop_quotes(stores, user_id, quoted, mem.description)
        embedder.forget([mem.description])
    elif mtype is MemoryType.SEMANTIC:
        fact = _changeable_fact(stores, user_id, memory_id, as_admin)
        stores.semantic.delete_many(pipe, [memory_id])
        pipe.execute()
        # The records of answers that used the fact: the user's own, and for a shared fact
        # every user's (each user's keys in their own slot: one script per user).
        users = [as_str(u) for u in stores.client.smembers(stores.keys.users)]
        usage = stores.client.pipeline(transaction=False)
        for owner in dict.fromkeys([user_id, *(users if fact.is_shared else [])]):
            queue_drop(usage, stores.keys, owner, [memory_id])
        usage.execute()
    elif mtype is MemoryType.PROCEDURAL:
        stores.procedural.get(user_id, memory_id)
        pipe.delete(stores.keys.procedure(user_id, memory_id))
        pipe.execute()
    else:
        for s in stores.short_term.sessions(user_id):
            if stores.short_term.delete_message(user_id, s, memory_id):
                return
        raise NotFoundError(f"No short-term message {memory_id!r}.")


def apply_update(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    mtype: MemoryType,
    memory_id: str,
    changes: dict[str, Any],
    as_admin: bool = False,
) -> dict[str, Any]:
    """Edit a memory; the vector is recomputed when its text changes. Returns the record."""
    check_id(user_id)
    if not changes:
        raise InvalidInputError("Nothing to change.")
    if mtype is MemoryType.EPISODIC:
        new, vec = plan_episodic_update(stores, embedder, user_id, memory_id, changes)
        pipe = stores.client.pipeline(transaction=True)
        queue_episodic_write(pipe, stores, new, vec)
        pipe.execute()
    elif mtype is MemoryType.SEMANTIC:
        _update_semantic(stores, embedder, user_id, memory_id, changes, as_admin)
    elif mtype is MemoryType.PROCEDURAL:
        if set(changes) - {"pinned"}:
            raise InvalidInputError("Procedural patterns are learned; only 'pinned' can change.")
        stores.procedural.set_pinned(user_id, memory_id, bool(changes["pinned"]))
    else:
        raise InvalidInputError("Short-term messages cannot be edited; delete them instead.")
    return read_memory(stores, user_id, mtype, memory_id)


def plan_episodic_update(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    memory_id: str,
    changes: dict[str, Any],
) -> tuple[EpisodicMemory, Any]:
    """The record and vector an edit of an episodic memory writes (validated, the text
    embedded again when it changed). Split from the write so maintenance can queue it on its
    own transaction with other writes."""
    fields = _fields(changes, EPISODIC_EDITABLE, "description", "an episodic memory")
    old = stores.episodic.get(user_id, memory_id)
    new = EpisodicStore.rebuild(old, stores.pii, **fields)
    vec: Any
    if new.description != old.description or new.context != old.context:
        vec = embedder.embed(embedding_text(new.description, new.context))
        embedder.forget([old.description])
    else:
        vec = stores.episodic.get_vector(user_id, memory_id)
        if vec is None:
            raise NotFoundError(f"No episodic memory {memory_id!r}.")
    return new, vec


def queue_episodic_write(
    pipe: redis.client.Pipeline, stores: Stores, new: EpisodicMemory, vec: Any
) -> None:
    """Queue the write of a planned update (the caller executes the pipeline)."""
    stores.episodic.write(pipe, new, vec)
    if not new.expires_at:
        pipe.persist(stores.keys.episodic(new.user_id, new.id))


def _update_semantic(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    fact_id: str,
    changes: dict[str, Any],
    as_admin: bool,
) -> None:
    fields = _fields(changes, SEMANTIC_EDITABLE, "fact", "a semantic fact")
    old = _changeable_fact(stores, user_id, fact_id, as_admin)
    if "shared" in changes and bool(changes["shared"]) != old.shared and not as_admin:
        raise NotAllowedError("Only an admin can share a fact with every user.")
    new = SemanticStore.rebuild(old, stores.pii, **fields)
    vec: Any
    if new.fact != old.fact:
        vec = embedder.embed(new.fact)
    else:  # unchanged text: keep the stored vector bytes
        vec = stores.client.hget(stores.keys.semantic(fact_id), VECTOR_FIELD)
    pipe = stores.client.pipeline(transaction=True)
    stores.semantic.write(pipe, new, vec)
    pipe.execute()


def _fields(changes: dict[str, Any], editable: set[str], text: str, what: str) -> dict[str, Any]:
    """The changes as the record's fields (`text` is the editor's name of the record's text),
    or InvalidInputError for a field that cannot change."""
    unknown = set(changes) - editable
    if unknown:
        raise InvalidInputError(f"Cannot change {sorted(unknown)} of {what}.")
    fields = dict(changes)
    if "text" in fields:
        fields[text] = fields.pop("text")
    return fields
