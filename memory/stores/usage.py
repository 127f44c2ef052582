"""Which answers used which memories: a count and a last time per memory, and the user's recent
answers with the memories each used (written in the answer's own transaction). Nothing here
holds text: an answer is its turn id, its session and the memory ids."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable

import redis
from pydantic import BaseModel

from memory.boundary import translate_store_errors
from memory.keys import Keys
from memory.models import Usage, UsedIn, in_time_range
from memory.replies import as_str

#: Answers kept per user for "which answers used this memory" (counts are kept for all).
MAX_ANSWERS = 200

# ARGV[1] = how many memory ids follow; then the ids, then turn ids. Each memory's count goes,
# and it leaves every answer's list; an answer of a forgotten turn, or with no memory left,
# goes. One script, so a reader never sees an answer naming a memory already gone.
_DROP = """
local n = tonumber(ARGV[1])
local ids, turns = {}, {}
for i = 2, n + 1 do
  ids[ARGV[i]] = true
  redis.call('HDEL', KEYS[1], 'n:' .. ARGV[i], 't:' .. ARGV[i])
end
for i = n + 2, #ARGV do turns[ARGV[i]] = true end
local all = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do
  local rec = cjson.decode(all[i])
  local kept = {}
  for _, id in ipairs(rec.ids) do
    if not ids[id] then table.insert(kept, id) end
  end
  if turns[rec.t] or #kept == 0 then
    redis.call('ZREM', KEYS[2], all[i])
  elseif #kept < #rec.ids then
    redis.call('ZREM', KEYS[2], all[i])
    rec.ids = kept
    redis.call('ZADD', KEYS[2], all[i + 1], cjson.encode(rec))
  end
end
return 1
"""

# ARGV[1] = the cap on answers, ARGV[2] = how many memories follow as (id, count, last time)
# triples; then answers as (record, time) pairs. A memory keeps the larger count and the later
# time, and an answer whose turn is recorded already is not added again: importing a file
# twice, or into a user who has chatted since, counts nothing twice.
_IMPORT = """
local n = tonumber(ARGV[2])
for i = 3, 3 * n, 3 do
  for f, v in pairs({n = ARGV[i + 1], t = ARGV[i + 2]}) do
    local field = f .. ':' .. ARGV[i]
    if tonumber(v) > tonumber(redis.call('HGET', KEYS[1], field) or 0) then
      redis.call('HSET', KEYS[1], field, v)
    end
  end
end
local seen = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do seen[cjson.decode(m).t] = true end
for i = 3 + 3 * n, #ARGV, 2 do
  local t = cjson.decode(ARGV[i]).t
  if not seen[t] then
    seen[t] = true
    redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
  end
end
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[1]) + 1))
return 1
"""


class AnswerRecord(BaseModel):
    """One stored answer and the memories it used, as an export file holds it."""

    turn_id: str
    session_id: str
    at_ms: int
    memory_ids: list[str]

    def member(self) -> str:
        return json.dumps({"t": self.turn_id, "s": self.session_id, "ids": self.memory_ids})


def queue_record(
    pipe: redis.client.Pipeline,
    keys: Keys,
    user_id: str,
    session_id: str,
    turn_id: str,
    memory_ids: Iterable[str],
    at_ms: int,
) -> None:
    """Queue: the answer `turn_id` used these memories."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    counts, answers = keys.usage(user_id), keys.usage_answers(user_id)
    for mid in ids:
        pipe.hincrby(counts, f"n:{mid}", 1)
        pipe.hset(counts, f"t:{mid}", at_ms)
    record = AnswerRecord(turn_id=turn_id, session_id=session_id, at_ms=at_ms, memory_ids=ids)
    pipe.zadd(answers, {record.member(): at_ms})
    pipe.zremrangebyrank(answers, 0, -(MAX_ANSWERS + 1))


def queue_drop(
    pipe: redis.client.Pipeline,
    keys: Keys,
    user_id: str,
    memory_ids: Collection[str] = (),
    turn_ids: Collection[str] = (),
) -> None:
    """Queue: these memories' records, and the answers of these turns, go."""
    if memory_ids or turn_ids:
        pipe.eval(
            _DROP,
            2,
            keys.usage(user_id),
            keys.usage_answers(user_id),
            len(memory_ids),
            *memory_ids,
            *turn_ids,
        )


def queue_import(
    pipe: redis.client.Pipeline,
    keys: Keys,
    user_id: str,
    counts: dict[str, Usage],
    answers: list[AnswerRecord],
) -> None:
    """Queue: an export's records (already under the ids the memories are written with) join
    the user's; of the answers, the newest `MAX_ANSWERS`."""
    args: list[str | int] = [MAX_ANSWERS, len(counts)]
    for mid, used in counts.items():
        args += [mid, used.answers, used.last_ms]
    for a in sorted(answers, key=lambda a: a.at_ms)[-MAX_ANSWERS:]:
        args += [a.member(), a.at_ms]
    if counts or answers:
        pipe.eval(_IMPORT, 2, keys.usage(user_id), keys.usage_answers(user_id), *args)


@translate_store_errors  # read by the UI directly: a down Redis is a message
class UsageRecords:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys

    def of(self, user_id: str) -> dict[str, Usage]:
        """memory id -> its usage, for every memory a stored answer of this user used."""
        raw = {as_str(k): as_str(v) for k, v in self._r.hgetall(self._keys.usage(user_id)).items()}
        return {
            field[2:]: Usage(int(n), _time(raw.get("t:" + field[2:], "0")))
            for field, n in raw.items()
            if field.startswith("n:")
        }

    def answers(self, user_id: str, memory_id: str, limit: int = 5) -> list[UsedIn]:
        """The newest stored answers (of the last `MAX_ANSWERS`) that used this memory."""
        used = [
            UsedIn(a.turn_id, a.session_id, a.at_ms)
            for a in reversed(self.records(user_id))
            if memory_id in a.memory_ids
        ]
        return used[:limit]

    def records(self, user_id: str) -> list[AnswerRecord]:
        """The stored answers (the last `MAX_ANSWERS`), oldest first."""
        ranked: list[tuple[bytes, float]] = self._r.zrange(  # type: ignore[assignment]
            self._keys.usage_answers(user_id), 0, -1, withscores=True
        )
        out = []
        for member, score in ranked:
            if not in_time_range(score):  # stored by an earlier version's import: no time
                continue
            rec = json.loads(as_str(member))
            ids = [str(i) for i in rec.get("ids", ())]
            out.append(
                AnswerRecord(turn_id=rec["t"], session_id=rec["s"], at_ms=score, memory_ids=ids)
            )
        return out


def _time(value: str) -> int:
    """A stored last time, 0 (unknown) when an earlier version's import stored none that is a
    time (1e30, 2**63)."""
    try:
        ms = int(float(value)) if "e" in value.lower() or "." in value else int(value)
    except (ValueError, OverflowError):
        return 0
    return ms if in_time_range(ms) else 0
