"""The maintenance lock (redis-py's `Lock`, short TTL, a heartbeat; a dead holder on this host is
taken over: docs/maintenance.md) that runs, merges, undo, accept and reject take (a dry run does
not), and the reports: the last real one per user and each run's totals (the Stats chart)."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from pydantic import BaseModel, Field
from redisvl.query import CountQuery

from memory.errors import MemorySystemError
from memory.keys import Keys
from memory.maintenance.consolidate import MergeProposal
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
def maintenance_lock(client: redis.Redis, keys: Keys) -> Iterator[Callable[[], None]]:
    """Hold the maintenance lock (never wait for it: busy -> MaintenanceBusyError naming the
    holder). A heartbeat thread keeps it while the body runs; `keep` (call it before each long
    step) raises MaintenanceBusyError if the lock was lost to another runner."""
    key, holder_key, timeout_s = keys.maintenance_lock, keys.maintenance_lock_holder, LOCK_TTL_S
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
        while not stop.wait(HEARTBEAT_S):
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
