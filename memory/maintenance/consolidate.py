"""Consolidation: near-duplicate active memories of one user and kind become one.

The canonical member stays (pinned first, then the most important, then the most recent);
the others are superseded by it (`status` superseded, `superseded_by` = the canonical id), so
they stay as history and leave recall, exactly like a changed value does. Each merge is
recorded (`Keys.merge`) with the canonical's text, importance and pin before the merge, so
`undo_merge` restores everything. With a `TextMerger` (the agent passes one built on the
LLM) the canonical text may be rewritten by the model; its reply is checked first.
"""

from __future__ import annotations

import json
import logging
from typing import Protocol

import numpy as np
from pydantic import BaseModel, Field
from ulid import ULID

from memory import admin
from memory.embeddings import CachedEmbedder
from memory.errors import NotFoundError
from memory.keys import digest
from memory.maintenance.records import Memo, load_memos
from memory.maintenance.similarity import fact_signature, mergeable
from memory.models import MAX_TEXT_CHARS, MemoryType
from memory.replies import as_str
from memory.stores import Stores

log = logging.getLogger(__name__)


class TextMerger(Protocol):
    """Writes one text for memories that say the same thing; None when it cannot (offline,
    or it judges them different). Implemented in agent/ on the LLM: memory has no chat."""

    def __call__(self, texts: list[str], event_type: str) -> str | None: ...


class MergeProposal(BaseModel):
    user_id: str
    event_type: str
    canonical_id: str
    canonical_text: str
    member_ids: list[str] = Field(description="Memories that become history of the canonical")
    member_texts: list[str]
    similarity: float = Field(description="Lowest cosine between two memories of the cluster")

    @property
    def signature(self) -> str:
        """Stable name of the cluster (a rejected proposal is not proposed again)."""
        return digest(*sorted([self.canonical_id, *self.member_ids]))


class MergeRecord(BaseModel):
    id: str
    user_id: str
    at_ms: int
    canonical_id: str
    member_ids: list[str]
    member_texts: list[str]
    text_before: str
    text_after: str
    importance_before: float
    pinned_before: bool
    how: str = Field(description="best_worded, or llm when the model wrote the text")
    undone: bool = False


def _canonical_order(m: Memo) -> tuple[bool, float, int]:
    return (m.pinned, m.importance, m.timestamp)


def _cosine_matrix(memos: list[Memo]) -> np.ndarray:
    vecs = np.stack([np.asarray(m.vector, dtype=np.float32) for m in memos])
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return vecs @ vecs.T


def propose_merges(
    stores: Stores, user_id: str, min_similarity: float, memos: list[Memo] | None = None
) -> list[MergeProposal]:
    """Clusters of one kind whose every pair passes `similarity.mergeable` (complete linkage:
    A~B and B~C does not merge A with C unless A~C too)."""
    memos = load_memos(stores, user_id) if memos is None else memos
    rejected = {as_str(s) for s in stores.client.smembers(stores.keys.rejected_merges(user_id))}
    by_kind: dict[str, list[Memo]] = {}
    for m in memos:
        if m.active and m.vector is not None:
            by_kind.setdefault(m.event_type, []).append(m)
    out: list[MergeProposal] = []
    for kind, group in sorted(by_kind.items()):
        if len(group) < 2:
            continue
        group.sort(key=_canonical_order, reverse=True)
        sims = _cosine_matrix(group)
        taken: set[int] = set()
        for i in range(len(group)):
            if i in taken:
                continue
            cluster = [i]
            for j in range(i + 1, len(group)):
                if j not in taken and all(
                    mergeable(group[c].text, group[j].text, float(sims[c, j]), min_similarity)
                    for c in cluster
                ):
                    cluster.append(j)
            if len(cluster) < 2:
                continue
            lowest = min(float(sims[a, b]) for a in cluster for b in cluster if a < b)
            p = MergeProposal(
                user_id=user_id,
                event_type=kind,
                canonical_id=group[i].id,
                canonical_text=group[i].text,
                member_ids=[group[j].id for j in cluster[1:]],
                member_texts=[group[j].text for j in cluster[1:]],
                similarity=round(lowest, 4),
            )
            if p.signature not in rejected:
                taken.update(cluster)
                out.append(p)
    return out


def _checked_model_text(reply: str | None, texts: list[str]) -> str | None:
    """The model's merged text, if it keeps every number and negation of the members and
    no more (a wrong number would be a new fact, not a merge)."""
    if not reply or not reply.strip() or len(reply.strip()) > MAX_TEXT_CHARS:
        return None
    _, numbers, negations = fact_signature(reply)
    _, want_numbers, want_negations = fact_signature(texts[0])
    if numbers != want_numbers or negations != want_negations:
        return None
    return reply.strip()


def apply_merge(
    stores: Stores,
    embedder: CachedEmbedder,
    proposal: MergeProposal,
    now_ms: int,
    merger: TextMerger | None = None,
) -> MergeRecord | None:
    """Carry out one proposal; None when its memories changed since it was proposed."""
    user_id = proposal.user_id
    try:
        canon = stores.episodic.get(user_id, proposal.canonical_id)
        members = [stores.episodic.get(user_id, mid) for mid in proposal.member_ids]
    except NotFoundError:
        return None
    if any(m.superseded_by for m in [canon, *members]):
        return None
    texts = [canon.description, *(m.description for m in members)]
    text, how = canon.description, "best_worded"
    if merger is not None:
        try:
            reply = merger(texts, proposal.event_type)
        except Exception as e:  # the model is optional: any failure keeps the best-worded text
            log.warning("LLM merge failed, keeping the best-worded text: %s", e)
            reply = None
        checked = _checked_model_text(reply, texts)
        if checked is not None:
            text, how = checked, "llm"
    record = MergeRecord(
        id=str(ULID()),
        user_id=user_id,
        at_ms=now_ms,
        canonical_id=canon.id,
        member_ids=[m.id for m in members],
        member_texts=[m.description for m in members],
        text_before=canon.description,
        text_after=text,
        importance_before=canon.importance,
        pinned_before=canon.pinned,
        how=how,
    )
    changes: dict[str, object] = {
        "importance": max(m.importance for m in [canon, *members]),
        "pinned": any(m.pinned for m in [canon, *members]),
    }
    if text != canon.description:
        changes["text"] = text
    admin.apply_update(stores, embedder, user_id, MemoryType.EPISODIC, canon.id, changes)
    pipe = stores.client.pipeline(transaction=True)
    for m in members:
        stores.episodic.supersede(pipe, m.id, canon.id)
    pipe.set(stores.keys.merge(record.id), record.model_dump_json())
    pipe.zadd(stores.keys.user_merges(user_id), {record.id: now_ms})
    pipe.execute()
    return record


def reject_merge(stores: Stores, proposal: MergeProposal) -> None:
    stores.client.sadd(stores.keys.rejected_merges(proposal.user_id), proposal.signature)


def list_merges(stores: Stores, user_id: str, limit: int = 50) -> list[MergeRecord]:
    ids = stores.client.zrevrange(stores.keys.user_merges(user_id), 0, limit - 1)
    if not ids:
        return []
    raws = stores.client.mget([stores.keys.merge(as_str(i)) for i in ids])
    return [MergeRecord.model_validate(json.loads(as_str(r))) for r in raws if r]


def undo_merge(
    stores: Stores, embedder: CachedEmbedder, user_id: str, merge_id: str
) -> MergeRecord:
    """Members back to active, the canonical's text, importance and pin as they were."""
    raw = stores.client.get(stores.keys.merge(merge_id))
    record = MergeRecord.model_validate(json.loads(as_str(raw))) if raw else None
    if record is None or record.user_id != user_id:
        raise NotFoundError(f"No merge {merge_id!r} for this user.")
    if record.undone:
        return record
    changes: dict[str, object] = {
        "importance": record.importance_before,
        "pinned": record.pinned_before,
    }
    try:
        canon = stores.episodic.get(user_id, record.canonical_id)
        if canon.description != record.text_before:
            changes["text"] = record.text_before
        admin.apply_update(
            stores, embedder, user_id, MemoryType.EPISODIC, record.canonical_id, changes
        )
    except NotFoundError:
        pass  # deleted since: its members come back on their own
    pipe = stores.client.pipeline(transaction=True)
    for mid in record.member_ids:
        key = stores.keys.episodic(mid)
        if stores.client.hget(key, "superseded_by") in (record.canonical_id.encode(), None):
            if stores.client.exists(key):
                pipe.hset(key, mapping={"superseded_by": "", "status": "active"})
    record.undone = True
    pipe.set(stores.keys.merge(record.id), record.model_dump_json())
    pipe.execute()
    return record
