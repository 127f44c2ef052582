"""Retention (expiry by kind) and importance decay, multiplicative so that how often it runs does
not change the result (docs/maintenance.md, "Consolidation, retention and decay"); the last run
and the access count seen are kept per user in `Keys.decay_state`."""

from __future__ import annotations

from dataclasses import dataclass

from memory.config import Settings
from memory.embeddings import CachedEmbedder
from memory.maintenance.records import Memo
from memory.replies import as_str
from memory.stores import Stores

DAY_MS = 24 * 3600 * 1000
#: Changes smaller than this are not written (nor reported): a run every few hours would
#: otherwise "decay" every memory by 0.001.
MIN_CHANGE = 0.01


@dataclass
class ImportanceChange:
    id: str
    text: str
    before: float
    after: float
    recalled: int


def expired(memos: list[Memo], settings: Settings, now_ms: int) -> list[Memo]:
    out = []
    for m in memos:
        days = settings.retention_days.get(m.event_type)
        if days is None or m.pinned or m.access_count > 0:
            continue
        if m.importance >= settings.retention_keep_importance:
            continue
        if now_ms - m.timestamp > days * DAY_MS:
            out.append(m)
    return out


def delete_expired(
    stores: Stores, embedder: CachedEmbedder, user_id: str, memos: list[Memo]
) -> None:
    if not memos:
        return
    ids = [m.id for m in memos]
    _, timelines = stores.episodic.purge_reads(user_id, ids)
    pipe = stores.client.pipeline(transaction=True)
    stores.episodic.delete_many(pipe, user_id, ids)
    for key in timelines:
        pipe.zrem(key, *ids)
    pipe.execute()
    embedder.forget([m.text for m in memos])


def _state(stores: Stores, user_id: str) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for k, v in stores.client.hgetall(stores.keys.decay_state(user_id)).items():
        at, seen = as_str(v).split(",")
        out[as_str(k)] = (int(at), int(seen))
    return out


def decay_changes(
    stores: Stores, user_id: str, memos: list[Memo], settings: Settings, now_ms: int
) -> tuple[list[ImportanceChange], dict[str, str]]:
    """(changes worth writing, the new decay state of every active memory)."""
    state = _state(stores, user_id)
    changes: list[ImportanceChange] = []
    new_state: dict[str, str] = {}
    for m in memos:
        if not m.active:
            continue
        at, seen = state.get(m.id, (m.created_at or m.timestamp, 0))
        recalled = max(0, m.access_count - seen)
        after = m.importance
        if recalled:
            after = 1 - (1 - after) * (1 - settings.recall_boost) ** recalled
        elif m.access_count == 0 and not m.pinned and after > settings.decay_floor:
            dt_days = max(0, now_ms - at) / DAY_MS
            after = max(
                settings.decay_floor, after * 0.5 ** (dt_days / settings.decay_half_life_days)
            )
            if m.importance >= settings.retention_keep_importance:
                # Decay must not turn "important" (kept forever) into "expires" behind the
                # user's back: it stops at the retention threshold.
                after = max(after, settings.retention_keep_importance)
        after = round(min(1.0, after), 4)
        if abs(after - m.importance) >= MIN_CHANGE:
            changes.append(ImportanceChange(m.id, m.text, m.importance, after, recalled))
            new_state[m.id] = f"{now_ms},{m.access_count}"
        elif recalled or m.id not in state:
            # Small drift is not written, but the clock keeps running from where it was.
            new_state[m.id] = f"{at},{m.access_count}"
    return changes, new_state


# HSET on a deleted memory would create a stub hash (no owner, no vector): the existence
# check and the write must be one atomic step, so they run in one script.
_SET_IMPORTANCE = """
local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('exists', key) == 1 then
    redis.call('hset', key, 'importance', ARGV[i])
    n = n + 1
  end
end
return n
"""


def write_decay(
    stores: Stores,
    user_id: str,
    changes: list[ImportanceChange],
    new_state: dict[str, str],
) -> None:
    pipe = stores.client.pipeline(transaction=True)
    if changes:
        pipe.eval(
            _SET_IMPORTANCE,
            len(changes),
            *(stores.keys.episodic(user_id, c.id) for c in changes),
            *(c.after for c in changes),
        )
    if new_state:
        pipe.hset(stores.keys.decay_state(user_id), mapping=new_state)  # type: ignore[arg-type]
    pipe.execute()
