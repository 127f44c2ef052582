"""Export of one user's memories (all four types) to JSON, and import back.

Import is validated in full before anything is written (pydantic models, the same text and id
rules as new memories, embeddings computed up front), then written in one MULTI/EXEC
transaction: a bad file changes nothing. Vectors are not exported: they are recomputed with the
configured embedder on import, so a file moves between embedding models too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError
from ulid import ULID

from memory.episodic import EpisodicStore, embedding_text
from memory.errors import ImportFileError, InvalidInputError
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    ProceduralPattern,
    SemanticFact,
    check_id,
    now_ms,
)
from memory.semantic import SemanticStore
from memory.short_term import ShortTermStore

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

FORMAT = "coala-memory-export"
VERSION = 1
MAX_IMPORT_BYTES = 50 * 1024 * 1024


class ExportFile(BaseModel):
    format: Literal["coala-memory-export"]
    version: int = Field(ge=1, le=VERSION)
    user_id: str
    exported_at: int
    embedding_model: str = ""
    episodic: list[EpisodicMemory] = Field(default_factory=list)
    semantic: list[SemanticFact] = Field(default_factory=list)
    procedural: list[ProceduralPattern] = Field(default_factory=list)
    short_term: dict[str, list[ChatMessage]] = Field(default_factory=dict)


def export_user(coord: MemoryCoordinator, user_id: str) -> dict[str, Any]:
    check_id(user_id)
    episodic = [coord.episodic.get(user_id, mid) for mid in coord.episodic.ids_for_user(user_id)]
    semantic = [coord.semantic.get(fid) for fid in coord.semantic.ids_added_by(user_id)]
    procedural = [
        coord.procedural.get(user_id, k.rsplit(":", 1)[-1])
        for k in coord.procedural.keys_for_user(user_id)
    ]
    sessions = {
        s: coord.short_term.recent(user_id, s, coord.settings.short_term_max_messages)
        for s in coord.short_term.sessions(user_id)
    }
    doc = ExportFile(
        format=FORMAT,
        version=VERSION,
        user_id=user_id,
        exported_at=now_ms(),
        embedding_model=coord.embedder.model_id,
        episodic=episodic,
        semantic=semantic,
        procedural=procedural,
        short_term=sessions,
    )
    return doc.model_dump(mode="json")


def import_user(
    coord: MemoryCoordinator,
    data: dict[str, Any] | str | bytes,
    *,
    mode: Literal["merge", "replace"] = "merge",
    user_id: str | None = None,
) -> dict[str, int]:
    """Import an export file; `user_id` imports it under another user. Atomic."""
    if mode not in ("merge", "replace"):
        raise InvalidInputError("Import mode must be 'merge' or 'replace'.")
    doc = _parse(data)
    target = check_id(user_id or doc.user_id)
    # Validate every record with the same rules as the write path (raises before writing).
    try:
        ep_ids, sem_ids = _owned_ids(coord, target, doc)
        episodic = [
            EpisodicStore.build(
                target,
                m.description,
                event_type=m.event_type,
                context=m.context,
                metadata=m.metadata,
                tags=m.tags,
                importance=m.importance,
                timestamp_ms=m.timestamp,
                expires_at_ms=m.expires_at if m.expires_at and m.expires_at > now_ms() else None,
                session_id=m.session_id,
                memory_id=ep_ids[m.id],
                created_at=m.created_at,
            ).model_copy(
                update={
                    "pinned": m.pinned,
                    "superseded_by": ep_ids.get(m.superseded_by or "", m.superseded_by),
                    "access_count": m.access_count,
                    "last_accessed": m.last_accessed,
                }
            )
            for m in doc.episodic
            if not (m.expires_at and m.expires_at <= now_ms())
        ]
        semantic = [
            SemanticStore.build(
                f.fact,
                category=f.category,
                fact_type=f.fact_type,
                context=f.context,
                source=f.source,
                added_by=target,
                metadata=f.metadata,
                importance=f.importance,
                fact_id=sem_ids[f.id],
                timestamp_ms=f.timestamp,
            )
            for f in doc.semantic
        ]
        procedural = [
            p.model_copy(update={"user_id": target, "id": _safe_id(p.id)}) for p in doc.procedural
        ]
        sessions = {
            check_id(s, "session id"): [
                ShortTermStore.build(m.role, m.content).model_copy(
                    update={"id": m.id, "timestamp": m.timestamp}
                )
                for m in msgs
            ]
            for s, msgs in doc.short_term.items()
        }
    except InvalidInputError as e:
        raise ImportFileError(f"The file was not imported (nothing changed): {e}") from e

    ep_vecs = coord.embedder.embed_many(
        [embedding_text(m.description, m.context) for m in episodic]
    )
    sem_vecs = coord.embedder.embed_many([f.fact for f in semantic])
    proc_vecs = coord.embedder.embed_many([p.query_pattern for p in procedural])

    if mode == "replace":
        coord.clear_user_memories(target)
    pipe = coord.redis.pipeline(transaction=True)
    for m, v in zip(episodic, ep_vecs, strict=True):
        coord.episodic.write(pipe, m, v)
    for f, v in zip(semantic, sem_vecs, strict=True):
        coord.semantic.write(pipe, f, v)
    for p, v in zip(procedural, proc_vecs, strict=True):
        coord.procedural.write_raw(pipe, p, v)
    for s, msgs in sessions.items():
        if msgs:
            pipe.delete(coord.keys.session(target, s))
            coord.short_term.write(pipe, target, s, msgs)
    pipe.sadd(coord.keys.users, target)
    pipe.execute()
    return {
        "episodic": len(episodic),
        "semantic": len(semantic),
        "procedural": len(procedural),
        "short_term": sum(len(m) for m in sessions.values()),
    }


def _parse(data: dict[str, Any] | str | bytes) -> ExportFile:
    if isinstance(data, bytes | str):
        if len(data) > MAX_IMPORT_BYTES:
            raise ImportFileError("The file is larger than 50 MB; nothing was imported.")
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise ImportFileError(
                f"Not a JSON file (line {e.lineno}: {e.msg}); nothing was imported."
            ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ImportFileError(
            f'Not a memory export (expected "format": "{FORMAT}"); nothing was imported.'
        )
    try:
        return ExportFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ImportFileError(
            f"Invalid export file at {where}: {first['msg']} "
            f"({e.error_count()} problem(s)); nothing was imported."
        ) from None


def _owned_ids(
    coord: MemoryCoordinator, target: str, doc: ExportFile
) -> tuple[dict[str, str], dict[str, str]]:
    """File id -> id to write. An id whose record exists and belongs to someone else (the
    file came from another user, or was crafted) gets a new id: an import never overwrites
    another user's memory."""
    ep = [_safe_id(m.id) for m in doc.episodic]
    sem = [_safe_id(f.id) for f in doc.semantic]
    pipe = coord.redis.pipeline(transaction=False)
    for mid in ep:
        pipe.hget(coord.keys.episodic(mid), "user_id")
    for fid in sem:
        pipe.hget(coord.keys.semantic(fid), "added_by")
    owners = [o.decode() if isinstance(o, bytes) else o for o in pipe.execute()]
    ep_map = {
        mid: mid if owner in (None, target) else str(ULID())
        for mid, owner in zip(ep, owners[: len(ep)], strict=True)
    }
    sem_map = {
        fid: fid if owner in (None, target) else str(ULID())
        for fid, owner in zip(sem, owners[len(ep) :], strict=True)
    }
    return ep_map, sem_map


def _safe_id(value: str) -> str:
    if not value or len(value) > 64 or ":" in value or any(ord(c) < 33 for c in value):
        raise InvalidInputError(f"Invalid memory id {value[:40]!r} in the file.")
    return value
