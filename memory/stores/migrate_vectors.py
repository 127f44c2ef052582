"""Converts a store whose vectors are float32 to `schema.VECTOR_DTYPE` (float16), at open.

Until the marker `Keys.vector_dtype` holds today's dtype, and again whenever an index is found
of another vector type (a process of the older version created it after the conversion),
`migrate_vectors` runs when the stores open (after the key migration), for each index with a
vector field:

- Its index, when its vector field has another type, is dropped without its documents
  (FT.DROPINDEX without DD) and, once the hashes are converted, created again with today's
  schema: Redis then indexes them in the background.
- Every hash under the index's prefix whose vector has the byte length of a float32 vector of
  the index's dimension is rewritten in the new dtype, pipelined in batches. The length tells
  the two formats apart, so a pass cut short resumes safely at the next open.
- An index built for another dimension than the configured embedder's is left alone (and the
  marker unset): `open_index` refuses it, and `python -m memory reembed` rebuilds it.

Concurrent-safe: two processes may migrate at once. Dropping an index the other one dropped, or
creating one it created, is a no-op. A vector is replaced only while it still holds the bytes
read (a compare-and-set script): a vector written meanwhile is never overwritten by an older
one, and a memory deleted meanwhile is never re-created as a stub. The marker is set only after
a complete pass.

The query-embedding cache (`memory.embeddings.cache`) is left as it is: RedisVL's
`EmbeddingsCache` keeps vectors as JSON lists in plain hashes, read back as float32, outside
every index; it holds searched texts (not memories) and expires.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import redis
from redisvl.exceptions import RedisVLError
from redisvl.index import SearchIndex
from redisvl.schema import IndexSchema
from redisvl.schema.fields import BaseVectorFieldAttributes

from memory.keys import Keys
from memory.replies import as_str
from memory.stores import schema as schemas
from memory.stores.records import vector_bytes

log = logging.getLogger(__name__)

BATCH = 500
#: The dtype every vector was stored in before float16.
LEGACY_DTYPE = "float32"

# Replace the vector only if it is still the one read (ARGV[1]); a gone hash stays gone.
_SWAP_IF_SAME = f"""
if redis.call('HGET', KEYS[1], '{schemas.VECTOR_FIELD}') == ARGV[1] then
  redis.call('HSET', KEYS[1], '{schemas.VECTOR_FIELD}', ARGV[2])
  return 1
end
return 0
"""


@dataclass
class VectorMigration:
    """What one pass did (for the log and the tests)."""

    converted: int = 0
    #: indexes dropped and created again with today's vector dtype
    rebuilt: list[str] = field(default_factory=list)
    #: indexes left for `reembed` (built for another dimension)
    skipped: list[str] = field(default_factory=list)


def migrate_vectors(
    client: redis.Redis, keys: Keys, index_schemas: Iterable[IndexSchema]
) -> VectorMigration | None:
    """Bring every stored vector to `schema.VECTOR_DTYPE`; None when it already was."""
    dtype = schemas.VECTOR_DTYPE
    with_vectors = [
        (schema, vector.attrs.dims)
        for schema in index_schemas
        if (vector := schema.fields.get(schemas.VECTOR_FIELD)) is not None
        and isinstance(vector.attrs, BaseVectorFieldAttributes)
    ]
    # The marker alone is not enough: a process of the older version may have created an
    # index of the old type (and written old vectors) after it was set; FT.INFO is cheap.
    if as_str(client.get(keys.vector_dtype) or b"") == dtype and all(
        _of_type(_vector_attrs(client, schema.index.name), dtype) for schema, _ in with_vectors
    ):
        return None
    done = VectorMigration()
    for schema, dims in with_vectors:
        _migrate_index(client, keys, schema, dims, done)
    if not done.skipped:
        client.set(keys.vector_dtype, dtype)
    if done.converted or done.rebuilt or done.skipped:
        log.info(
            "Vectors to %s: %d converted, indexes rebuilt %s, left for reembed %s",
            dtype,
            done.converted,
            done.rebuilt,
            done.skipped,
        )
    return done


def _migrate_index(
    client: redis.Redis, keys: Keys, schema: IndexSchema, dims: int, done: VectorMigration
) -> None:
    name = schema.index.name
    built = _vector_attrs(client, name)  # None: no such index
    meta = client.hget(keys.index_meta(name), "dims")
    if built is None and meta is None:  # never opened: nothing was written through it
        return
    # the index's own dimension, else the one recorded when it was opened, else today's
    known = (built or {}).get("dim") or meta
    built_dims = int(as_str(known)) if known is not None else dims
    if built_dims != dims:
        done.skipped.append(name)
        return
    rebuild = built is not None and not _of_type(built, schemas.VECTOR_DTYPE)
    if rebuild:
        _drop(client, name)
    done.converted += _convert(client, schema.index.prefix, dims, name)
    if rebuild or built is None:
        _create(client, schema)
        done.rebuilt.append(name)


def _vector_attrs(client: redis.Redis, index_name: str) -> dict[str, Any] | None:
    """The vector field's attributes in FT.INFO (`data_type`, `dim`...); None: no index."""
    attrs = schemas.index_attributes(client, index_name)
    return None if attrs is None else attrs.get(schemas.VECTOR_FIELD, {})


def _of_type(attrs: dict[str, Any] | None, dtype: str) -> bool:
    """No index yet (`open_index` creates it with today's schema), or one of `dtype`."""
    return attrs is None or as_str(attrs.get("data_type", "")).lower() == dtype


def _drop(client: redis.Redis, index_name: str) -> None:
    try:
        client.ft(index_name).dropindex(delete_documents=False)  # keep the hashes
    except redis.ResponseError as e:
        if "unknown index" not in str(e).lower():  # the other process dropped it first
            raise


def _create(client: redis.Redis, schema: IndexSchema) -> None:
    try:
        SearchIndex(schema, redis_client=client).create(overwrite=False)
    except (redis.ResponseError, RedisVLError) as e:
        if "already exists" not in str(e).lower():  # the other process created it first
            raise


def _convert(client: redis.Redis, prefix: str, dims: int, index_name: str) -> int:
    """Rewrite every float32 vector under `prefix` in today's dtype; how many were."""
    old_len = dims * np.dtype(LEGACY_DTYPE).itemsize
    swap = client.register_script(_SWAP_IF_SAME)
    converted = 0
    batch: list[bytes] = []

    def flush() -> int:
        pipe = client.pipeline(transaction=False)
        for key in batch:
            pipe.hget(key, schemas.VECTOR_FIELD)
        olds = pipe.execute(raise_on_error=False)  # a key of another type: an error, skipped
        todo = [
            (key, raw)
            for key, raw in zip(batch, olds, strict=True)
            if isinstance(raw, bytes) and len(raw) == old_len
        ]
        if not todo:
            return 0
        pipe = client.pipeline(transaction=False)
        for key, raw in todo:
            new = vector_bytes(np.frombuffer(raw, dtype=LEGACY_DTYPE))
            swap(keys=[key], args=[raw, new], client=pipe)
        return sum(int(r) for r in pipe.execute())

    scanned = 0
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) == BATCH:
            converted += flush()
            scanned += len(batch)
            batch = []
            if scanned % (20 * BATCH) == 0:  # progress of a big store, every 10k keys
                log.info(
                    "Vectors of %s: %d converted, %d keys seen", index_name, converted, scanned
                )
    if batch:
        converted += flush()
    return converted
