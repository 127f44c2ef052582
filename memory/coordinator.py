"""The memory coordinator: the one implementation of `memory.service` the agent and the UI use. It
owns the stores, the embedder and the metrics and composes recall, writes and `memory.admin`;
every public method passes the error boundary, every write the store identity check."""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar, Unpack

import numpy as np
import redis

from memory import admin
from memory.activity import MemoryHistory
from memory.bookkeeping import Bookkeeper
from memory.boundary import translate_store_errors
from memory.config import Settings
from memory.embeddings import CachedEmbedder, Embedder, build_embedder
from memory.errors import MemorySystemError
from memory.identity import StoreIdentity
from memory.keys import Keys
from memory.metrics import MetricsRecorder
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    MemoryContext,
    MemoryType,
    ProceduralPattern,
    ProfileLine,
    RecallHit,
    SemanticFact,
    check_id,
    check_text,
    now_ms,
)
from memory.queries import ListQuery, RecallOptions, SearchFilter
from memory.recall import RecallWeights
from memory.recall.pipeline import RecallPipeline
from memory.replies import as_str
from memory.service import ImportOptions, MemoryStats, StoredInteraction
from memory.stores import Stores, usage
from memory.stores.episodic import EpisodicStore, embedding_text, interaction
from memory.stores.procedural import check_run
from memory.stores.semantic import SemanticStore
from memory.stores.short_term import Details, ShortTermStore
from memory.user_profile import read_profile

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def _writes(
    method: Callable[Concatenate[MemoryCoordinator, P], R],
) -> Callable[Concatenate[MemoryCoordinator, P], R]:
    """A method that writes first checks that the Redis is still the one the memories are on
    (one GET), so nothing lands on another server before the user is told."""

    @functools.wraps(method)
    def checked(self: MemoryCoordinator, *args: P.args, **kwargs: P.kwargs) -> R:
        self.identity.check()
        return method(self, *args, **kwargs)

    return checked


def _changes(
    method: Callable[Concatenate[MemoryCoordinator, P], R],
) -> Callable[Concatenate[MemoryCoordinator, P], R]:
    """`_writes` to memories: once done, the user's write counter is bumped (the shared one
    when it names no user), the version a cached Stats page is invalidated by."""
    signature, checked = inspect.signature(method), _writes(method)

    @functools.wraps(method)
    def noted(self: MemoryCoordinator, *args: P.args, **kwargs: P.kwargs) -> R:
        result = checked(self, *args, **kwargs)
        user_id = signature.bind(self, *args, **kwargs).arguments.get("user_id")
        admin.note_write(self.redis, self.keys, user_id)
        if user_id:  # the next recall reads the profile in its first round trip
            self.recall.profile.drop(user_id)
        return result

    return noted


@translate_store_errors
class MemoryCoordinator:
    """Built once per process with `MemoryCoordinator.from_settings(settings)`."""

    def __init__(
        self,
        client: redis.Redis,
        embedder: Embedder,
        settings: Settings,
        load_knowledge: bool = True,
    ) -> None:
        self.settings = settings
        self.keys = Keys(settings.memory_namespace)
        self.redis = client
        self.metrics = MetricsRecorder(client, self.keys, settings.metrics_max_entries)
        self.embedder = CachedEmbedder(
            embedder,
            client,
            self.keys.embedding_cache_name,
            settings.embedding_cache_ttl_s,
            self.metrics,
            pii=settings.pii_policy,
        )
        self.identity = StoreIdentity(
            client,
            self.keys,
            self._reopen,
            "REDIS_URL and the data folder its server was started with"
            if settings.redis_url
            else f"that the embedded Redis on port {settings.redis_port} runs on "
            f"REDIS_DATA_DIR={settings.redis_data_dir} (`python -m memory redis status`)",
        )
        self.identity.claim()  # before the indexes: they belong to the server it names
        self.stores = Stores.open(
            client, self.keys, settings, model_id=embedder.model_id, dims=embedder.dims
        )
        self.episodic = self.stores.episodic
        self.semantic = self.stores.semantic
        self.procedural = self.stores.procedural
        self.short_term = self.stores.short_term
        self.usage = usage.UsageRecords(self.redis, self.keys)
        self.history = MemoryHistory(self.stores, self.embedder)  # per-day activity, undo
        self.bookkeeping = Bookkeeper(
            client, self.keys, self.episodic, settings.embedding_cache_ttl_s, self.embedder.masked
        )
        self.recall = RecallPipeline(
            self.stores,
            self.embedder,
            RecallWeights(
                recency=settings.recall_recency_weight,
                importance=settings.recall_importance_weight,
                half_life_days=settings.recency_half_life_days,
                min_score=settings.recall_min_score,
            ),
            self.metrics,
            self.bookkeeping,
            int(settings.short_term_recall_tokens),
            self.identity,
        )
        if load_knowledge:
            self.load_knowledge()
        #: what this open finished of writes a stopped process left, and the imports it
        #: left cut off (one line each)
        self.recovered: list[str] = [
            *admin.finish_pending(self.stores, self.embedder),
            *admin.interrupted_imports(self.stores),
        ]

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> MemoryCoordinator:
        from memory.runtime import connect

        settings = settings or Settings()
        return cls(connect(settings), build_embedder(settings), settings)

    def count_event(self, name: str) -> None:
        self.metrics.count(name)

    def text_similarity(self, a: str, b: str) -> float:
        va = self.embedder.embed(check_text(a, "Text"))
        vb = self.embedder.embed(check_text(b, "Text"))
        return float(np.dot(va, vb))

    def close(self) -> None:
        self.bookkeeping.close()
        self.metrics.close()
        self.embedder.close()

    def _reopen(self) -> list[str]:
        """On a Redis that replaced ours: recreate the indexes and the knowledge facts."""
        created = self.stores.recreate_missing(self.embedder.model_id, self.embedder.dims)
        done = [f"the indexes {', '.join(created)}"] if created else []
        facts = self.load_knowledge()
        return done + ([f"{facts} facts of the knowledge file"] if facts else [])

    def _explain_store_error(self, error: BaseException) -> MemorySystemError | None:
        """The boundary's hook: "no such index" and the like may mean another Redis."""
        return self.identity.explain(error)

    # =====================================================================================
    # Recall
    # =====================================================================================
    def retrieve_all_context(
        self, user_id: str, session_id: str, query: str, options: RecallOptions = RecallOptions()
    ) -> MemoryContext:
        """All that is relevant to `query`, timed per stage."""
        k = options.k_episodic or self.settings.recall_prompt_k
        return self.recall.context(user_id, session_id, query, options, k)

    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        where: SearchFilter | None = None,
    ) -> list[RecallHit]:
        """Hybrid search of one type (episodic or semantic), narrowed by `where`."""
        return self.recall.search(user_id, query, memory_type, k=k, where=where)

    def find_similar_episodic(self, user_id: str, text: str, *, k: int = 5) -> list[RecallHit]:
        """Nearest active episodic memories by vector only, paused ones too (dedup)."""
        return self.recall.similar_episodic(user_id, text, k=k)

    # =====================================================================================
    # Writing
    # =====================================================================================
    @_changes
    def add_episodic(
        self, user_id: str, text: str, *, supersedes: str | None = None, **fields: Any
    ) -> EpisodicMemory:
        t = time.perf_counter()
        mem = EpisodicStore.build(user_id, text, pii=self.stores.pii, **fields)
        if supersedes:
            self.episodic.get(user_id, supersedes)  # must exist and belong to the user
        vec = self.embedder.embed(embedding_text(mem.description, mem.context))
        pipe = self.stores.user_pipeline(user_id)
        self.episodic.write(pipe, mem, vec)
        if supersedes:
            self.episodic.supersede(pipe, user_id, supersedes, mem.id)
        pipe.execute()
        self.metrics.record("episodic", "add", _ms(t))
        return mem

    @_changes
    def add_episodic_many(
        self, user_id: str, items: list[dict[str, Any]], batch_size: int = 256
    ) -> list[str]:
        """Bulk write path: validate all, embed in batches, write in pipelined batches."""
        mems = [EpisodicStore.build(user_id, pii=self.stores.pii, **item) for item in items]
        ids: list[str] = []
        for start in range(0, len(mems), batch_size):
            chunk = mems[start : start + batch_size]
            t = time.perf_counter()
            vecs = self.embedder.embed_many(
                [embedding_text(m.description, m.context) for m in chunk]
            )
            pipe = self.stores.user_pipeline(user_id, transaction=False)
            for m, v in zip(chunk, vecs, strict=True):
                self.episodic.write(pipe, m, v)
            pipe.execute()
            ids.extend(m.id for m in chunk)
            self.metrics.record("episodic", "add_many", _ms(t))
        return ids

    @_writes
    def add_semantic(self, text: str, **fields: Any) -> SemanticFact:
        t = time.perf_counter()
        fact = SemanticStore.build(text, pii=self.stores.pii, **fields)
        vec = self.embedder.embed(fact.fact)
        if fact.added_by:  # the user list is another slot than the fact: not in its MULTI
            self.stores.note_user(fact.added_by)
        pipe = self.redis.pipeline(transaction=True)
        self.semantic.write(pipe, fact, vec)
        pipe.execute()
        # a user's own fact changes what that user sees; a shared one what everyone sees
        admin.note_write(self.redis, self.keys, None if fact.shared else fact.added_by)
        self.metrics.record("semantic", "add", _ms(t))
        return fact

    @_changes
    def record_procedure(
        self,
        user_id: str,
        query: str,
        tools: list[str],
        *,
        success_score: float,
        execution_time_ms: float,
    ) -> ProceduralPattern:
        t = time.perf_counter()
        qvec, _ = self.embedder.embed_query(check_text(query, "Query"))
        pattern = self.procedural.record(
            user_id, query, tools, success_score, execution_time_ms, qvec, self.stores.pii
        )
        self.metrics.record("procedural", "record", _ms(t))
        return pattern

    @_changes
    def rescore_last_procedure(
        self, user_id: str, query: str, tools: list[str], success_score: float
    ) -> None:
        """Lower (or raise) the score of the last run of `tools` for `query`."""
        self.procedural.adjust_last(user_id, query, tools, success_score)

    @_writes
    def store_interaction(
        self,
        user_id: str,
        session_id: str,
        user_message: str,
        assistant_response: str,
        *,
        tools_used: list[str] | None = None,
        execution_time_ms: float = 0.0,
        success_score: float | None = None,
        store_episode: bool = True,
        turn_id: str | None = None,
        used: Sequence[str] = (),
        episode_answer: str | None = None,
        memory_only: bool = False,
    ) -> StoredInteraction:
        """Both messages to short-term, the exchange as an episodic interaction, the tool
        sequence with its outcome to procedural memory. `turn_id` is kept in the messages'
        metadata so a UI can find the turn's details again; `used`: the ids of the memories
        the answer was given, recorded under that turn in the same transaction;
        `episode_answer`: the answer as the logged exchange keeps it (the chat's own notices
        left out by the agent), the answer itself when None; `memory_only`: the answer was
        given without a model (its message says so in its metadata: no model reads it back)."""
        t0 = time.perf_counter()
        marks = {"memory_only": True} if memory_only else {}
        msgs = self._exchange(user_message, assistant_response, turn_id, **marks)
        check_id(user_id)
        check_id(session_id, "session id")
        score = 1.0 if success_score is None else success_score
        if tools_used:  # validate the procedural part too, before anything is written
            check_run(msgs[0].content, tools_used, score)
        result: StoredInteraction = {
            "short_term": [m.id for m in msgs],
            "episodic": None,
            "procedural": None,
        }
        pipe = self.stores.user_pipeline(user_id)
        self.short_term.write(pipe, user_id, session_id, msgs)
        qvec: np.ndarray | None = None
        if store_episode or tools_used:
            # The question's embedding is usually cached from the recall of this turn.
            qvec, _ = self.embedder.embed_query(msgs[0].content)
        if store_episode:
            answer = msgs[1]
            if episode_answer is not None:
                answer = answer.model_copy(update={"content": episode_answer})
            exchange = interaction(
                session_id, msgs[0].content, answer.content, answer.id, tools_used or []
            )
            mem = EpisodicStore.build(user_id, pii=self.stores.pii, **exchange)
            self.episodic.write(pipe, mem, qvec)  # type: ignore[arg-type]
            result["episodic"] = mem.id
        if turn_id:
            usage.queue_record(pipe, self.keys, user_id, session_id, turn_id, used, now_ms())
        pipe.execute()
        if tools_used:
            try:
                pattern = self.procedural.record(
                    user_id, msgs[0].content, tools_used, score, execution_time_ms, qvec
                )
            except redis.RedisError as e:
                # The exchange is saved (above); only the lesson about its tools is lost, so
                # the caller must not tell the user their message was not saved.
                log.warning("Could not record the tool sequence of a turn: %s", e)
            else:
                result["procedural"] = pattern.id
        # hit: this answer's usage record lists a memory (Stats' "Answers that used memory")
        used_any = bool(turn_id) and len(used) > 0
        self.metrics.record("all", "store_interaction", _ms(t0), hit=used_any)
        if store_episode:
            # Written at once with the question's cached vector (no model call before the
            # next answer); the vector of record, `description (context)`, follows off-path,
            # queued last so it does not compete with the rest of this write.
            text = embedding_text(mem.description, mem.context)
            self.bookkeeping.refine_vector(user_id, mem.id, text, self.embedder.embed)
        # the Stats version, as `_changes` bumps it; an exchange is no profile line, so a
        # profile kept at the count before is the profile at this one
        self.recall.profile.carry(user_id, admin.note_write(self.redis, self.keys, user_id))
        return result

    @_writes
    def add_message(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        timestamp_ms: int | None = None,
    ) -> ChatMessage:
        msg = ShortTermStore.build(role, content, timestamp_ms=timestamp_ms, pii=self.stores.pii)
        pipe = self.stores.user_pipeline(user_id)
        self.short_term.write(pipe, user_id, session_id, [msg])
        pipe.execute()
        return msg

    def recent_messages(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]:
        return self.short_term.recent(user_id, session_id, n)

    @_writes
    def store_stopped_exchange(
        self,
        user_id: str,
        session_id: str,
        user_message: str,
        partial_answer: str,
        turn_id: str = "",
    ) -> list[str]:
        msgs = self._exchange(user_message, partial_answer, turn_id, stopped=True)
        self.short_term.append(user_id, session_id, msgs)
        return [m.id for m in msgs]

    def _exchange(
        self, message: str, answer: str, turn_id: str | None, **answer_meta: Any
    ) -> list[ChatMessage]:
        """A message and its answer, both carrying the turn id (a re-answer's history and a
        forget find the pair by it)."""
        turn, pii = ({"turn_id": turn_id} if turn_id else {}), self.stores.pii
        return [
            ShortTermStore.build("user", message, turn or None, pii=pii),
            ShortTermStore.build("assistant", answer, {**answer_meta, **turn} or None, pii=pii),
        ]

    @_writes
    def set_session_title(
        self, user_id: str, session_id: str, title: str, *, only_if_missing: bool = False
    ) -> bool:
        return self.short_term.set_title(
            user_id, session_id, title, only_if_missing=only_if_missing
        )

    @_writes
    def save_turn_details(
        self, user_id: str, session_id: str, turn_id: str, details: Details, *, part: str = ""
    ) -> None:
        """An answer's details (opaque JSON), kept and cleared with the session's messages."""
        self.short_term.save_details(user_id, session_id, turn_id, details, part)

    def turn_details(self, user_id: str, session_id: str) -> dict[str, dict[str, Details]]:
        return self.short_term.details(user_id, session_id)

    def gone_memories(self, user_id: str, memory_ids: list[str]) -> set[str]:
        kept = {m.id for m in self.episodic.get_many(check_id(user_id), memory_ids)}
        return set(memory_ids) - kept

    # =====================================================================================
    # Editor
    # =====================================================================================
    def list_memories(
        self, user_id: str, memory_type: MemoryType | str, query: ListQuery | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """(rows, total): one page of `query`. Rows are records as dicts with an `id` and a
        `text` key."""
        return admin.list_memories(
            self.stores, user_id, MemoryType.parse(memory_type), query or ListQuery()
        )

    def get_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str
    ) -> dict[str, Any]:
        return admin.read_memory(self.stores, user_id, MemoryType.parse(memory_type), memory_id)

    @_changes
    def update_memory(
        self,
        user_id: str,
        memory_type: MemoryType | str,
        memory_id: str,
        as_admin: bool = False,
        **changes: Any,
    ) -> dict[str, Any]:
        """Edit a memory; the vector is recomputed when its text changes. Shared facts change
        (and a fact is shared) only `as_admin`: an admin in the app, the operator's CLI."""
        mtype = MemoryType.parse(memory_type)
        return admin.apply_update(
            self.stores, self.embedder, user_id, mtype, memory_id, changes, as_admin
        )

    @_changes
    def delete_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, as_admin: bool = False
    ) -> None:
        mtype = MemoryType.parse(memory_type)
        t = time.perf_counter()
        admin.delete_memory(self.stores, self.embedder, user_id, mtype, memory_id, as_admin)
        if mtype is not MemoryType.SHORT_TERM:
            self.metrics.record(mtype.value, "delete", _ms(t))

    def user_profile(self, user_id: str) -> list[ProfileLine]:
        return read_profile(self.stores.episodic, check_id(user_id))

    def list_users(self) -> list[str]:
        return sorted(as_str(u) for u in self.redis.smembers(self.keys.users))

    # =====================================================================================
    # Housekeeping
    # =====================================================================================
    def get_memory_stats(
        self, user_id: str | None = None, session_id: str | None = None
    ) -> MemoryStats:
        return admin.memory_stats(self.stores, user_id, session_id)

    def stats_version(self, user_id: str) -> str:
        return admin.writes_version(self.redis, self.keys, check_id(user_id))

    @_writes
    def clear_session_memories(self, user_id: str, session_id: str) -> int:
        return admin.clear_session(self.stores, self.embedder, user_id, session_id)

    @_writes
    def clear_user_memories(self, user_id: str) -> dict[str, int]:
        """Remove everything derived from this user: episodic memories, facts they added,
        procedural patterns, every session, and the cached embeddings of their texts."""
        check_id(user_id)
        self.bookkeeping.drain()
        return admin.purge_user(self.stores, self.embedder, user_id)

    @_writes
    def sweep_secrets(self, user_id: str | None = None, apply: bool = True) -> dict[str, int]:
        """Mask secrets an earlier version stored (every user by default); counts per type."""
        from memory.admin.sweep import sweep_secrets

        counts = sweep_secrets(
            self.stores, self.embedder, None if user_id is None else check_id(user_id), apply=apply
        )
        if apply:
            admin.note_write(self.redis, self.keys, user_id)
        return counts

    def export_user(self, user_id: str) -> dict[str, Any]:
        return admin.export_user(self.stores, self.embedder.model_id, user_id)

    @_changes
    def import_user(
        self, data: dict[str, Any] | str | bytes, **options: Unpack[ImportOptions]
    ) -> dict[str, int]:
        self.bookkeeping.drain()
        return admin.import_user(
            self.stores,
            self.embedder,
            data,
            chunk_records=int(self.settings.import_chunk_records),
            **options,
        )

    @_writes
    def load_knowledge(self) -> int:
        """Load facts of the knowledge file not loaded before (idempotent)."""
        loaded = admin.load_knowledge(self.stores, self.embedder, self.settings.knowledge_file)
        if loaded:
            admin.note_write(self.redis, self.keys, None)
        return loaded

    def health(self) -> dict[str, Any]:
        return admin.check_health(self.stores, self.embedder)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
