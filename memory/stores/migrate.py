"""Moves a store written before the per-user hash tags to the key layout of `memory.keys`.

Before (layout 1) a memory's key was `{ns}:episodic:<ulid>` and a user's other keys held a
digest of the user id but no hash tag, so one user's transaction spanned hash slots, which a
sharded Redis refuses (CROSSSLOT). `migrate_keys` runs when the stores open: unless the store's
`Keys.version` says it is done, it finds every key of the old layout and renames it in place.

- Which keys: the old memory and procedure hashes are found by SCAN (their names have no `{`);
  each holds its user id, which gives the new key. The user's other keys are derived from the
  user ids (the user list, and the owners of those hashes) and their sessions (the user's
  session set, and the sessions of their memories); merge records from the user's merge list.
- How: RENAMENX, pipelined. Values hold ids, never keys (supersession links, timelines, merge
  lists), so nothing inside them changes; a renamed hash keeps its TTL and stays under its
  index prefix, so the indexes keep finding it.
- Concurrent-safe: two processes may migrate at once. A key the other one renamed first is
  gone ("no such key": skipped); RENAMENX never overwrites, so nothing is lost. A key whose new
  name already exists (an older process wrote the old name again meanwhile) is left as it is
  and logged. The marker is set only after a complete pass.
- On a Redis that refuses RENAME across slots (a sharded database), a key is copied instead
  (DUMP, RESTORE without REPLACE, DEL).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

import redis

from memory.keys import Keys, digest, owner_tag
from memory.replies import as_str

log = logging.getLogger(__name__)

BATCH = 500


@dataclass
class Migration:
    """What one pass did (for the log and the tests)."""

    renamed: int = 0
    #: old key -> new key left as they were: both names exist
    conflicts: list[tuple[str, str]] = field(default_factory=list)


class OldKeys:
    """The key names of layout 1 (as `memory.keys` built them before the hash tags)."""

    def __init__(self, ns: str) -> None:
        self.ns = ns

    def user(self, what: str, user_id: str) -> str:
        return f"{self.ns}:{what}:{digest(user_id)}"

    def session(self, what: str, user_id: str, session_id: str) -> str:
        return f"{self.ns}:{what}:{digest(user_id, session_id)}"


def migrate_keys(client: redis.Redis, keys: Keys) -> Migration | None:
    """Bring the store to `Keys.VERSION`; None when it was already there."""
    if as_str(client.get(keys.version) or b"") == str(Keys.VERSION):
        return None
    moves, users, sessions = _old_memory_keys(client, keys)
    old = OldKeys(keys.ns)
    users |= {as_str(u) for u in client.smembers(keys.users)}
    for user_id in sorted(users):
        moves += _user_moves(client, keys, old, user_id, sessions.get(user_id, set()))
    ns = keys.ns
    moves += [
        (f"{ns}:metrics:latency", keys.metrics_latency),
        (f"{ns}:metrics:counters", keys.metrics_counters),
        (f"{ns}:metrics:counts", keys.metrics_counts_history),
    ]
    done = _rename(client, moves)
    client.set(keys.version, str(Keys.VERSION))
    if done.renamed or done.conflicts:
        log.info(
            "Key layout %d: %d keys renamed, %d left (both names exist: %s)",
            Keys.VERSION,
            done.renamed,
            len(done.conflicts),
            done.conflicts[:5],
        )
    return done


def _old_memory_keys(
    client: redis.Redis, keys: Keys
) -> tuple[list[tuple[str, str]], set[str], dict[str, set[str]]]:
    """(old -> new key of every memory and procedure hash, their users, user -> sessions)."""
    episodic, procedures = f"{keys.episodic_prefix}:", f"{keys.procedural_prefix}:"
    found: list[str] = []
    for raw in client.scan_iter(match=f"{keys.ns}:*", count=1000):
        key = as_str(raw)
        if "{" not in key and key.startswith((episodic, procedures)):
            found.append(key)
    moves: list[tuple[str, str]] = []
    users: set[str] = set()
    sessions: dict[str, set[str]] = {}
    for start in range(0, len(found), BATCH):
        chunk = found[start : start + BATCH]
        pipe = client.pipeline(transaction=False)
        for key in chunk:
            pipe.hmget(key, ["user_id", "session_id"])
        for key, (user, session) in zip(chunk, pipe.execute(), strict=True):
            if user is None:  # renamed or deleted meanwhile
                continue
            user_id, mid = as_str(user), Keys.memory_id(key)
            users.add(user_id)
            if key.startswith(episodic):
                moves.append((key, keys.episodic(user_id, mid)))
                if session:
                    sessions.setdefault(user_id, set()).add(as_str(session))
            else:
                moves.append((key, keys.procedure(user_id, mid)))
    return moves, users, sessions


def _user_moves(
    client: redis.Redis, keys: Keys, old: OldKeys, user_id: str, sessions: set[str]
) -> list[tuple[str, str]]:
    """Old -> new name of every other key of one user."""
    pipe = client.pipeline(transaction=False)
    pipe.smembers(old.user("user_sessions", user_id))
    pipe.zrange(old.user("user_merges", user_id), 0, -1)
    listed, merges = pipe.execute()
    sessions = sessions | {as_str(s) for s in listed}
    moves = [
        (old.user("user_sessions", user_id), keys.user_sessions(user_id)),
        (old.user("user_queries", user_id), keys.user_queries(user_id)),
        (old.user("maintenance:last", user_id), keys.maintenance_last(user_id)),
        (old.user("user_merges", user_id), keys.user_merges(user_id)),
        (old.user("rejected_merges", user_id), keys.rejected_merges(user_id)),
        (old.user("judged_apart", user_id), keys.judged_apart(user_id)),
        (old.user("decay", user_id), keys.decay_state(user_id)),
    ]
    moves += [(f"{keys.ns}:merge:{as_str(m)}", keys.merge(user_id, as_str(m))) for m in merges]
    for s in sorted(sessions):
        tag = owner_tag(user_id, s)
        moves += [
            (old.session("session", user_id, s), keys.session(user_id, s)),
            (old.session("turn_details", user_id, s), keys.details(user_id, s)),
            (old.session("summary", user_id, s), keys.summary_state(user_id, s)),
            (f"{keys.ns}:timeline:{tag}", keys.timeline(user_id, tag)),
        ]
    return moves


def _rename(client: redis.Redis, moves: Iterable[tuple[str, str]]) -> Migration:
    done = Migration()
    moves = list(moves)
    for start in range(0, len(moves), BATCH):
        chunk = moves[start : start + BATCH]
        pipe = client.pipeline(transaction=False)
        for src, _ in chunk:  # most derived names never existed (a user without merges...)
            pipe.exists(src)
        chunk = [m for m, there in zip(chunk, pipe.execute(), strict=True) if there]
        if not chunk:
            continue
        pipe = client.pipeline(transaction=False)
        for src, dst in chunk:
            pipe.renamenx(src, dst)
        for (src, dst), reply in zip(chunk, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(reply, redis.ResponseError) and "crossslot" in str(reply).lower():
                reply = _copy(client, src, dst)
            if isinstance(reply, Exception):
                if "no such key" not in str(reply).lower():
                    raise reply
            elif reply:
                done.renamed += 1
            else:
                done.conflicts.append((src, dst))
    return done


def _copy(client: redis.Redis, src: str, dst: str) -> bool | Exception:
    """RENAMENX where a rename across slots is refused: True when moved, False when `dst`
    exists (left as it is), the error "no such key" when `src` is gone."""
    value, ttl = client.dump(src), client.pttl(src)
    if value is None:
        return redis.ResponseError("no such key")
    try:
        client.restore(dst, max(0, int(ttl)), value)
    except redis.ResponseError as e:
        if "busykey" not in str(e).lower():
            raise
        return False
    client.delete(src)
    return True
