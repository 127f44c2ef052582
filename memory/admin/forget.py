"""Forget a topic (issue 21, item 4): every memory that mentions it, and what carries its text
or was derived from it, deleted for real.

    preview(user, query)             read only: the matching memories, facts, procedures and
                                     messages (text, kind, date, score), for people to review
    forget(user, query, keep=refs)   deletes what a preview finds now, minus the refs people
                                     unticked, and every trace of it; a count per kind

Matching: the topic's content words (`memory.text.content_roots`: no stop words, one root per
word, so "lawyers" meets "lawyer"), found case-insensitively in a memory's text, context, tags
or metadata, so an exact mention is never missed; plus the product's hybrid search (episodic,
and the user's own facts) at `min_score` or above, for mentions in other words.

What goes with a forgotten memory or message (followed until nothing new is found; never what
people unticked):
 - older versions of it (`superseded_by` chains: merges and supersessions keep them);
 - the whole turn of a message (the question, the answer, the turn's details and its
   extraction log entry) and the memories that turn wrote (the `stored` lists);
 - the logged exchange (interaction memory) of a message, and the messages of a logged exchange;
 - summaries that cite a forgotten message.
Traces go by the topic's words alone, whatever was unticked (they are copies, not memories):
answer details and extraction entries, summaries, merge records (and records naming a forgotten
memory), session titles, the noted recall queries, the last maintenance report, and
embedding-cache entries (keyed by text: those of the forgotten texts, and any whose text
mentions the topic). Facts an admin shared are everyone's: they stay, counted in the preview.

Slots: the user's keys change in one MULTI/EXEC (one hash slot); the facts (a slot each) and
the cache entries (keys of their own) follow it, one key per command.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from memory import activity
from memory.bookkeeping import Bookkeeper
from memory.boundary import translate_store_errors
from memory.embeddings import CachedEmbedder
from memory.errors import InvalidInputError, NotFoundError
from memory.identity import StoreIdentity
from memory.keys import Keys, owner_tag
from memory.models import (
    BAND_HIGH,
    ChatMessage,
    EpisodicMemory,
    EventType,
    MemoryType,
    RecallHit,
    SemanticFact,
    check_id,
    check_text,
)
from memory.replies import as_str
from memory.stores import Stores
from memory.text import STOPWORDS, content_roots, words

#: Hybrid-search hits at or above this final score count as mentions in other words ("high").
FORGET_MIN_SCORE = BAND_HIGH
SEARCH_K = 50

MatchType = Literal["episodic", "semantic", "procedural", "short_term"]
Search = Callable[..., list[RecallHit]]


class CoordinatorParts(Protocol):
    """The parts of `MemoryCoordinator` a forget uses (a Protocol: the coordinator imports
    `memory.admin`, so this module must not import it back)."""

    stores: Stores
    embedder: CachedEmbedder
    identity: StoreIdentity
    bookkeeping: Bookkeeper

    @property
    def search(self) -> Search: ...


class TopicMatch(BaseModel):
    """One memory, fact, procedure or message a preview found."""

    ref: str = Field(description="What `keep` names: `type:id`, or `short_term:session:id`")
    memory_type: MatchType
    kind: str = Field(description="Event type, fact category, 'procedure', or the role")
    text: str
    timestamp: int = Field(description="ms since epoch")
    score: float | None = Field(
        default=None, description="Hybrid-search score; None when found by its words only"
    )
    session_id: str = ""


class TopicPreview(BaseModel):
    user_id: str
    query: str
    words: list[str] = Field(description="The topic's words matched in every text")
    matches: list[TopicMatch] = Field(default_factory=list)
    shared_facts: int = Field(
        default=0, description="Facts of this user that an admin shared and mention it: kept"
    )


class ForgetReport(BaseModel):
    user_id: str
    query: str
    counts: dict[str, int] = Field(description="What went, per kind")

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def topic_roots(query: str) -> frozenset[str]:
    """The roots a text must share with the topic to mention it; refuses a topic without one."""
    roots = content_roots(check_text(query, "Topic")) if query and query.strip() else None
    if not roots:
        raise InvalidInputError(
            "Name the topic with at least one word that is not a number or a common word "
            "like 'my' or 'the' (e.g. a name or a subject)."
        )
    return roots


def mentions(text: str, roots: frozenset[str]) -> bool:
    return bool(roots & content_roots(text))


@dataclass
class _UserData:
    """Everything of one user a forget looks at, read once."""

    memories: dict[str, EpisodicMemory]
    facts: dict[str, SemanticFact]
    shared_facts: list[SemanticFact]
    procedures: dict[str, tuple[str, int]]  # id -> (question, last used)
    messages: dict[str, list[tuple[str, ChatMessage]]]  # session -> (stored JSON, message)
    details: dict[str, dict[str, str]]  # session -> field -> stored JSON
    titles: dict[str, str]
    queries: list[str]
    merges: dict[str, str]  # merge id -> stored JSON
    latest_summary: dict[str, str]  # session -> id of its newest summary
    last_report: str


@dataclass
class _Selection:
    episodic: set[str] = field(default_factory=set)
    semantic: set[str] = field(default_factory=set)
    procedural: set[str] = field(default_factory=set)
    messages: set[tuple[str, str]] = field(default_factory=set)  # (session, message id)

    def size(self) -> int:
        return len(self.episodic) + len(self.semantic) + len(self.procedural) + len(self.messages)


@translate_store_errors
class TopicForget:
    """Built from the coordinator's parts (`TopicForget.of`), so the coordinator does not grow;
    every public method goes through the one error boundary."""

    def __init__(
        self,
        stores: Stores,
        embedder: CachedEmbedder,
        search: Search,
        check_store: Callable[[], None],
        drain: Callable[[], None],
        min_score: float = FORGET_MIN_SCORE,
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self._search = search
        self._check_store = check_store
        self._drain = drain
        self.min_score = min_score

    @classmethod
    def of(cls, coordinator: CoordinatorParts) -> TopicForget:
        return cls(
            coordinator.stores,
            coordinator.embedder,
            coordinator.search,
            coordinator.identity.check,
            coordinator.bookkeeping.drain,
        )

    def preview(self, user_id: str, query: str) -> TopicPreview:
        check_id(user_id)
        roots = topic_roots(query)
        scores = self._scores(user_id, query)
        data = self._read(user_id)
        self._unnote(user_id, query)
        return TopicPreview(
            user_id=user_id,
            query=query,
            words=[w for w in dict.fromkeys(words(query)) if w not in STOPWORDS and len(w) > 1],
            matches=_matches(data, roots, scores),
            shared_facts=sum(mentions(_fact_text(f), roots) for f in data.shared_facts),
        )

    def forget(self, user_id: str, query: str, *, keep: Collection[str] = ()) -> ForgetReport:
        """Delete what a preview finds now except `keep` (refs), and what came from it."""
        check_id(user_id)
        roots = topic_roots(query)
        self._check_store()
        scores = self._scores(user_id, query)
        self._drain()  # the queries recall noted (this search's too) are in Redis now
        data = self._read(user_id)
        kept = set(keep)
        chosen = _Selection()
        for m in _matches(data, roots, scores):
            if m.ref not in kept:
                _add(chosen, m.ref)
        _follow(chosen, data, kept)
        counts = self._delete(user_id, query, roots, data, chosen)
        went = sum(counts.get(k, 0) for k in ("memories", "facts", "procedures"))
        activity.record(self._stores.client, self._stores.keys, user_id, "forgotten", went)
        return ForgetReport(user_id=user_id, query=query, counts=counts)

    # --- reading -------------------------------------------------------------------------
    def _scores(self, user_id: str, query: str) -> dict[str, float]:
        """`type:id` -> hybrid-search score, for hits at `min_score` or above."""
        out: dict[str, float] = {}
        for mtype in (MemoryType.EPISODIC, MemoryType.SEMANTIC):
            hits = self._search(
                user_id,
                query,
                mtype,
                k=SEARCH_K,
                min_score=self.min_score,
                **({"include_superseded": True} if mtype is MemoryType.EPISODIC else {}),
            )
            out.update({f"{mtype.value}:{h.id}": h.score for h in hits})
        return out

    def _unnote(self, user_id: str, query: str) -> None:
        """A preview leaves no trace of the topic: its search's cache entry and the query
        noted for it go again."""
        self._drain()
        self._stores.client.srem(self._stores.keys.user_queries(user_id), query)
        self._embedder.forget([query])

    def _read(self, user_id: str) -> _UserData:
        stores, keys, r = self._stores, self._stores.keys, self._stores.client
        memories = stores.episodic.get_many(user_id, stores.episodic.ids_for_user(user_id))
        facts = [_fact(stores, fid) for fid in stores.semantic.ids_added_by(user_id)]
        procedures: dict[str, tuple[str, int]] = {}
        for k in stores.procedural.keys_for_user(user_id):
            pid = Keys.memory_id(k)
            try:
                p = stores.procedural.get(user_id, pid)
            except NotFoundError:  # deleted meanwhile
                continue
            procedures[pid] = (p.query_pattern, p.last_used or p.created_at)
        sessions = stores.short_term.sessions(user_id)
        merge_ids = [as_str(m) for m in r.zrange(keys.user_merges(user_id), 0, -1)]
        merge_raws = r.mget([keys.merge(user_id, m) for m in merge_ids]) if merge_ids else []
        latest = {s: r.hget(keys.summary_state(user_id, s), "latest") for s in sessions}
        return _UserData(
            memories={m.id: m for m in memories},
            facts={f.id: f for f in facts if f is not None and not f.shared},
            shared_facts=[f for f in facts if f is not None and f.shared],
            procedures=procedures,
            messages={s: stores.short_term.raw_messages(user_id, s) for s in sessions},
            details={s: stores.short_term.raw_details(user_id, s) for s in sessions},
            titles=stores.short_term.titles(user_id),
            queries=[as_str(q) for q in r.smembers(keys.user_queries(user_id))],
            merges={m: as_str(v) for m, v in zip(merge_ids, merge_raws, strict=True) if v},
            latest_summary={s: as_str(v) for s, v in latest.items() if v},
            last_report=as_str(r.get(keys.maintenance_last(user_id)) or ""),
        )

    # --- deleting ------------------------------------------------------------------------
    def _delete(
        self,
        user_id: str,
        query: str,
        roots: frozenset[str],
        data: _UserData,
        chosen: _Selection,
    ) -> dict[str, int]:
        stores, keys = self._stores, self._stores.keys
        turns = _turns_of(data, chosen.messages)
        gone_ids = chosen.episodic | {mid for _, mid in chosen.messages}
        mems = [data.memories[i] for i in chosen.episodic]
        counts = {
            "memories": sum(
                1 for m in mems if m.event_type is not EventType.SUMMARY and not m.superseded_by
            ),
            "earlier_versions": sum(1 for m in mems if m.superseded_by),
            "summaries": sum(
                1 for m in mems if m.event_type is EventType.SUMMARY and not m.superseded_by
            ),
            "facts": len(chosen.semantic),
            "procedures": len(chosen.procedural),
            "messages": len(chosen.messages),
            "answer_details": 0,
            "extraction_log": 0,
            "merge_records": 0,
            "session_titles": 0,
            "recall_queries": 0,
            "maintenance_report": 0,
            "cached_embeddings": 0,
        }
        pipe = stores.client.pipeline(transaction=True)
        ids = sorted(chosen.episodic)
        stores.episodic.delete_many(pipe, user_id, ids)
        if ids:
            pipe.hdel(keys.decay_state(user_id), *ids)
        for m in mems:
            if m.session_id and m.event_type is EventType.INTERACTION:
                pipe.zrem(keys.timeline(user_id, owner_tag(user_id, m.session_id)), m.id)
        for s, latest in data.latest_summary.items():
            if latest in chosen.episodic:
                pipe.hdel(keys.summary_state(user_id, s), "latest")
        for pid in sorted(chosen.procedural):
            pipe.delete(keys.procedure(user_id, pid))
        for s, msgs in data.messages.items():
            raws = [raw for raw, m in msgs if (s, m.id) in chosen.messages]
            stores.short_term.remove_raw(pipe, user_id, s, raws)
        for s, fields in data.details.items():
            drop = [
                f
                for f, raw in fields.items()
                if (s, f.split("#", 1)[0]) in turns or mentions(raw, roots)
            ]
            stores.short_term.drop_details(pipe, user_id, s, drop)
            counts["extraction_log"] += sum(1 for f in drop if f.endswith("#extraction"))
            counts["answer_details"] += sum(1 for f in drop if "#" not in f)
        titles = [s for s, t in data.titles.items() if mentions(t, roots)]
        if titles:
            pipe.hdel(keys.session_titles(user_id), *titles)
        queries = [q for q in data.queries if mentions(q, roots)]
        if queries:
            pipe.srem(keys.user_queries(user_id), *queries)
        merges = [mid for mid, raw in data.merges.items() if _names(raw, gone_ids, roots)]
        for mid in merges:
            pipe.delete(keys.merge(user_id, mid))
        if merges:
            pipe.zrem(keys.user_merges(user_id), *merges)
        if data.last_report and _names(data.last_report, gone_ids, roots):
            pipe.delete(keys.maintenance_last(user_id))
            counts["maintenance_report"] = 1
        pipe.execute()
        counts.update(
            session_titles=len(titles), recall_queries=len(queries), merge_records=len(merges)
        )

        # Shared data, after the user's transaction: facts (a slot each), then the cache.
        if chosen.semantic:
            shared = stores.client.pipeline(transaction=False)
            stores.semantic.delete_many(shared, sorted(chosen.semantic))
            shared.execute()
        texts = {query, *queries}
        texts |= {m.description for m in mems}
        texts |= {data.facts[f].fact for f in chosen.semantic}
        texts |= {data.procedures[p][0] for p in chosen.procedural}
        texts |= {m.content for s, msgs in data.messages.items() for _, m in msgs if (s, m.id)
                  in chosen.messages}  # fmt: skip
        counts["cached_embeddings"] = self._drop_cached(texts, roots)
        return counts

    def _drop_cached(self, texts: set[str], roots: frozenset[str]) -> int:
        """Cache entries of these texts or whose text mentions the topic (both levels)."""
        r = self._stores.client
        keys = list(r.scan_iter(match=self._stores.keys.embedding_cache_entries, count=500))
        if not keys:
            self._embedder.forget(sorted(texts))
            return 0
        pipe = r.pipeline(transaction=False)
        for k in keys:
            pipe.hget(k, "content")
        found = [
            (k, as_str(c))
            for k, c in zip(keys, pipe.execute(), strict=True)
            if c is not None and (as_str(c) in texts or mentions(as_str(c), roots))
        ]
        pipe = r.pipeline(transaction=False)
        for k, _ in found:
            pipe.delete(k)
        pipe.execute()
        self._embedder.forget(sorted(texts | {c for _, c in found}))
        return len(found)


# --- matching and following ------------------------------------------------------------------


def _fact(stores: Stores, fact_id: str) -> SemanticFact | None:
    try:
        return stores.semantic.get(fact_id)
    except NotFoundError:
        return None


def _fact_text(f: SemanticFact) -> str:
    return " ".join((f.fact, f.context, f.category, f.fact_type, json.dumps(f.metadata)))


def _memory_text(m: EpisodicMemory) -> str:
    return " ".join(
        (m.description, m.context, " ".join(m.tags), json.dumps(m.metadata, ensure_ascii=False))
    )


def _names(raw: str, ids: set[str], roots: frozenset[str]) -> bool:
    """Does a stored record quote the topic or name one of these ids?"""
    return mentions(raw, roots) or any(i in raw for i in ids)


def _matches(data: _UserData, roots: frozenset[str], scores: dict[str, float]) -> list[TopicMatch]:
    out: list[TopicMatch] = []
    for m in data.memories.values():
        ref = f"episodic:{m.id}"
        if ref in scores or mentions(_memory_text(m), roots):
            kind = m.event_type.value + (" (earlier version)" if m.superseded_by else "")
            out.append(
                TopicMatch(
                    ref=ref,
                    memory_type="episodic",
                    kind=kind,
                    text=m.description,
                    timestamp=m.timestamp,
                    score=scores.get(ref),
                    session_id=m.session_id,
                )
            )
    for f in data.facts.values():
        ref = f"semantic:{f.id}"
        if ref in scores or mentions(_fact_text(f), roots):
            out.append(
                TopicMatch(
                    ref=ref,
                    memory_type="semantic",
                    kind=f.category,
                    text=f.fact,
                    timestamp=f.timestamp,
                    score=scores.get(ref),
                )
            )
    for pid, (question, used) in data.procedures.items():
        if mentions(question, roots):
            out.append(
                TopicMatch(
                    ref=f"procedural:{pid}",
                    memory_type="procedural",
                    kind="procedure",
                    text=question,
                    timestamp=used,
                )
            )
    for s, msgs in data.messages.items():
        for _, msg in msgs:
            if mentions(msg.content, roots):
                out.append(
                    TopicMatch(
                        ref=f"short_term:{s}:{msg.id}",
                        memory_type="short_term",
                        kind=f"{msg.role} message",
                        text=msg.content,
                        timestamp=msg.timestamp,
                        session_id=s,
                    )
                )
    out.sort(key=lambda m: (-(m.score or 0.0), -m.timestamp))
    return out


def _add(chosen: _Selection, ref: str) -> None:
    mtype, _, rest = ref.partition(":")
    if mtype == "episodic":
        chosen.episodic.add(rest)
    elif mtype == "semantic":
        chosen.semantic.add(rest)
    elif mtype == "procedural":
        chosen.procedural.add(rest)
    elif mtype == "short_term":
        session, _, mid = rest.rpartition(":")
        chosen.messages.add((session, mid))


def _turns_of(data: _UserData, messages: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """(session, turn id) of these messages."""
    return {
        (s, str(m.metadata["turn_id"]))
        for s, msgs in data.messages.items()
        for _, m in msgs
        if (s, m.id) in messages and m.metadata.get("turn_id")
    }


def _follow(chosen: _Selection, data: _UserData, kept: set[str]) -> None:
    """Add what came from the chosen items, and what that came from, until nothing is new."""

    def take(ref: str) -> None:
        if ref not in kept:
            _add(chosen, ref)

    stored_messages = {(s, m.id) for s, msgs in data.messages.items() for _, m in msgs}
    while True:
        before = chosen.size()
        gone_messages = {mid for _, mid in chosen.messages}
        for m in data.memories.values():
            if m.superseded_by in chosen.episodic:  # an earlier version
                take(f"episodic:{m.id}")
            cited = m.metadata.get("message_ids") or []
            if m.event_type is EventType.SUMMARY and gone_messages.intersection(cited):
                take(f"episodic:{m.id}")
            answer = str(m.metadata.get("assistant_message_id") or "")
            if m.event_type is EventType.INTERACTION and answer:
                if answer in gone_messages:  # the logged exchange of a forgotten message
                    take(f"episodic:{m.id}")
                elif m.id in chosen.episodic and (m.session_id, answer) in stored_messages:
                    take(f"short_term:{m.session_id}:{answer}")  # its messages
        turns = _turns_of(data, chosen.messages)
        for s, msgs in data.messages.items():
            for _, msg in msgs:
                if (s, str(msg.metadata.get("turn_id") or "")) in turns:
                    take(f"short_term:{s}:{msg.id}")
        for s, fields in data.details.items():
            for f, raw in fields.items():
                if (s, f.split("#", 1)[0]) in turns:
                    for ref in _stored_refs(raw, data):
                        take(ref)
        if chosen.size() == before:
            return


def _stored_refs(raw: str, data: _UserData) -> list[str]:
    """The memories a turn wrote (the `stored` list of its details or extraction outcome)."""
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return []
    stored = value.get("stored") if isinstance(value, dict) else None
    out = []
    for item in stored if isinstance(stored, list) else []:
        if not isinstance(item, dict):
            continue
        mid, mtype = str(item.get("id") or ""), item.get("memory_type")
        if mtype == "episodic" and mid in data.memories:
            out.append(f"episodic:{mid}")
        elif mtype == "semantic" and mid in data.facts:
            out.append(f"semantic:{mid}")
    return out
