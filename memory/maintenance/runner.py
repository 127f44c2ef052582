"""`maintain`: consolidation, session summaries, retention and decay for one user or all,
under a Redis lock (redis-py's `Lock`, short TTL, a heartbeat; a dead holder on this host is
taken over: docs/maintenance.md). Merges, undo, accept and reject take it too; a dry run does
not. The last real report per user and each run's totals (the Stats chart) are kept."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

import redis
from pydantic import BaseModel, Field
from redisvl.query import CountQuery

from memory import activity, admin
from memory.config import Settings
from memory.embeddings import CachedEmbedder
from memory.errors import MemorySystemError
from memory.maintenance import summaries
from memory.maintenance.consolidate import (
    MergeProposal,
    SameFactJudge,
    StaleMergeError,
    TextMerger,
    apply_merge,
    propose_merges,
)
from memory.maintenance.records import load_memos
from memory.maintenance.retention import (
    RetentionPolicy,
    decay_changes,
    delete_expired,
    expired,
    write_decay,
)
from memory.maintenance.summaries import Summariser
from memory.models import check_id
from memory.replies import as_str
from memory.stores import Stores

log = logging.getLogger(__name__)

HISTORY_MAX = 500
#: Short, because a heartbeat keeps a live run's lock: a crashed run blocks others this long.
LOCK_TTL_S = 60
HEARTBEAT_S = LOCK_TTL_S / 4
BUSY = "Maintenance is already running elsewhere; try again later."


class MaintenanceBusyError(MemorySystemError):
    """Another maintenance run holds the lock."""


class UserReport(BaseModel):
    user_id: str
    consolidated: list[MergeProposal] = Field(default_factory=list)
    merge_ids: list[str] = Field(default_factory=list, description="Undo handles (real runs)")
    expired: list[dict[str, str]] = Field(default_factory=list, description="id, text, kind")
    decayed: list[dict[str, object]] = Field(default_factory=list)
    summarised: list[dict[str, object]] = Field(
        default_factory=list,
        description="id (summary memory; '' in a dry run), session_id, messages, text, reason",
    )
    summaries_waiting: int = Field(default=0, description="Sessions whose summary waits")


class MaintenanceReport(BaseModel):
    at_ms: int
    dry_run: bool
    users: list[UserReport] = Field(default_factory=list)
    summaries_waiting: int = Field(default=0, description="All users, after the run")
    active_before: int = Field(default=0, description="Active memories before (storage chart)")
    active_after: int = Field(default=0)

    def totals(self) -> dict[str, int]:
        return {
            "consolidated": sum(len(p.member_ids) for u in self.users for p in u.consolidated),
            "expired": sum(len(u.expired) for u in self.users),
            "decayed": sum(len(u.decayed) for u in self.users),
            "summarised": sum(len(u.summarised) for u in self.users),
        }

    def as_json(self) -> dict[str, object]:
        return {**self.model_dump(mode="json"), "totals": self.totals()}

    def as_text(self) -> str:
        """The report for a terminal (`python -m memory maintain`, `python -m agent maintain`);
        texts are quoted with repr, the caller escapes the rest (`for_terminal`)."""
        lines = ["dry run: nothing changed" if self.dry_run else "maintenance done"]
        for u in self.users:
            lines.append(f"{u.user_id}:")
            for p in u.consolidated:
                how = " (judged one fact by the model)" if p.judged else ""
                lines.append(
                    f"  merge {p.member_ids} into {p.canonical_id}: {p.canonical_text!r}{how}"
                )
            for e in u.expired:
                lines.append(f"  expire {e['id']} ({e['kind']}): {e['text']!r}")
            for d in u.decayed:
                lines.append(f"  importance {d['id']}: {d['before']} -> {d['after']}")
            for sm in u.summarised:
                what = f"{sm['id']}: {sm['text']!r}" if sm["id"] else "(due)"
                lines.append(f"  summary of session {sm['session_id']!r} ({sm['messages']}) {what}")
        lines.append(" ".join(f"{k}={v}" for k, v in self.totals().items()))
        lines.append(f"summaries waiting: {self.summaries_waiting}")
        return "\n".join(lines)

    def history_entry(self) -> dict[str, int]:
        """What the Stats page charts: the totals and the active memories around the run."""
        return {
            "at_ms": self.at_ms,
            **self.totals(),
            "active_before": self.active_before,
            "active_after": self.active_after,
        }


def policy_of(settings: Settings) -> RetentionPolicy:
    return RetentionPolicy(
        days=dict(settings.retention_days),
        keep_importance=settings.retention_keep_importance,
        half_life_days=settings.decay_half_life_days,
        floor=settings.decay_floor,
        boost=settings.recall_boost,
    )


def _no_lock() -> None:
    """`keep` of a dry run, which holds no lock."""


def _holder() -> dict[str, object]:
    return {"host": socket.gethostname(), "pid": os.getpid(), "since": int(time.time())}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: does the process exist (and may we see it)?
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dead_here(holder: dict[str, object]) -> bool:
    """A holder on this host whose process is gone (one elsewhere is never judged dead)."""
    pid = holder.get("pid")
    return holder.get("host") == socket.gethostname() and isinstance(pid, int) and not _alive(pid)


#: Delete the lock (and its holder note) only if it still holds the token seen as stale.
_FREE_IF_SAME = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1], KEYS[2]) end
return 0
"""


def lock_holder(client: redis.Redis, holder_key: str) -> dict[str, object] | None:
    """Who holds the maintenance lock (host, pid, since), if anyone said so."""
    raw = client.get(holder_key)
    try:
        data = json.loads(raw) if raw else None
    except (TypeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _busy(holder: dict[str, object] | None) -> MaintenanceBusyError:
    if not holder:
        return MaintenanceBusyError(BUSY)
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(str(holder.get("since", 0)))))
    return MaintenanceBusyError(
        f"Maintenance is already running elsewhere (process {holder.get('pid')} on "
        f"{holder.get('host')}, since {since}); try again later. A run that crashed frees it "
        f"within {LOCK_TTL_S} s."
    )


@contextmanager
def maintenance_lock(
    client: redis.Redis,
    key: str,
    timeout_s: float = LOCK_TTL_S,
    *,
    holder_key: str | None = None,
) -> Iterator[Callable[[], None]]:
    """Hold the maintenance lock (never wait for it: busy -> MaintenanceBusyError naming the
    holder). A heartbeat thread keeps it while the body runs; `keep` (call it before each long
    step) raises MaintenanceBusyError if the lock was lost to another runner."""
    holder_key = holder_key or f"{key}:holder"
    lock = client.lock(key, timeout=timeout_s, blocking=False)
    if not lock.acquire():
        stale = client.get(key)
        holder = lock_holder(client, holder_key)
        if holder is None or not _dead_here(holder):
            raise _busy(holder)
        # Its holder died on this host: the lock is stale. Free it only if it is still that
        # lock (a second process that saw the same dead holder may have taken it meanwhile).
        log.warning("maintenance lock of a dead process %s taken over", holder.get("pid"))
        client.eval(_FREE_IF_SAME, 2, key, holder_key, stale or b"")
        if not lock.acquire():
            raise _busy(lock_holder(client, holder_key))
    client.set(holder_key, json.dumps(_holder()), px=int(timeout_s * 1000))
    lost = threading.Event()
    stop = threading.Event()

    def extend() -> None:
        try:
            lock.extend(timeout_s, replace_ttl=True)
            client.pexpire(holder_key, int(timeout_s * 1000))
        except redis.exceptions.LockError:
            lost.set()

    def beat() -> None:
        while not stop.wait(min(HEARTBEAT_S, timeout_s / 4)):
            try:
                extend()
            except redis.exceptions.RedisError:  # Redis away for a moment: try on the next beat
                log.warning("maintenance lock heartbeat failed", exc_info=True)

    def keep() -> None:
        extend()
        if lost.is_set():
            raise MaintenanceBusyError(
                "Maintenance stopped: its lock expired and another run took over."
            )

    heart = threading.Thread(target=beat, name="maintenance-lock", daemon=True)
    heart.start()
    try:
        yield keep
    finally:
        stop.set()
        heart.join()
        try:
            lock.release()
            client.delete(holder_key)
        except redis.exceptions.LockError:  # expired: the key is someone else's now, or gone
            log.warning("maintenance lock had expired before it was released")


def maintain_user(
    stores: Stores,
    embedder: CachedEmbedder,
    settings: Settings,
    user_id: str,
    *,
    now_ms: int,
    dry_run: bool,
    merger: TextMerger | None = None,
    summariser: Summariser | None = None,
    judge: SameFactJudge | None = None,
    keep_lock: Callable[[], None] = _no_lock,
) -> UserReport:
    policy = policy_of(settings)
    report = UserReport(user_id=user_id)
    # Summaries first: they are new memories, so the rest of the run sees them.
    for due in summaries.due_sessions(stores, user_id, now_ms, settings.summary_idle_s):
        if dry_run:
            report.summarised.append(
                {
                    "id": "",
                    "session_id": due.session_id,
                    "messages": due.messages,
                    "text": "",
                    "reason": due.reason,
                }
            )
            continue
        done = summaries.run_due(stores, embedder, user_id, due, summariser, now_ms)
        report.summarised += [
            {
                "id": mid,
                "session_id": due.session_id,
                "messages": done.messages,
                "text": text,
                "reason": due.reason,
            }
            for mid, text in zip(done.memory_ids, done.texts, strict=True)
        ]
    report.summaries_waiting = len(summaries.pending(stores, user_id))
    memos = load_memos(stores, user_id)
    thresholds = {
        "min_similarity": settings.consolidation_min_similarity,
        "proposal_similarity": settings.consolidation_proposal_similarity,
    }
    proposals = propose_merges(
        stores,
        user_id,
        settings.consolidation_min_similarity,
        memos,
        judge=judge,
        proposal_similarity=settings.consolidation_proposal_similarity,
        remember_apart=not dry_run,
        keep_lock=keep_lock,
    )
    for p in proposals:
        if dry_run:
            report.consolidated.append(p)
            continue
        keep_lock()  # each merge may wait on the model
        try:
            record = apply_merge(stores, embedder, p, now_ms, merger, **thresholds)
        except StaleMergeError as e:  # edited while the run went on: next run sees the edit
            log.info("merge skipped: %s", e)
            continue
        report.consolidated.append(p.model_copy(update={"canonical_text": record.text_after}))
        report.merge_ids.append(record.id)
    gone = expired(memos, policy, now_ms)
    report.expired = [{"id": m.id, "text": m.text, "kind": m.event_type} for m in gone]
    if not dry_run:
        delete_expired(stores, embedder, user_id, gone)
        activity.record(stores.client, stores.keys, user_id, "expired", len(gone), now_ms)
    # Merged members left recall; canonicals just got a new importance: neither decays now.
    merged = {mid for p in report.consolidated for mid in [p.canonical_id, *p.member_ids]}
    gone_ids = {m.id for m in gone} | merged
    live = [m for m in memos if m.id not in gone_ids]
    changes, state = decay_changes(stores, user_id, live, policy, now_ms)
    report.decayed = [
        {"id": c.id, "text": c.text, "before": c.before, "after": c.after, "recalled": c.recalled}
        for c in changes
    ]
    if not dry_run:
        write_decay(stores, user_id, changes, state)
        if report.summarised or report.merge_ids or gone or changes:
            admin.note_write(stores.client, stores.keys, user_id)  # the Stats version
    return report


def run_maintenance(
    stores: Stores,
    embedder: CachedEmbedder,
    settings: Settings,
    *,
    now_ms: int,
    user_id: str | None = None,
    dry_run: bool = False,
    merger: TextMerger | None = None,
    summariser: Summariser | None = None,
    judge: SameFactJudge | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> MaintenanceReport:
    """One run; raises MaintenanceBusyError when another holds the lock (a dry run, which
    writes nothing, runs without it). `progress` hears ("users", done, total) per user."""
    users = (
        [check_id(user_id)]
        if user_id
        else sorted(as_str(u) for u in stores.client.smembers(stores.keys.users))
    )
    report = MaintenanceReport(at_ms=now_ms, dry_run=dry_run)
    lock = (
        nullcontext(_no_lock)
        if dry_run
        else maintenance_lock(
            stores.client,
            stores.keys.maintenance_lock,
            holder_key=stores.keys.maintenance_lock_holder,
        )
    )
    with lock as keep:
        report.active_before = count_active(stores, users)
        for u in users:
            keep()
            report.users.append(
                maintain_user(
                    stores,
                    embedder,
                    settings,
                    u,
                    now_ms=now_ms,
                    dry_run=dry_run,
                    merger=merger,
                    summariser=summariser,
                    judge=judge,
                    keep_lock=keep,
                )
            )
            if progress is not None:
                progress("users", len(report.users), len(users))
        if not dry_run and not user_id:
            summaries.drop_stale_markers(stores, set(users))
        report.active_after = count_active(stores, users)
        report.summaries_waiting = len(summaries.pending(stores))
        if not dry_run:
            save_report(stores, report)
    log.info("maintenance%s: %s", " (dry run)" if dry_run else "", report.totals())
    return report


def save_report(stores: Stores, report: MaintenanceReport) -> None:
    """Each user's part under their own key (a run for one user must not hide another user's
    last report), the run's totals on the shared history. No transaction: each user's key is
    in their own hash slot, the history in another (a sharded Redis refuses a MULTI over
    them); every command touches one key."""
    keys = stores.keys
    pipe = stores.client.pipeline(transaction=False)
    for u in report.users:
        mine = report.model_copy(update={"users": [u]})
        pipe.set(keys.maintenance_last(u.user_id), json.dumps(mine.as_json()))
    pipe.lpush(keys.maintenance_history, json.dumps(report.history_entry()))
    pipe.ltrim(keys.maintenance_history, 0, HISTORY_MAX - 1)
    pipe.execute()


def count_active(stores: Stores, users: list[str]) -> int:
    """Active episodic memories of these users: what recall searches (the storage chart)."""
    ep = stores.episodic
    return sum(
        int(ep.index.query(CountQuery(filter_expression=ep.filter_for(u, active_only=True))))
        for u in users
    )


def last_report(stores: Stores, user_id: str) -> dict[str, object] | None:
    """The last real run that covered this user (the report's `users` holds only them)."""
    raw = stores.client.get(stores.keys.maintenance_last(check_id(user_id)))
    return json.loads(as_str(raw)) if raw else None


def report_history(stores: Stores) -> list[dict[str, int]]:
    """Totals of past runs, oldest first."""
    rows = stores.client.lrange(stores.keys.maintenance_history, 0, -1)
    return [json.loads(as_str(r)) for r in reversed(rows)]
