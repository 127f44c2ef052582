"""Purges: one session's messages, or everything derived from one user. A user purge is read
first (`plan_user_purge`), then queued in one MULTI/EXEC of the user's keys (or on an import's
last transaction, minus what the file rewrites); what the user leaves in shared data follows it
as a note (`memory.admin.followups`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import redis

from memory.admin import followups
from memory.admin.followups import FollowUp
from memory.embeddings import CachedEmbedder
from memory.models import check_id
from memory.replies import as_str
from memory.runtime.connection import bulk_client
from memory.stores import Stores


@dataclass
class UserPurge:
    user_id: str
    episodic_ids: list[str] = field(default_factory=list)
    timelines: set[str] = field(default_factory=set)
    semantic_ids: list[str] = field(default_factory=list)
    procedure_keys: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    #: texts whose cached embeddings go with the user
    texts: list[str] = field(default_factory=list)
    #: maintenance records (merges keep the texts they replaced)
    maintenance_keys: list[str] = field(default_factory=list)

    def queue(
        self,
        pipe: redis.client.Pipeline,
        stores: Stores,
        *,
        keep_episodic: Collection[str] = (),
        keep_procedures: Collection[str] = (),
        keep_sessions: Collection[str] = (),
    ) -> list[str]:
        """The user's own keys (one slot), on the caller's transaction, but for the records an
        import rewrites (same ids, written in its earlier transactions). Returns the sessions
        cleared."""
        gone = [m for m in self.episodic_ids if m not in keep_episodic]
        stores.episodic.delete_many(pipe, self.user_id, gone)
        if gone:
            for key in self.timelines:  # kept memories stay on their sessions' timelines
                pipe.zrem(key, *gone)
        for k in self.procedure_keys:
            if k not in keep_procedures:
                pipe.delete(k)
        cleared = [s for s in self.sessions if s not in keep_sessions]
        for s in cleared:
            stores.short_term.clear(pipe, self.user_id, s)
        keys = stores.keys  # the usage records too: an import writes the file's after this
        pipe.delete(
            keys.user_queries(self.user_id),
            keys.usage(self.user_id),
            keys.usage_answers(self.user_id),
            *self.maintenance_keys,
        )
        return cleared

    def followup(self, what: str) -> FollowUp:
        """What the user leaves in shared data, as a note for after the transaction."""
        return FollowUp(
            what=what,
            user_id=self.user_id,
            delete_facts=list(self.semantic_ids),
            cleared_sessions=list(self.sessions),
            user_list="remove",
            forget_texts=list(dict.fromkeys(self.texts)),
        )

    def counts(self) -> dict[str, int]:
        return {
            "episodic": len(self.episodic_ids),
            "semantic": len(self.semantic_ids),
            "procedural": len(self.procedure_keys),
            "sessions": len(self.sessions),
        }


def plan_user_purge(stores: Stores, user_id: str) -> UserPurge:
    """Everything derived from this user: episodic memories, the facts they added (except
    those an admin shared: those are everyone's), procedural patterns, every session, and the
    texts of theirs that sit in the embedding cache."""
    check_id(user_id)
    plan = UserPurge(user_id)
    plan.episodic_ids = stores.episodic.ids_for_user(user_id)
    plan.texts, plan.timelines = stores.episodic.purge_reads(user_id, plan.episodic_ids)
    plan.texts += [as_str(q) for q in stores.client.smembers(stores.keys.user_queries(user_id))]
    plan.semantic_ids = stores.semantic.ids_added_by(user_id, private_only=True)
    plan.procedure_keys = stores.procedural.keys_for_user(user_id)
    plan.texts += stores.procedural.query_patterns(plan.procedure_keys)
    plan.sessions = stores.short_term.sessions(user_id)
    keys = stores.keys
    merges = stores.client.zrange(keys.user_merges(user_id), 0, -1)
    plan.maintenance_keys = [keys.merge(user_id, as_str(m)) for m in merges] + [
        keys.user_merges(user_id),
        keys.rejected_merges(user_id),
        keys.activity(user_id),
        keys.judged_apart(user_id),
        keys.decay_state(user_id),
        keys.maintenance_last(user_id),
        keys.writes(user_id),  # nothing left to be a version of
    ]
    for s in plan.sessions:
        plan.texts += [
            m.content for m in stores.short_term.all_messages(user_id, s) if m.role == "user"
        ]
    return plan


def purge_user(stores: Stores, embedder: CachedEmbedder, user_id: str) -> dict[str, int]:
    plan = plan_user_purge(stores, user_id)
    note = plan.followup("purge")
    followups.register(stores, user_id)
    bulk = bulk_client(stores.client)  # every record of the user in one transaction
    try:
        pipe = bulk.pipeline(transaction=True)
        plan.queue(pipe, stores)
        keys = stores.keys  # whole, with any entry nothing else removes
        pipe.delete(*plan.timelines, keys.user_sessions(user_id), keys.session_titles(user_id))
        followups.queue(pipe, stores, note)
        pipe.execute()
    finally:
        bulk.close()
    n = len(plan.episodic_ids)
    followups.run_after(stores, embedder, note, f"its {n} memories were deleted")
    return plan.counts()


def clear_session(stores: Stores, embedder: CachedEmbedder, user_id: str, session_id: str) -> int:
    """Delete one session's messages; returns how many there were."""
    check_id(user_id)
    check_id(session_id, "session id")
    msgs = stores.short_term.all_messages(user_id, session_id)
    n = stores.short_term.count(user_id, session_id)
    pipe = stores.client.pipeline(transaction=True)
    stores.short_term.clear(pipe, user_id, session_id)
    pipe.execute()
    stores.short_term.clear_shared(user_id, [session_id])
    embedder.forget([m.content for m in msgs if m.role == "user"])
    return n
