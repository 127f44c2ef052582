"""Forget a topic: every memory that mentions it, and what carries its text or was derived from
it, deleted for real (docs/privacy.md). `preview` reads what matches for people to review;
`forget` deletes what a preview finds now, minus what they unticked. `memory.admin.topic_match`
decides what matches; the user's keys change in one MULTI/EXEC, shared data follows."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memory import activity
from memory.admin import followups
from memory.admin.stats import note_write
from memory.admin.topic_match import (
    ProcedureText,
    Selection,
    TopicMatch,
    UserData,
    add_ref,
    fact_text,
    find_matches,
    follow,
    mentions,
    names_any,
    topic_roots,
    turns_of,
)
from memory.boundary import translate_store_errors
from memory.embeddings import CachedEmbedder
from memory.errors import NotFoundError
from memory.keys import Keys, owner_tag
from memory.models import (
    BAND_HIGH,
    EpisodicMemory,
    EventType,
    MemoryType,
    RecallHit,
    SemanticFact,
    check_id,
)
from memory.queries import SearchFilter
from memory.replies import as_str
from memory.stores import Stores
from memory.stores.usage import queue_drop
from memory.text import embedder_knows
from memory.words import forgotten_words

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

#: Hybrid-search hits at or above this final score count as mentions in other words ("high").
FORGET_MIN_SCORE = BAND_HIGH
SEARCH_K = 50

Search = Callable[..., list[RecallHit]]


class TopicPreview(BaseModel):
    user_id: str
    query: str
    matches: list[TopicMatch] = Field(default_factory=list)
    shared_facts: int = Field(
        default=0, description="Facts of this user that an admin shared and mention it: kept"
    )


class ForgetReport(BaseModel):
    """What a forget deleted. `items` counts in the preview's unit (its rows: the memories,
    facts, procedures and messages that mention the topic, minus those kept); `counts` is
    everything that went per kind, those items and what came from them."""

    user_id: str
    query: str
    items: int = Field(default=0, description="The preview's rows that went")
    counts: dict[str, int] = Field(description="What went, per kind")

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """One sentence in the preview's unit: "3 items and 4 notes that came from them
        went: 2 memories, ..." (the same words in the CLI and the app)."""
        if not self.total:
            return "nothing went"
        went = ", ".join(forgotten_words(v, k) for k, v in self.counts.items() if v)
        rest = self.total - self.items
        records = f"{rest} note{'s' * (rest != 1)}"
        if not self.items:  # only traces (details, titles, searches) mentioned it
            return f"{records} went: {went}"
        more = f" and {records} that came from them" if rest else ""
        return f"{forgotten_words(self.items, 'items')}{more} went: {went}"


@translate_store_errors
@dataclass(eq=False)
class TopicForget:
    """A topic forget, an operation of its own like `Maintenance`: built from the parts of the
    coordinator it uses (`TopicForget.of`); every public method passes the error boundary."""

    #: the words of a count, for the screens that show a preview and its result
    counted = staticmethod(forgotten_words)

    _stores: Stores
    _embedder: CachedEmbedder
    _search: Search
    _check_store: Callable[[], None]
    _drain: Callable[[], None]

    @classmethod
    def of(cls, coordinator: MemoryCoordinator) -> TopicForget:
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
            matches=find_matches(data, roots, scores),
            shared_facts=sum(mentions(fact_text(f), roots) for f in data.shared_facts),
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
        chosen = Selection()
        for m in find_matches(data, roots, scores):
            if m.ref not in kept:
                add_ref(chosen, m.ref)
        items = chosen.size()  # what a preview now lists, minus what people kept
        follow(chosen, data, kept)
        counts = self._delete(user_id, query, roots, data, chosen)
        went = sum(counts.get(k, 0) for k in ("memories", "facts", "procedures"))
        activity.record(self._stores.client, self._stores.keys, user_id, "forgotten", went)
        if went:
            note_write(self._stores.client, self._stores.keys, user_id)  # the Stats version
        return ForgetReport(user_id=user_id, query=query, items=items, counts=counts)

    # --- reading -------------------------------------------------------------------------
    def _scores(self, user_id: str, query: str) -> dict[str, float]:
        """`type:id` -> hybrid-search score, for hits at FORGET_MIN_SCORE or above; none for a
        topic or a text in a language the embedder does not know (its cosine would call
        unrelated texts close: `embedder_knows`)."""
        out: dict[str, float] = {}
        if not embedder_knows(query):
            return out
        for mtype in (MemoryType.EPISODIC, MemoryType.SEMANTIC):
            hits = self._search(
                user_id,
                query,
                mtype,
                k=SEARCH_K,
                # superseded memories hold the topic too (a semantic search has none)
                where=SearchFilter(min_score=FORGET_MIN_SCORE, include_superseded=True),
            )
            out.update({f"{mtype.value}:{h.id}": h.score for h in hits if embedder_knows(h.text)})
        return out

    def _unnote(self, user_id: str, query: str) -> None:
        """A preview leaves no trace of the topic: its search's cache entry and the query
        noted for it go again."""
        self._drain()
        self._stores.client.srem(self._stores.keys.user_queries(user_id), query)
        self._embedder.forget([query])

    def _read(self, user_id: str) -> UserData:
        stores, keys, r = self._stores, self._stores.keys, self._stores.client
        memories = stores.episodic.get_many(user_id, stores.episodic.ids_for_user(user_id))
        facts = [_fact(stores, fid) for fid in stores.semantic.ids_added_by(user_id)]
        procedures: dict[str, ProcedureText] = {}
        for k in stores.procedural.keys_for_user(user_id):
            pid = Keys.memory_id(k)
            try:
                p = stores.procedural.get(user_id, pid)
            except NotFoundError:  # deleted meanwhile
                continue
            tools = [*p.tool_sequence, *(t for s in p.sequences.values() for t in s.tools)]
            procedures[pid] = ProcedureText(
                p.query_pattern, p.last_used or p.created_at, tuple(dict.fromkeys(tools))
            )
        sessions = stores.short_term.sessions(user_id)
        merge_ids = [as_str(m) for m in r.zrange(keys.user_merges(user_id), 0, -1)]
        merge_raws = r.mget([keys.merge(user_id, m) for m in merge_ids]) if merge_ids else []
        latest = {s: r.hget(keys.summary_state(user_id, s), "latest") for s in sessions}
        return UserData(
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
        data: UserData,
        chosen: Selection,
    ) -> dict[str, int]:
        stores, keys = self._stores, self._stores.keys
        turns = turns_of(data, chosen.messages)
        gone_ids = chosen.episodic | {mid for _, mid in chosen.messages}
        mems = [data.memories[i] for i in chosen.episodic]
        cached, texts = self._cached_texts(query, data, chosen, mems, roots)
        # What follows in shared data (facts, cached embeddings) is a note in the transaction:
        # finished below, or by the next open if this process stops first.
        note = followups.FollowUp(
            what="forget",
            user_id=user_id,
            delete_facts=sorted(chosen.semantic),
            forget_texts=sorted(texts),
        )
        followups.register(stores, user_id)
        pipe = stores.client.pipeline(transaction=True)
        ids = sorted(chosen.episodic)
        stores.episodic.delete_many(pipe, user_id, ids)
        # which answers used a forgotten fact, and the forgotten turns' records of what they used
        queue_drop(pipe, keys, user_id, sorted(chosen.semantic), sorted({t for _, t in turns}))
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
        details = logs = 0
        for s, fields in data.details.items():
            drop = [
                f
                for f, raw in fields.items()
                if (s, f.split("#", 1)[0]) in turns
                or names_any(raw, gone_ids | chosen.semantic, roots)
            ]
            stores.short_term.drop_details(pipe, user_id, s, drop)
            logs += sum(1 for f in drop if f.endswith("#extraction"))
            details += sum(1 for f in drop if "#" not in f)
        # A session whose id names the topic goes once none of its messages stays.
        named = [
            s
            for s, msgs in data.messages.items()
            if mentions(s, roots) and all((s, m.id) in chosen.messages for _, m in msgs)
        ]
        for s in named:
            stores.short_term.clear(pipe, user_id, s)
        titles = [
            s for s, t in data.titles.items() if s not in named and mentions(f"{s} {t}", roots)
        ]
        if titles:
            pipe.hdel(keys.session_titles(user_id), *titles)
        queries = [q for q in data.queries if mentions(q, roots)]
        if queries:
            pipe.srem(keys.user_queries(user_id), *queries)
        merges = [mid for mid, raw in data.merges.items() if names_any(raw, gone_ids, roots)]
        for mid in merges:
            pipe.delete(keys.merge(user_id, mid))
        if merges:
            pipe.zrem(keys.user_merges(user_id), *merges)
        report = bool(data.last_report) and names_any(data.last_report, gone_ids, roots)
        if report:
            pipe.delete(keys.maintenance_last(user_id))
        followups.queue(pipe, stores, note)
        pipe.execute()
        stores.short_term.clear_shared(user_id, named)
        # What went per kind; the cache entries of this user's texts were counted into the
        # note from the user's own records (never from the shared cache): its step drops them.
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
            "answer_details": details,
            "extraction_log": logs,
            "merge_records": len(merges),
            "sessions": len(named),
            "session_titles": len(titles) + sum(1 for s in named if s in data.titles),
            "recall_queries": len(queries),
            "maintenance_report": int(report),
            "cached_embeddings": len(cached),
        }
        followups.run_after(stores, self._embedder, note, "the user's records were deleted")
        return counts

    def _cached_texts(
        self,
        query: str,
        data: UserData,
        chosen: Selection,
        mems: list[EpisodicMemory],
        roots: frozenset[str],
    ) -> tuple[set[str], set[str]]:
        """The cache entries that go, found from this user's own records: (what the user searched
        or asked, which is what is counted; every text whose cached vector goes).

        What they searched (their noted queries and this topic), asked in the chat, and the
        procedures' questions were embedded through the cache when written; the other forgotten
        texts go too, in case one was searched word for word. The shared cache is never scanned,
        so another user's entries are neither counted nor touched.
        """
        queries = [q for q in data.queries if mentions(q, roots)]
        questions = {
            m.content
            for s, msgs in data.messages.items()
            for _, m in msgs
            if (s, m.id) in chosen.messages and m.role == "user"
        }
        questions |= {data.procedures[p].question for p in chosen.procedural}
        searched = [query] if embedder_knows(query) else []  # this forget's own search
        cached = {self._embedder.masked(t) for t in {*searched, *queries, *questions}}
        texts = {*cached, query, *(m.description for m in mems)}
        texts |= {data.facts[f].fact for f in chosen.semantic}
        texts |= {m.content for s, msgs in data.messages.items() for _, m in msgs if (s, m.id)
                  in chosen.messages}  # fmt: skip
        return cached, texts


# --- reading ------------------------------------------------------------------------------------


def _fact(stores: Stores, fact_id: str) -> SemanticFact | None:
    try:
        return stores.semantic.get(fact_id)
    except NotFoundError:
        return None
