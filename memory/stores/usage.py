"""Which answers used which memories: a count and a last time per memory, and the user's
recent answers with the memories each used.

    queue_record(pipe, ...)   an answer that was stored used these memories (in the answer's
                              own transaction: an answer that was not stored records nothing)
    queue_drop(pipe, ...)     memories deleted, or turns forgotten: their records go with them
    UsageRecords.of(user)     memory id -> Usage (count, last time), for the Memories page
    UsageRecords.answers(...) the recent answers that used one memory (turn, session, time)

Two keys per user, both in the user's hash slot (`Keys.usage`, `Keys.usage_answers`): a hash
(`n:<id>` the count, `t:<id>` the last time) and a sorted set of answers by time, capped at
`MAX_ANSWERS`. Nothing here holds text: an answer is its turn id, its session and the memory
ids; its question is read from the session's messages, so it goes when they go.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable

import redis

from memory.keys import Keys
from memory.models import Usage, UsedIn
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
    pipe.zadd(answers, {json.dumps({"t": turn_id, "s": session_id, "ids": ids}): at_ms})
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


class UsageRecords:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._r = client
        self._keys = keys

    def of(self, user_id: str) -> dict[str, Usage]:
        """memory id -> its usage, for every memory a stored answer of this user used."""
        raw = {as_str(k): as_str(v) for k, v in self._r.hgetall(self._keys.usage(user_id)).items()}
        return {
            field[2:]: Usage(int(n), int(raw.get("t:" + field[2:], 0)))
            for field, n in raw.items()
            if field.startswith("n:")
        }

    def answers(self, user_id: str, memory_id: str, limit: int = 5) -> list[UsedIn]:
        """The newest stored answers (of the last `MAX_ANSWERS`) that used this memory."""
        out: list[UsedIn] = []
        ranked: list[tuple[bytes, float]] = self._r.zrevrange(  # type: ignore[assignment]
            self._keys.usage_answers(user_id), 0, -1, withscores=True
        )
        for member, score in ranked:
            rec = json.loads(as_str(member))
            if memory_id in rec.get("ids", ()):
                out.append(UsedIn(str(rec["t"]), str(rec["s"]), int(score)))
                if len(out) >= limit:
                    break
        return out
