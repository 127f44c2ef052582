"""An in-memory stand-in for `memory.coordinator.MemoryCoordinator`, for the agent's unit tests.

Implements only what the agent calls, with the same signatures and return types, scoped per
user like the real one. Similarity uses the fake Ollama's hashed bag-of-words vectors, so
"the same words" means "similar". Procedural confidence: mean score shrunk towards 0 for few
runs (`avg * n / (n + 2)`), recommended at >= 0.5; enough to see it move both ways.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from ulid import ULID

from memory.config import Settings
from memory.errors import InvalidInputError, NotFoundError
from memory.health import about_health
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    EventType,
    MemoryContext,
    MemoryType,
    ProceduralSuggestion,
    ProfileLine,
    RecallHit,
    ScoreParts,
    SemanticFact,
    check_text,
    relevance_band,
)
from memory.queries import ListQuery, RecallOptions, SearchFilter
from memory.service import AgentMemory, MemoryStats, StoredInteraction
from memory.user_profile import HEALTH_KINDS, PROFILE_READ, STANDING_KINDS
from tests.fakes.fake_ollama import embed_text

#: Episodic memories a prompt's recall offers when the caller names no number (the real
#: coordinator's RECALL_PROMPT_K, at its default).
RECALL_PROMPT_K: int = Settings.model_fields["recall_prompt_k"].default


def _vec(text: str) -> np.ndarray:
    return np.asarray(embed_text(text))


def _norm_query(q: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", q.lower()))


class FakeCoordinator:
    def __init__(self, *, min_score: float = 0.15) -> None:
        self.episodic: dict[str, EpisodicMemory] = {}
        self.semantic: dict[str, SemanticFact] = {}
        self.messages: dict[tuple[str, str], list[ChatMessage]] = {}
        self.details: dict[tuple[str, str], dict[str, dict[str, dict[str, Any]]]] = {}
        self.procedures: dict[tuple[str, str], dict[str, Any]] = {}
        self.interactions: list[dict[str, Any]] = []
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.events: dict[str, int] = {}
        self.min_score = min_score
        self.fail_recall: Exception | None = None
        #: (user, session) -> the session's summary, which recall shows as the real one does
        #: once older messages left its window
        self.summaries: dict[tuple[str, str], str] = {}
        self._lock = threading.RLock()

    def _log(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.calls.append((name, args, kwargs))

    # ---- recall ------------------------------------------------------------------------
    def _hits(self, user_id: str, query: str, k: int, active_only: bool = True) -> list[RecallHit]:
        q = _vec(query)
        hits = []
        for m in self.episodic.values():
            if m.user_id != user_id or (active_only and (m.superseded_by or m.paused)):
                continue
            sim = float(max(0.0, np.dot(q, _vec(m.description))))
            hits.append(
                RecallHit(
                    id=m.id,
                    memory_type=MemoryType.EPISODIC,
                    text=m.description,
                    score=sim,
                    band=relevance_band(sim),
                    parts=ScoreParts(vector=sim, final=sim),
                    record={**m.model_dump(mode="json"), "id": m.id},
                )
            )
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:k]

    def _semantic_hits(self, query: str, k: int) -> list[RecallHit]:
        q = _vec(query)
        hits = []
        for f in self.semantic.values():
            sim = float(max(0.0, np.dot(q, _vec(f.fact))))
            if sim >= self.min_score:
                hits.append(
                    RecallHit(
                        id=f.id,
                        memory_type=MemoryType.SEMANTIC,
                        text=f.fact,
                        score=sim,
                        band=relevance_band(sim),
                        parts=ScoreParts(vector=sim, final=sim),
                        record=f.model_dump(mode="json"),
                    )
                )
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:k]

    def retrieve_all_context(
        self, user_id: str, session_id: str, query: str, options: RecallOptions = RecallOptions()
    ) -> MemoryContext:
        self._log("retrieve_all_context", user_id, session_id, query)
        if self.fail_recall is not None:
            raise self.fail_recall
        with self._lock:
            ctx = MemoryContext(user_id=user_id, session_id=session_id, query=query)
            if options.include_episodic:
                hits = self._hits(user_id, query, options.k_episodic or RECALL_PROMPT_K)
                ctx.episodic = [h for h in hits if h.score >= self.min_score]
            if options.include_semantic:
                ctx.semantic = self._semantic_hits(query, options.k_semantic)
            if options.include_procedural:
                ctx.procedural = self._suggest(user_id, query)
            if options.include_short_term:
                ctx.short_term = list(self.messages.get((user_id, session_id), []))[
                    -options.k_short_term :
                ]
                summary = self.summaries.get((user_id, session_id))
                if summary is not None:
                    ctx.session_summary = RecallHit(
                        id=f"summary-{session_id}",
                        memory_type=MemoryType.EPISODIC,
                        text=summary,
                        score=1.0,  # not a search result, as in the real pipeline
                        band="high",
                        parts=ScoreParts(final=1.0),
                        record={"event_type": "summary"},
                    )
            ctx.hits = {"episodic": len(ctx.episodic), "semantic": len(ctx.semantic)}
        ctx.profile = self.user_profile(user_id) if options.include_profile else []
        return ctx

    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        where: SearchFilter | None = None,  # the fake searches everything
    ) -> list[RecallHit]:
        mt = MemoryType.parse(memory_type)
        if mt is MemoryType.SEMANTIC:
            return self._semantic_hits(query, k)
        return [h for h in self._hits(user_id, query, k) if h.score >= self.min_score]

    def find_similar_episodic(self, user_id: str, text: str, *, k: int = 5) -> list[RecallHit]:
        with self._lock:
            return self._hits(user_id, text, k)

    # ---- writing -----------------------------------------------------------------------
    def add_episodic(
        self,
        user_id: str,
        text: str,
        *,
        supersedes: str | None = None,
        **fields: Any,
    ) -> EpisodicMemory:
        self._log("add_episodic", user_id, text, supersedes=supersedes)
        text = check_text(text)
        with self._lock:
            if supersedes:
                old = self.episodic.get(supersedes)
                if old is None or old.user_id != user_id:
                    raise NotFoundError(f"No memory {supersedes}")
            now = int(time.time() * 1000)
            mem = EpisodicMemory(
                id=str(ULID()),
                user_id=user_id,
                event_type=EventType.parse(fields.get("event_type", EventType.PREFERENCE)),
                description=text,
                context=fields.get("context", ""),
                metadata=dict(fields.get("metadata") or {}),
                tags=list(fields.get("tags") or []),
                session_id=fields.get("session_id", ""),
                timestamp=now,
                created_at=now,
                importance=fields.get("importance", 0.5),
            )
            self.episodic[mem.id] = mem
            if supersedes:
                self.episodic[supersedes].superseded_by = mem.id
            return mem

    def add_semantic(self, text: str, **fields: Any) -> SemanticFact:
        fact = SemanticFact(
            id=str(ULID()), fact=check_text(text), timestamp=int(time.time() * 1000), **fields
        )
        self.semantic[fact.id] = fact
        return fact

    def _pattern(self, user_id: str, query: str) -> dict[str, Any]:
        key = (user_id, _norm_query(query))
        return self.procedures.setdefault(key, {"query": query, "runs": []})

    def record_procedure(
        self,
        user_id: str,
        query: str,
        tools: list[str],
        *,
        success_score: float,
        execution_time_ms: float,
    ) -> Any:
        self._log("record_procedure", user_id, query, tools, success_score=success_score)
        with self._lock:
            p = self._pattern(user_id, query)
            p["runs"].append((list(tools), float(success_score)))
            return p

    def rescore_last_procedure(
        self, user_id: str, query: str, tools: list[str], success_score: float
    ) -> None:
        self._log("rescore_last_procedure", user_id, query, tools, success_score=success_score)
        with self._lock:
            p = self._pattern(user_id, query)
            for i in range(len(p["runs"]) - 1, -1, -1):
                if p["runs"][i][0] == list(tools):
                    p["runs"][i] = (list(tools), float(success_score))
                    return

    @staticmethod
    def confidence(p: dict[str, Any]) -> tuple[list[str], float, int, float]:
        runs = p["runs"]
        best = max(
            {tuple(t) for t, _ in runs}, key=lambda s: sum(1 for t, _ in runs if tuple(t) == s)
        )
        scores = [sc for t, sc in runs if tuple(t) == best]
        avg = sum(scores) / len(scores)
        n = len(scores)
        return list(best), avg * n / (n + 2), n, avg

    def _suggest(self, user_id: str, query: str) -> ProceduralSuggestion | None:
        qv = _vec(query)
        best: tuple[float, dict[str, Any]] | None = None
        for (uid, _), p in self.procedures.items():
            if uid != user_id or not p["runs"]:
                continue
            sim = float(np.dot(qv, _vec(p["query"])))
            if sim >= 0.6 and (best is None or sim > best[0]):
                best = (sim, p)
        if best is None:
            return None
        sim, p = best
        tools, conf, n, avg = self.confidence(p)
        return ProceduralSuggestion(
            pattern_id=_norm_query(p["query"]),
            query_pattern=p["query"],
            tool_sequence=tools,
            confidence=round(conf, 4),
            recommended=conf >= 0.5,
            executions=n,
            avg_score=avg,
            similarity=sim,
            match="exact" if sim > 0.999 else "similar",
        )

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
        self._log(
            "store_interaction",
            user_id,
            session_id,
            user_message,
            tools_used=tools_used,
            success_score=success_score,
            store_episode=store_episode,
            used=list(used),
        )
        with self._lock:
            now = int(time.time() * 1000)
            msgs = self.messages.setdefault((user_id, session_id), [])
            ids = []
            for role, content in (("user", user_message), ("assistant", assistant_response)):
                marks = {"memory_only": True} if memory_only and role == "assistant" else {}
                m = ChatMessage(
                    id=str(ULID()),
                    role=role,
                    content=content,
                    timestamp=now,
                    metadata={**marks, **({"turn_id": turn_id} if turn_id else {})},
                )
                msgs.append(m)
                ids.append(m.id)
            self.interactions.append(
                {
                    "user_id": user_id,
                    "session_id": session_id,
                    "user_message": user_message,
                    "assistant_response": assistant_response,
                    "episode_answer": episode_answer,
                    "tools_used": tools_used,
                    "success_score": success_score,
                }
            )
            out: StoredInteraction = {"short_term": ids, "episodic": None, "procedural": None}
            if tools_used:
                score = 1.0 if success_score is None else success_score
                self.record_procedure(
                    user_id,
                    user_message,
                    tools_used,
                    success_score=score,
                    execution_time_ms=execution_time_ms,
                )
                out["procedural"] = _norm_query(user_message)
            return out

    # ---- editor ------------------------------------------------------------------------
    def list_memories(
        self, user_id: str, memory_type: Any, query: ListQuery | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Episodic only, newest first; of the filters, event types and superseded ones."""
        q = query or ListQuery()
        if MemoryType.parse(memory_type) is not MemoryType.EPISODIC:
            return [], 0
        with self._lock:
            rows = [
                {**m.model_dump(mode="json"), "text": m.description}
                for m in sorted(self.episodic.values(), key=lambda m: m.id, reverse=True)
                if m.user_id == user_id
                and (q.event_types is None or m.event_type.value in q.event_types)
                and (q.include_superseded or not m.superseded_by)
            ]
        return rows[: q.page_size], len(rows)

    def active_texts(self, user_id: str) -> list[str]:
        return [
            m.description
            for m in self.episodic.values()
            if m.user_id == user_id and not m.superseded_by
        ]

    def delete_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, as_admin: bool = False
    ) -> None:
        with self._lock:
            m = self.episodic.get(memory_id)
            if m is None or m.user_id != user_id:
                raise NotFoundError(f"No memory {memory_id!r} for this user.")
            del self.episodic[memory_id]

    def user_profile(self, user_id: str) -> list[ProfileLine]:
        """The real one's rule: live memories, pinned ones first, then those about health,
        then the standing ones, each part most important then newest."""
        with self._lock:
            live = [
                m
                for m in self.episodic.values()
                if m.user_id == user_id and not (m.superseded_by or m.paused)
            ]
        live.sort(key=lambda m: (m.importance, m.timestamp), reverse=True)
        parts = (
            [m for m in live if m.pinned],
            [m for m in live if m.event_type in HEALTH_KINDS and about_health(m.description)],
            [m for m in live if m.event_type in STANDING_KINDS],
        )
        lines: dict[str, ProfileLine] = {}
        for part in parts:
            for m in part[:PROFILE_READ]:
                lines.setdefault(
                    m.id,
                    ProfileLine(
                        id=m.id,
                        kind=m.event_type,
                        text=m.description,
                        importance=m.importance,
                        pinned=m.pinned,
                    ),
                )
        return list(lines.values())

    def update_memory(
        self,
        user_id: str,
        memory_type: MemoryType | str,
        memory_id: str,
        as_admin: bool = False,
        **changes: Any,
    ) -> dict[str, Any]:
        """Episodic memories only, as the agent changes them (`paused=`, `pinned=`)."""
        if MemoryType.parse(memory_type) is not MemoryType.EPISODIC or set(changes) - {
            "paused",
            "pinned",
        }:
            raise NotImplementedError("the fake changes an episodic memory's paused or pinned")
        with self._lock:
            m = self.episodic.get(memory_id)
            if m is None or m.user_id != user_id:
                raise NotFoundError(f"No memory {memory_id!r} for this user.")
            for name, value in changes.items():
                setattr(m, name, value)
            return {**m.model_dump(mode="json"), "text": m.description}

    def count_event(self, name: str) -> None:
        with self._lock:
            self.events[name] = self.events.get(name, 0) + 1

    def text_similarity(self, a: str, b: str) -> float:
        return float(np.dot(embed_text(a), embed_text(b)))

    def get_memory_stats(
        self, user_id: str | None = None, session_id: str | None = None
    ) -> MemoryStats:
        """The real coordinator's shape: counts per type, per user where it says so."""
        with self._lock:
            mine = [m for m in self.episodic.values() if user_id is None or m.user_id == user_id]
            sessions = [s for (u, s) in self.messages if u == user_id]
            stats: MemoryStats = {
                "episodic": {"memory_count": len(mine)},
                "semantic": {"fact_count": len(self.semantic)},
                "procedural": {
                    "total_procedures": sum(
                        1 for (u, _) in self.procedures if user_id is None or u == user_id
                    )
                },
                "short_term": {"sessions": len(sessions)} if user_id else {},
                "user_id": user_id,
                "session_id": session_id,
            }
            if user_id is None:
                stats["users"] = len({m.user_id for m in self.episodic.values()})
            if user_id and session_id:
                stats["short_term"]["message_count"] = len(
                    self.messages.get((user_id, session_id), [])
                )
            return stats

    def recent_messages(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]:
        return list(self.messages.get((user_id, session_id), []))[-n:]

    def save_turn_details(
        self,
        user_id: str,
        session_id: str,
        turn_id: str,
        details: dict[str, Any],
        *,
        part: str = "",
    ) -> None:
        with self._lock:
            saved = self.details.setdefault((user_id, session_id), {}).setdefault(turn_id, {})
            saved[part] = json.loads(json.dumps(details))

    def turn_details(self, user_id: str, session_id: str) -> dict[str, dict[str, dict[str, Any]]]:
        with self._lock:
            return json.loads(json.dumps(self.details.get((user_id, session_id), {})))


__all__ = ["FakeCoordinator", "InvalidInputError"]

if TYPE_CHECKING:
    # mypy checks that the fake still matches what the agent holds (`make lint`).
    _satisfies_the_protocol: AgentMemory = FakeCoordinator()
