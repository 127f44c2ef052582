"""Secrets an earlier version stored, masked now (`python -m memory sweep-secrets`): each user's
memories, facts, procedures and messages that hold one are rewritten through the edit and import
paths (masked, re-embedded); ids are never rewritten (docs/privacy.md)."""

from __future__ import annotations

from collections import Counter

from memory.admin.editing import apply_update
from memory.embeddings import CachedEmbedder
from memory.keys import Keys
from memory.models import MemoryType
from memory.replies import as_str
from memory.stores import Stores
from memory.writing.secrets import mask_json, mask_secrets, mask_text


def _holds(*texts: str) -> bool:
    return any(t and mask_secrets(t).found for t in texts)


def sweep_secrets(
    stores: Stores, embedder: CachedEmbedder, user_id: str | None = None, *, apply: bool = True
) -> dict[str, int]:
    """Mask the secrets stored in the memories of `user_id` (default: every user); the
    counts of records that held one, per type. `apply=False` counts and changes nothing."""
    users = (
        [user_id]
        if user_id is not None
        else sorted(as_str(u) for u in stores.client.smembers(stores.keys.users))
    )
    counts: Counter[str] = Counter()
    for user in users:
        _sweep_user(stores, embedder, user, counts, apply)
    return {k: counts[k] for k in ("episodic", "semantic", "procedural", "short_term")}


def _sweep_user(
    stores: Stores, embedder: CachedEmbedder, user: str, counts: Counter[str], apply: bool
) -> None:
    for mid in stores.episodic.ids_for_user(user):
        m = stores.episodic.get(user, mid)
        if _holds(m.description, m.context) or mask_json(m.metadata) != m.metadata:
            counts["episodic"] += 1
            if apply:
                changes = {
                    "description": mask_text(m.description),
                    "context": mask_text(m.context),
                    "metadata": mask_json(m.metadata),
                }
                apply_update(stores, embedder, user, MemoryType.EPISODIC, mid, changes)
    for fid in stores.semantic.ids_added_by(user):
        f = stores.semantic.get(fid)
        if _holds(f.fact, f.context) or mask_json(f.metadata) != f.metadata:
            counts["semantic"] += 1
            if apply:  # its metadata is masked where the fact is rebuilt
                changes = {"fact": mask_text(f.fact), "context": mask_text(f.context)}
                apply_update(stores, embedder, user, MemoryType.SEMANTIC, fid, changes, True)
    for key in stores.procedural.keys_for_user(user):
        p = stores.procedural.get(user, Keys.memory_id(key))
        if _holds(p.query_pattern, p.normalized_query):
            counts["procedural"] += 1
            if apply:  # masked where it is written; its vector is the masked question's
                pipe = stores.user_pipeline(user)
                vec = embedder.embed(mask_text(p.query_pattern))
                stores.procedural.write_raw(pipe, p, vec)
                pipe.execute()
    for session in stores.short_term.sessions(user):
        msgs = stores.short_term.all_messages(user, session)
        held = [m for m in msgs if _holds(m.content)]
        counts["short_term"] += len(held)
        if held and apply:
            masked = [m.model_copy(update={"content": mask_text(m.content)}) for m in msgs]
            pipe = stores.user_pipeline(user)
            pipe.delete(stores.keys.session(user, session))
            stores.short_term.write(pipe, user, session, masked)
            pipe.execute()
