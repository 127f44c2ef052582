"""Re-embedding: rebuild every index with the configured embedder (after a model change); the
hashes keep their ids and fields, every text is embedded again in batches."""

from __future__ import annotations

from collections.abc import Callable

from redisvl.index import SearchIndex

from memory.config import Settings
from memory.embeddings import build_embedder
from memory.keys import Keys
from memory.replies import as_str
from memory.runtime.connection import connect
from memory.stores.episodic import embedding_text
from memory.stores.records import vector_bytes
from memory.stores.schema import (
    VECTOR_DTYPE,
    VECTOR_FIELD,
    episodic_schema,
    procedural_schema,
    semantic_schema,
)

BATCH = 256


def reembed_all(settings: Settings, progress: Callable[[str], None] = lambda m: None) -> dict:
    client = connect(settings)
    keys = Keys(settings.memory_namespace)
    embedder = build_embedder(settings)
    dims, model, algo = embedder.dims, embedder.model_id, settings.vector_algorithm
    counts = {}
    for name, schema, field in (
        ("episodic", episodic_schema(keys, dims, algo), "description"),
        ("semantic", semantic_schema(keys, dims, algo), "fact"),
        ("procedural", procedural_schema(keys, dims, algo), "query_pattern"),
    ):
        index = SearchIndex(schema, redis_client=client)
        if index.exists():
            index.delete(drop=False)  # keep the documents
        prefix = schema.index.prefix
        keys_found = [k for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        done = 0
        for start in range(0, len(keys_found), BATCH):
            chunk = keys_found[start : start + BATCH]
            pipe = client.pipeline(transaction=False)
            for k in chunk:
                pipe.hmget(k, [field, "context"])
            # Episodic memories embed `description (context)`, as every write path does.
            texts = [
                embedding_text(as_str(t or b""), as_str(c or b""))
                if name == "episodic"
                else as_str(t or b"")
                for t, c in pipe.execute()
            ]
            vecs = embedder.embed_many([t or " " for t in texts])
            pipe = client.pipeline(transaction=False)
            for k, v in zip(chunk, vecs, strict=True):
                pipe.hset(k, VECTOR_FIELD, vector_bytes(v))
            pipe.execute()
            done += len(chunk)
            progress(f"{name}: {done}/{len(keys_found)}")
        index.create(overwrite=False)
        meta = keys.index_meta(schema.index.name)
        client.hset(meta, mapping={"model_id": model, "dims": dims})
        client.hdel(meta, "written_by")  # every vector is this model's now
        counts[name] = len(keys_found)
    client.set(keys.vector_dtype, VECTOR_DTYPE)  # every vector was written in today's dtype
    # Cached query vectors belong to the old model (they are keyed by model too; drop anyway).
    stale = list(client.scan_iter(match=keys.embedding_cache_entries, count=1000))
    pipe = client.pipeline(transaction=False)
    for key in stale:  # one DEL per key: cache entries lie in many hash slots
        pipe.delete(key)
    pipe.execute()
    return counts
