"""Consolidation: near-duplicate active memories of one user and kind become one, the others
superseded by it and kept as history; each merge is recorded (`Keys.merge`) for `undo_merge`,
and a merge or an undo is one MULTI/EXEC that WATCHes what it touches (docs/maintenance.md,
"Consolidation, retention and decay")."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Protocol

import numpy as np
import redis
from pydantic import BaseModel, Field
from ulid import ULID

from memory import admin
from memory.embeddings import CachedEmbedder
from memory.errors import InvalidInputError, NotFoundError
from memory.keys import digest
from memory.maintenance.records import Memo
from memory.maintenance.similarity import FactKey, fact_key, linked, mergeable, veto
from memory.models import MAX_TEXT_CHARS, EpisodicMemory
from memory.replies import as_str
from memory.stores import Stores
from memory.stores.records import bytes_vector

log = logging.getLogger(__name__)


class TextMerger(Protocol):
    """Writes one text for memories that say the same thing; None when it cannot (offline,
    or it judges them different). Implemented in agent/ on the LLM: memory has no chat."""

    def __call__(self, texts: list[str], event_type: str) -> str | None: ...


class SameFactJudge(Protocol):
    """Do these memories state one fact? True, False, or None when it cannot tell (offline,
    a reply outside the schema). Implemented in agent/ on the LLM: memory has no chat."""

    def __call__(self, texts: list[str], event_type: str) -> bool | None: ...


#: Kinds the model never judges: logged exchanges and session summaries record what was said
#: when, they are not facts (only today's lexical rule merges them).
UNJUDGED_KINDS = frozenset({"interaction", "summary"})
#: Model calls per user and run; clusters beyond wait for the next run (a local model is slow).
MAX_JUDGED_PER_RUN = 20


class MergeProposal(BaseModel):
    user_id: str
    event_type: str
    canonical_id: str
    canonical_text: str
    member_ids: list[str] = Field(description="Memories that become history of the canonical")
    member_texts: list[str]
    similarity: float = Field(description="Lowest cosine between two memories of the cluster")
    judged: bool = Field(
        default=False, description="The model judged them one fact (their words differ)"
    )

    @property
    def signature(self) -> str:
        """Stable name of the cluster (a rejected proposal is not proposed again)."""
        return cluster_signature([self.canonical_id, *self.member_ids])


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

    @property
    def signature(self) -> str:
        """The merged cluster's name (an undone merge is rejected under it)."""
        return cluster_signature([self.canonical_id, *self.member_ids])


class StaleMergeError(InvalidInputError):
    """A merge proposal whose memories changed since it was made (deleted, merged, edited)."""


def cluster_signature(ids: list[str]) -> str:
    """Stable name of a cluster of memory ids, whatever their order or which one is kept."""
    return digest(*sorted(ids))


def _canonical_order(m: Memo) -> tuple[bool, float, int]:
    return (m.pinned, m.importance, m.timestamp)


def _cosine_matrix(vectors: list[np.ndarray]) -> np.ndarray:
    vecs = np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return vecs @ vecs.T


@dataclass
class _Judging:
    """The model's part of one user's proposals."""

    judge: SameFactJudge
    keep_lock: Callable[[], None]
    apart: set[str]  # clusters it judged different before: not asked again
    left: int = MAX_JUDGED_PER_RUN
    newly_apart: list[str] = field(default_factory=list)


def propose_merges(
    stores: Stores,
    user_id: str,
    min_similarity: float,
    memos: list[Memo],
    *,
    judge: SameFactJudge | None,
    proposal_similarity: float,
    remember_apart: bool,
    keep_lock: Callable[[], None],
) -> list[MergeProposal]:
    """Clusters of one kind that may merge (complete linkage: A~B and B~C does not merge A
    with C unless A~C too). Without a judge every pair passes `similarity.mergeable`; with one
    see `_judged_clusters` (kinds in UNJUDGED_KINDS keep the lexical rule). `remember_apart`
    (a real run) records the clusters the model judged different; `keep_lock` is called
    before each model call."""
    rejected = {as_str(s) for s in stores.client.smembers(stores.keys.rejected_merges(user_id))}
    judging = None
    if judge is not None:
        apart = stores.client.smembers(stores.keys.judged_apart(user_id))
        judging = _Judging(judge, keep_lock, {as_str(a) for a in apart})
    by_kind: dict[str, list[Memo]] = {}
    for m in memos:
        if m.active and m.vector is not None:
            by_kind.setdefault(m.event_type, []).append(m)
    out: list[MergeProposal] = []
    for kind, group in sorted(by_kind.items()):
        if len(group) < 2:
            continue
        group.sort(key=_canonical_order, reverse=True)
        if judging is not None and kind not in UNJUDGED_KINDS:
            out += _judged_clusters(
                user_id, kind, group, min_similarity, proposal_similarity, rejected, judging
            )
        else:
            out += _lexical_clusters(user_id, kind, group, min_similarity, rejected)
    if remember_apart and judging is not None and judging.newly_apart:
        stores.client.sadd(stores.keys.judged_apart(user_id), *judging.newly_apart)
    return out


def _lexical_clusters(
    user_id: str, kind: str, group: list[Memo], min_similarity: float, rejected: set[str]
) -> list[MergeProposal]:
    """Today's rule over memories in canonical order."""
    # `mergeable` needs equal fact keys, so only memories with the same key can end up in
    # one cluster: cosines are computed within those groups (not N x N per kind) and each
    # text's key once (not once per pair).
    by_fact: dict[FactKey, list[Memo]] = {}
    for m in group:
        key = fact_key(m.text)
        if key is not None:
            by_fact.setdefault(key, []).append(m)
    found: list[MergeProposal] = []
    for same in by_fact.values():
        if len(same) >= 2:
            found += _clusters(user_id, kind, same, min_similarity, rejected)
    # Report them in the order a scan of the whole kind would have found them.
    rank = {m.id: n for n, m in enumerate(group)}
    return sorted(found, key=lambda p: rank[p.canonical_id])


def _proposal(user_id: str, kind: str, members: list[Memo], lowest: float) -> MergeProposal:
    return MergeProposal(
        user_id=user_id,
        event_type=kind,
        canonical_id=members[0].id,
        canonical_text=members[0].text,
        member_ids=[m.id for m in members[1:]],
        member_texts=[m.text for m in members[1:]],
        similarity=round(lowest, 4),
    )


def _greedy(size: int, link: Callable[[int, int], bool], taken: set[int]) -> Iterator[list[int]]:
    """Greedy complete-linkage clusters of indexes in order: each one not taken seeds a cluster
    of the later ones it and every member link with; the caller adds what it keeps to `taken`."""
    for i in range(size):
        if i in taken:
            continue
        cluster = [i]
        for j in range(i + 1, size):
            if j not in taken and all(link(c, j) for c in cluster):
                cluster.append(j)
        if len(cluster) > 1:
            yield cluster


def _clusters(
    user_id: str, kind: str, same: list[Memo], min_similarity: float, rejected: set[str]
) -> list[MergeProposal]:
    """Greedy complete-linkage clusters of memories that share one fact key (in canonical
    order): within the group `mergeable` reduces to the cosine threshold."""
    sims = _cosine_matrix([m.vector for m in same if m.vector is not None])
    taken: set[int] = set()
    out: list[MergeProposal] = []
    for cluster in _greedy(len(same), lambda a, b: float(sims[a, b]) >= min_similarity, taken):
        lowest = min(float(sims[a, b]) for a, b in combinations(cluster, 2))
        p = _proposal(user_id, kind, [same[c] for c in cluster], lowest)
        if p.signature not in rejected:
            taken.update(cluster)
            out.append(p)
    return out


def _judged_clusters(
    user_id: str,
    kind: str,
    group: list[Memo],
    min_similarity: float,
    proposal_similarity: float,
    rejected: set[str],
    judging: _Judging,
) -> list[MergeProposal]:
    """Greedy complete-linkage clusters of `similarity.linked` memories (canonical order). A
    cluster today's rule would merge needs no model; any other merges only if the model says
    one fact. Otherwise (no, no answer, no calls left) today's rule still merges what it can
    inside it, and its members may seed smaller clusters later in the scan."""
    sims = _cosine_matrix([m.vector for m in group if m.vector is not None])
    keys = [fact_key(m.text) for m in group]
    links: dict[tuple[int, int], bool] = {}

    def link(a: int, b: int) -> bool:
        if (a, b) not in links:
            cos = float(sims[a, b])
            links[(a, b)] = linked(group[a].text, group[b].text, cos, proposal_similarity)
        return links[(a, b)]

    def lexical(a: int, b: int) -> bool:
        return keys[a] is not None and keys[a] == keys[b] and float(sims[a, b]) >= min_similarity

    taken: set[int] = set()
    out: list[MergeProposal] = []
    for cluster in _greedy(len(group), link, taken):
        members = [group[c] for c in cluster]
        pairs = list(combinations(cluster, 2))
        p = _proposal(user_id, kind, members, min(float(sims[a, b]) for a, b in pairs))
        if p.signature in rejected:
            continue
        if all(lexical(a, b) for a, b in pairs):
            out.append(p)
        elif _one_fact(judging, members, kind):
            out.append(p.model_copy(update={"judged": True}))
        else:
            fallback = _lexical_clusters(user_id, kind, members, min_similarity, rejected)
            done = {mid for q in fallback for mid in [q.canonical_id, *q.member_ids]}
            taken.update(c for c in cluster if group[c].id in done)
            out += fallback
            continue
        taken.update(cluster)
    return out


def apart_signature(members: list[Memo]) -> str:
    """A cluster as the model saw it: its ids and texts (an edit asks the model again)."""
    return digest(*sorted(f"{m.id}\x00{m.text}" for m in members))


def _one_fact(judging: _Judging, members: list[Memo], kind: str) -> bool:
    """The model's verdict on one cluster: True only for a clear yes."""
    sig = apart_signature(members)
    if sig in judging.apart or judging.left <= 0:
        return False
    judging.left -= 1
    judging.keep_lock()  # the model may be slow
    try:
        verdict = judging.judge([m.text for m in members], kind)
    except Exception as e:  # the model is optional: no verdict keeps them apart
        log.warning("LLM same-fact judgement failed, keeping them apart: %s", e)
        verdict = None
    if verdict is False:
        judging.apart.add(sig)
        judging.newly_apart.append(sig)
    return verdict is True


def _checked_model_text(reply: str | None, texts: list[str], judged: bool) -> str | None:
    """The model's merged text, if it states the same fact as every member: the same content
    words, numbers and negations (`similarity.fact_key`). A changed value ("evening" for
    "morning"), a dropped or added detail, or an instruction smuggled in through a note all
    change the key, and a merge must never change the fact: None, the best-worded stays.
    Members the model judged one fact differ in words: the text must then pass the guard
    against each of them (`similarity.veto`)."""
    text = (reply or "").strip()
    if not text or len(text) > MAX_TEXT_CHARS:
        return None
    if judged:
        return None if any(veto(text, t) for t in texts) else text
    key = fact_key(text)
    if key is None or any(fact_key(t) != key for t in texts):
        return None
    return text


def _stale(why: str) -> StaleMergeError:
    return StaleMergeError(f"These memories changed since the dry run ({why}); run it again.")


def _current(
    stores: Stores, proposal: MergeProposal, min_similarity: float, proposal_similarity: float
) -> tuple[EpisodicMemory, list[EpisodicMemory]]:
    """The proposal's memories as stored now, if they are still what it showed and still one
    fact (a member edited since the dry run may state something else); else StaleMergeError.
    A judged proposal is held to the guard (the model's verdict was on these very texts)."""
    ids = [proposal.canonical_id, *proposal.member_ids]
    if len(set(ids)) != len(ids) or len(ids) < 2:
        raise InvalidInputError("A merge needs two or more different memories.")
    try:
        mems = [stores.episodic.get(proposal.user_id, mid) for mid in ids]
    except NotFoundError as e:
        raise _stale("one was deleted") from e
    if any(m.superseded_by for m in mems):
        raise _stale("one was already merged or replaced")
    if [m.description for m in mems] != [proposal.canonical_text, *proposal.member_texts]:
        raise _stale("a text was edited")
    raws = [stores.episodic.get_vector(proposal.user_id, mid) for mid in ids]
    if any(r is None for r in raws):
        raise _stale("one has no vector")
    sims = _cosine_matrix([bytes_vector(r) for r in raws if r is not None])
    for a in range(len(mems)):
        for b in range(a + 1, len(mems)):
            ta, tb, cos = mems[a].description, mems[b].description, float(sims[a, b])
            ok = (
                linked(ta, tb, cos, proposal_similarity)
                if proposal.judged
                else mergeable(ta, tb, cos, min_similarity)
            )
            if not ok:
                raise _stale("they no longer state the same fact")
    return mems[0], mems[1:]


def apply_merge(
    stores: Stores,
    embedder: CachedEmbedder,
    proposal: MergeProposal,
    now_ms: int,
    merger: TextMerger | None = None,
    *,
    min_similarity: float,
    proposal_similarity: float,
) -> MergeRecord:
    """Carry out one proposal: the canonical's new text, importance and pin, the members'
    supersession and the merge record in one MULTI/EXEC that WATCHes every memory of the
    cluster, so an edit made meanwhile (even during the model's call) aborts all of it.
    Raises StaleMergeError when the memories are not what the proposal showed."""
    user_id = proposal.user_id
    keys = [stores.keys.episodic(user_id, i) for i in [proposal.canonical_id, *proposal.member_ids]]
    with stores.client.pipeline(transaction=True) as pipe:
        pipe.watch(*keys)
        canon, members = _current(stores, proposal, min_similarity, proposal_similarity)
        texts = [canon.description, *(m.description for m in members)]
        text, how = canon.description, "best_worded"
        if merger is not None:
            try:
                reply = merger(texts, proposal.event_type)
            except Exception as e:  # the model is optional: any failure keeps the best-worded
                log.warning("LLM merge failed, keeping the best-worded text: %s", e)
                reply = None
            checked = _checked_model_text(reply, texts, proposal.judged)
            if checked is not None:
                text, how = checked, "llm"
            elif reply:
                log.info("LLM merge text refused (not the members' fact): %r", reply[:200])
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
        new, vec = admin.plan_episodic_update(stores, embedder, user_id, canon.id, changes)
        record.text_after = new.description  # as stored: a model's text has its secrets masked
        pipe.multi()
        admin.queue_episodic_write(pipe, stores, new, vec)
        for m in members:
            stores.episodic.supersede(pipe, user_id, m.id, canon.id)
        pipe.set(stores.keys.merge(user_id, record.id), record.model_dump_json())
        pipe.zadd(stores.keys.user_merges(user_id), {record.id: now_ms})
        try:
            pipe.execute()
        except redis.WatchError as e:
            raise _stale("one was edited during the merge") from e
    return record


def reject_merge(stores: Stores, proposal: MergeProposal) -> None:
    stores.client.sadd(stores.keys.rejected_merges(proposal.user_id), proposal.signature)


def list_merges(stores: Stores, user_id: str, limit: int = 50) -> list[MergeRecord]:
    ids = stores.client.zrevrange(stores.keys.user_merges(user_id), 0, limit - 1)
    if not ids:
        return []
    raws = stores.client.mget([stores.keys.merge(user_id, as_str(i)) for i in ids])
    return [MergeRecord.model_validate(json.loads(as_str(r))) for r in raws if r]


def undo_merge(
    stores: Stores, embedder: CachedEmbedder, user_id: str, merge_id: str
) -> MergeRecord:
    """Members back to active, the canonical's text, importance and pin as they were, and the
    cluster recorded as rejected, in one MULTI/EXEC (WATCHing the record and the memories):
    otherwise the next run, in the background, would merge the same memories again."""
    keys = stores.keys
    record_key = keys.merge(user_id, merge_id)
    with stores.client.pipeline(transaction=True) as pipe:
        pipe.watch(record_key)
        raw = stores.client.get(record_key)
        record = MergeRecord.model_validate(json.loads(as_str(raw))) if raw else None
        if record is None or record.user_id != user_id:
            raise NotFoundError(f"No merge {merge_id!r} for this user.")
        if record.undone:
            return record
        pipe.watch(*(keys.episodic(user_id, i) for i in [record.canonical_id, *record.member_ids]))
        planned = None
        try:
            canon = stores.episodic.get(user_id, record.canonical_id)
            changes: dict[str, object] = {
                "importance": record.importance_before,
                "pinned": record.pinned_before,
            }
            if canon.description != record.text_before:
                changes["text"] = record.text_before
            planned = admin.plan_episodic_update(
                stores, embedder, user_id, record.canonical_id, changes
            )
        except NotFoundError:
            pass  # deleted since: its members come back on their own
        back: list[tuple[str, bool]] = []  # a member the user paused comes back paused
        for mid in record.member_ids:
            # Only members still superseded by this merge (not deleted, not replaced since).
            by, state = stores.client.hmget(
                keys.episodic(user_id, mid), ["superseded_by", "paused"]
            )
            if by == record.canonical_id.encode() or (
                by is None and stores.client.exists(keys.episodic(user_id, mid))
            ):
                back.append((mid, state == b"1"))
        record.undone = True
        pipe.multi()
        if planned is not None:
            admin.queue_episodic_write(pipe, stores, *planned)
        for mid, paused in back:
            stores.episodic.reinstate(pipe, user_id, mid, paused)
        pipe.set(record_key, record.model_dump_json())
        pipe.sadd(keys.rejected_merges(user_id), record.signature)
        try:
            pipe.execute()
        except redis.WatchError as e:
            raise InvalidInputError(
                "These memories changed while the merge was being undone; try again."
            ) from e
    return record
