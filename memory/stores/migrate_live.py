"""Gives every episodic memory written before `schema.LIVE_FIELD` existed its tag, at open.

Recall filters a user's active memories on one tag (`live` = the owner digest while the memory
is active) instead of intersecting `owner` with `status`. A memory written before carries no
such tag and would be invisible to recall, so until the marker `Keys.live_tags` is set,
`migrate_live` runs when the stores open (after the key and vector migrations):

- every hash under the episodic prefix gets `live` from its own `owner` and `status` (a Lua
  script per hash: a hash deleted meanwhile is not re-created, one superseded meanwhile gets an
  empty tag), pipelined in batches; a pass cut short is simply done again at the next open;
- then an index that lacks the field gets it (FT.ALTER ... SCHEMA ADD: Redis indexes the
  existing hashes again in the background, as after FT.CREATE); an index created by today's
  schema already has it;
- the marker is set after a complete pass.

Two processes may migrate at once: both write the same values, and adding a field the other
one added is a no-op. A process of the older version writing after the pass leaves memories
without the tag (invisible to recall until a pass runs again with the marker deleted).
"""

from __future__ import annotations

import logging

import redis

from memory.keys import Keys
from memory.stores import schema as schemas

log = logging.getLogger(__name__)

BATCH = 500

# `live` from the hash's own owner and status; a gone hash stays gone (returns 0).
_SET_LIVE = f"""
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
local live = owner
if status == 'superseded' then live = '' end
redis.call('HSET', KEYS[1], '{schemas.LIVE_FIELD}', live)
return 1
"""


def migrate_live(client: redis.Redis, keys: Keys) -> int | None:
    """Tag every episodic memory with `live`; how many hashes were tagged, None when the
    store was already done."""
    if client.get(keys.live_tags):
        return None
    tag = client.register_script(_SET_LIVE)
    tagged = 0
    batch: list[bytes] = []

    def flush() -> int:
        pipe = client.pipeline(transaction=False)
        for key in batch:
            tag(keys=[key], client=pipe)
        # a key of another type under the prefix (none is written there): an error, skipped
        return sum(int(r) for r in pipe.execute(raise_on_error=False) if isinstance(r, int))

    for seen, key in enumerate(client.scan_iter(match=f"{keys.episodic_prefix}:*", count=1000), 1):
        batch.append(key)
        if len(batch) == BATCH:
            tagged += flush()
            batch = []
        if seen % (20 * BATCH) == 0:  # progress of a big store, every 10k keys
            log.info("Recall tags: %d memories tagged, %d keys seen", tagged, seen)
    if batch:
        tagged += flush()
    _add_field(client, keys.episodic_index)
    client.set(keys.live_tags, "1")
    if tagged:
        log.info("Recall tags: %d memories tagged", tagged)
    return tagged


def _add_field(client: redis.Redis, index_name: str) -> None:
    """Add `LIVE_FIELD` to an existing index that lacks it (no index: `open_index` creates
    it with today's schema)."""
    attrs = schemas.index_attributes(client, index_name)
    if attrs is None or schemas.LIVE_FIELD in attrs:
        return
    try:
        client.execute_command(
            "FT.ALTER", index_name, "SCHEMA", "ADD", schemas.LIVE_FIELD, "TAG", "CASESENSITIVE"
        )
    except redis.ResponseError as e:
        if "duplicate" not in str(e).lower():  # the other process added it first
            raise
