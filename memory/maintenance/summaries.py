"""Session summaries: turns that leave the prompt become one episodic `summary` memory (when:
docs/maintenance.md). The `Summariser`'s text is checked here: not empty, not too long, no number
the turns never said; `Keys.summary_state` keeps the last summarised message."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Literal, Protocol

import redis

from memory.embeddings import CachedEmbedder
from memory.keys import digest
from memory.maintenance.similarity import fact_signature
from memory.models import MAX_TEXT_CHARS, ChatMessage, EpisodicMemory, EventType
from memory.replies import as_str
from memory.stores import Stores
from memory.stores.episodic import EpisodicStore, embedding_text

log = logging.getLogger(__name__)

MAX_BATCH = 40  # messages per summary: keeps one summarising prompt bounded
MAX_TURN_CHARS = 1500  # of one message, in that prompt
RECENT_WINDOW = 10  # the recall's default k_short_term: a run leaves these to the prompt
LOCK_TTL_S = 600  # longer than one model call may take (OLLAMA_TIMEOUT_S)


class Summariser(Protocol):
    """Writes a summary of chat turns ({"role", "content"}, oldest first); None when it
    cannot now (model offline, invalid reply). Implemented in agent/ on the LLM."""

    def __call__(self, turns: list[dict[str, str]]) -> str | None: ...


@dataclass
class SummaryOutcome:
    status: Literal["done", "pending", "nothing", "busy"]
    memory_ids: list[str] = field(default_factory=list)
    messages: int = 0
    texts: list[str] = field(default_factory=list)


def check_summary(reply: str | None, turns: list[dict[str, str]]) -> str | None:
    """The model's summary if usable: a number the turns never said would be made up."""
    text = (reply or "").strip()
    if not text or len(text) > MAX_TEXT_CHARS:
        return None
    _, said, _ = fact_signature(" ".join(t["content"] for t in turns))
    _, numbers, _ = fact_signature(text)
    return text if numbers <= said else None


# --- state ---------------------------------------------------------------------------------


def _mark(stores: Stores, user_id: str, session_id: str) -> dict[str, object] | None:
    raw = stores.client.hget(stores.keys.summary_state(user_id, session_id), "mark")
    return json.loads(as_str(raw)) if raw else None


def unsummarised(
    stores: Stores, user_id: str, session_id: str, *, before_id: str | None = None
) -> list[ChatMessage]:
    """Messages after the mark and, with `before_id`, older than that message (the oldest one
    still in the prompt). An unknown `before_id` gives nothing: better late than twice."""
    msgs = stores.short_term.all_messages(user_id, session_id)
    mark = _mark(stores, user_id, session_id)
    if mark:
        ids = [m.id for m in msgs]
        if mark.get("id") in ids:
            msgs = msgs[ids.index(str(mark["id"])) + 1 :]
        else:  # the marked message was trimmed off the list since
            msgs = [m for m in msgs if m.timestamp > int(str(mark.get("timestamp", 0)))]
    if before_id is not None:
        ids = [m.id for m in msgs]
        msgs = msgs[: ids.index(before_id)] if before_id in ids else []
    return msgs


def _chat_turns(msgs: list[ChatMessage]) -> list[dict[str, str]]:
    return [
        {"role": m.role, "content": m.content[:MAX_TURN_CHARS]}
        for m in msgs
        if m.role in ("user", "assistant") and m.content.strip()
    ]


def mark_pending(stores: Stores, user_id: str, session_id: str, reason: str, now_ms: int) -> None:
    field_ = digest(user_id, session_id)
    value = {"user_id": user_id, "session_id": session_id, "reason": reason, "since_ms": now_ms}
    # HSETNX: the first reason and time stay (how long it has waited).
    stores.client.hsetnx(stores.keys.summaries_pending, field_, json.dumps(value))


def pending(stores: Stores, user_id: str | None = None) -> list[dict[str, object]]:
    rows = [json.loads(as_str(v)) for v in stores.client.hvals(stores.keys.summaries_pending)]
    return [r for r in rows if user_id is None or r.get("user_id") == user_id]


# --- writing -------------------------------------------------------------------------------


def _write(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    session_id: str,
    batch: list[ChatMessage],
    text: str | None,
    reason: str,
) -> EpisodicMemory | None:
    """The summary memory (if any) and the mark after `batch`, in one transaction."""
    mem = None
    pipe = stores.client.pipeline(transaction=True)
    state = stores.keys.summary_state(user_id, session_id)
    if text is not None:
        chat = [m for m in batch if m.role in ("user", "assistant")]
        mem = EpisodicStore.build(
            user_id,
            text,
            event_type=EventType.SUMMARY,
            context=f"Summary of {len(chat)} messages of an earlier conversation",
            metadata={
                "session_id": session_id,
                "message_ids": [m.id for m in chat],
                "from_ms": batch[0].timestamp,
                "to_ms": batch[-1].timestamp,
                "reason": reason,
            },
            session_id=session_id,
            timestamp_ms=batch[-1].timestamp,
            tags=["summary"],
            pii=stores.pii,
        )
        vec = embedder.embed(embedding_text(mem.description, mem.context))
        stores.episodic.write(pipe, mem, vec)
        pipe.hset(state, "latest", mem.id)
    last = batch[-1]
    pipe.hset(state, "mark", json.dumps({"id": last.id, "timestamp": last.timestamp}))
    pipe.expire(state, stores.short_term.ttl_s)  # lives as long as the session's messages
    pipe.execute()
    return mem


def summarise_session(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    session_id: str,
    summariser: Summariser | None,
    *,
    reason: str,
    now_ms: int,
    before_id: str | None = None,
    min_messages: int = 2,
) -> SummaryOutcome:
    """Summarise the session's not-yet-summarised messages (older than `before_id`). Due
    with at least `min_messages` of them, or any two when it was already waiting. Without a
    summariser, or when it fails, the session is marked pending instead."""
    lock = stores.client.lock(
        stores.keys.summary_lock(user_id, session_id), timeout=LOCK_TTL_S, blocking=False
    )
    if not lock.acquire():
        return SummaryOutcome("busy")  # another thread or process is summarising it now
    try:
        waiting = stores.client.hexists(stores.keys.summaries_pending, digest(user_id, session_id))
        msgs = unsummarised(stores, user_id, session_id, before_id=before_id)
        chat = _chat_turns(msgs)
        if len(chat) < (2 if waiting else min_messages):
            return SummaryOutcome("nothing")
        if summariser is None:
            mark_pending(stores, user_id, session_id, reason, now_ms)
            return SummaryOutcome("pending", messages=len(chat))
        out = SummaryOutcome("done")
        for start in range(0, len(msgs), MAX_BATCH):
            batch = msgs[start : start + MAX_BATCH]
            turns = _chat_turns(batch)
            text = None
            if turns:
                try:
                    text = check_summary(summariser(turns), turns)
                except Exception as e:  # the model is optional: the summary waits instead
                    log.warning("summariser failed: %s", e)
                if text is None:
                    mark_pending(stores, user_id, session_id, reason, now_ms)
                    out.status = "pending"
                    return out
            mem = _write(stores, embedder, user_id, session_id, batch, text, reason)
            if mem is not None:
                out.memory_ids.append(mem.id)
                out.texts.append(mem.description)
                out.messages += len(turns)
        stores.client.hdel(stores.keys.summaries_pending, digest(user_id, session_id))
        return out
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:
            log.warning("summary lock of a session expired before its run ended")


# --- the maintenance run -------------------------------------------------------------------


@dataclass
class DueSession:
    session_id: str
    reason: str
    idle: bool
    messages: int


def due_sessions(stores: Stores, user_id: str, now_ms: int, idle_s: int) -> list[DueSession]:
    """Sessions of the user with a summary waiting, or idle with turns not summarised.
    Markers of sessions that no longer have messages are dropped (no write in a dry run:
    the caller decides; here they are only left out)."""
    sessions = sorted(as_str(s) for s in stores.client.smembers(stores.keys.user_sessions(user_id)))
    waiting = {str(p["session_id"]): str(p.get("reason", "")) for p in pending(stores, user_id)}
    pipe = stores.client.pipeline(transaction=False)
    for s in sessions:
        pipe.lindex(stores.keys.session(user_id, s), -1)
        pipe.hget(stores.keys.summary_state(user_id, s), "mark")
    replies = pipe.execute()
    out: list[DueSession] = []
    for i, s in enumerate(sessions):
        last_raw, mark_raw = replies[2 * i], replies[2 * i + 1]
        if not last_raw:
            continue
        last = json.loads(as_str(last_raw))
        mark = json.loads(as_str(mark_raw)) if mark_raw else {}
        if mark.get("id") == last.get("id"):
            continue  # everything is summarised
        idle = idle_s > 0 and int(last.get("timestamp") or 0) <= now_ms - idle_s * 1000
        if s in waiting or idle:
            n = len(_chat_turns(unsummarised(stores, user_id, s)))
            if n >= 2 or s in waiting:
                out.append(DueSession(s, waiting.get(s) or "idle", idle, n))
    return out


def drop_stale_markers(stores: Stores, users: set[str]) -> None:
    """Markers of users or sessions that are gone (purged, cleared)."""
    for p in pending(stores):
        user, session = str(p["user_id"]), str(p["session_id"])
        if user not in users or not stores.client.exists(stores.keys.session(user, session)):
            stores.client.hdel(stores.keys.summaries_pending, digest(user, session))


def run_due(
    stores: Stores,
    embedder: CachedEmbedder,
    user_id: str,
    due: DueSession,
    summariser: Summariser | None,
    now_ms: int,
) -> SummaryOutcome:
    """One due session in a maintenance run: an idle one whole, an active one (waiting since
    a trimmed turn) except the messages the prompt still shows."""
    before_id = None
    if not due.idle:
        msgs = stores.short_term.all_messages(user_id, due.session_id)
        if len(msgs) <= RECENT_WINDOW:
            return SummaryOutcome("nothing")  # still all in the prompt: waits for idleness
        before_id = msgs[-RECENT_WINDOW].id
    return summarise_session(
        stores,
        embedder,
        user_id,
        due.session_id,
        summariser,
        reason=due.reason,
        now_ms=now_ms,
        before_id=before_id,
    )
