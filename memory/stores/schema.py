"""RedisVL index schemas of the vector-backed memory types, and the embedding-model guard: an index
records its model and dimension, and opening it with another embedder is refused
(`python -m memory reembed` rebuilds the vectors)."""

from __future__ import annotations

from typing import Any

import redis
from redisvl.exceptions import RedisVLError
from redisvl.index import SearchIndex
from redisvl.query import CountQuery, FilterQuery
from redisvl.query.filter import FilterExpression
from redisvl.schema import IndexSchema

from memory.boundary import store_error
from memory.embeddings.model_ids import same_vector_space
from memory.errors import EmbeddingModelMismatchError, InvalidInputError, StoreUnavailableError
from memory.keys import Keys
from memory.queries import ListQuery
from memory.replies import as_str

VECTOR_FIELD = "embedding"
#: How the vectors are stored (hash field and index): half precision halves their ~1.5 KB
#: per copy at 384 dims; cosine of unit vectors moves by ~1e-3. Encoded and decoded only by
#: `memory.stores.records.vector_bytes` / `bytes_vector`.
VECTOR_DTYPE = "float16"
AUDIENCE_FIELD = "audience"
#: An episodic memory's owner digest while it is active, empty once superseded: recall's one
#: filter tag. Intersecting `owner` with `status` made the KNN over a user's 10k of 100k
#: memories 1.0 instead of 0.7 ms when each user's memories are contiguous, 5.3 instead of
#: 3.8 ms when users interleave (lab/knn_filter_cost.py); `status` stays for reading.
LIVE_FIELD = "live"
SHARED = "shared"  # the audience of a fact every user recalls (owner tags are hex digests)


def _vector_field(dims: int, algorithm: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "dims": dims,
        "distance_metric": "cosine",
        "algorithm": algorithm,
        "datatype": VECTOR_DTYPE,
    }
    if algorithm == "hnsw":
        attrs.update({"m": 16, "ef_construction": 200, "ef_runtime": 64})
    return {"name": VECTOR_FIELD, "type": "vector", "attrs": attrs}


def _sortable(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "type": "numeric", "attrs": {"sortable": True}} for n in names]


def _schema(name: str, prefix: str, fields: list[dict[str, Any]]) -> IndexSchema:
    index = {"name": name, "prefix": prefix, "storage_type": "hash"}
    return IndexSchema.from_dict({"index": index, "fields": fields})


def episodic_schema(keys: Keys, dims: int, algorithm: str) -> IndexSchema:
    return _schema(
        keys.episodic_index,
        keys.episodic_prefix,
        [
            # owner/session hold digests of the ids (see keys.owner_tag)
            {"name": "owner", "type": "tag", "attrs": {"case_sensitive": True}},
            {"name": "event_type", "type": "tag"},
            {"name": "tags", "type": "tag", "attrs": {"separator": ","}},
            {"name": "session", "type": "tag", "attrs": {"case_sensitive": True}},
            {"name": "pinned", "type": "tag"},
            {"name": "status", "type": "tag"},  # active | superseded
            {"name": LIVE_FIELD, "type": "tag", "attrs": {"case_sensitive": True}},
            {"name": "description", "type": "text", "attrs": {"weight": 1.0}},
            {"name": "context", "type": "text", "attrs": {"weight": 0.5}},
            *_sortable("timestamp", "created_at", "importance", "access_count", "last_accessed"),
            {"name": "expires_at", "type": "numeric"},
            _vector_field(dims, algorithm),
        ],
    )


def semantic_schema(keys: Keys, dims: int, algorithm: str) -> IndexSchema:
    return _schema(
        keys.semantic_index,
        keys.semantic_prefix,
        [
            {"name": "category", "type": "tag"},
            {"name": "fact_type", "type": "tag"},
            {"name": "source", "type": "tag"},
            {"name": "added_by_owner", "type": "tag", "attrs": {"case_sensitive": True}},
            # who recalls the fact: "shared", or the digest of the user who added it
            {"name": AUDIENCE_FIELD, "type": "tag", "attrs": {"case_sensitive": True}},
            {"name": "pinned", "type": "tag"},
            {"name": "fact", "type": "text", "attrs": {"weight": 1.0}},
            {"name": "context", "type": "text", "attrs": {"weight": 0.5}},
            *_sortable("timestamp", "importance"),
            _vector_field(dims, algorithm),
        ],
    )


def procedural_schema(keys: Keys, dims: int, algorithm: str) -> IndexSchema:
    return _schema(
        keys.procedural_index,
        keys.procedural_prefix,
        [
            {"name": "owner", "type": "tag", "attrs": {"case_sensitive": True}},
            {"name": "pinned", "type": "tag"},
            {"name": "query_pattern", "type": "text"},
            *_sortable("executions", "confidence", "last_used", "created_at"),
            _vector_field(dims, algorithm),
        ],
    )


def open_index(
    client: redis.Redis,
    keys: Keys,
    schema: IndexSchema,
    model_id: str,
    dims: int,
) -> SearchIndex:
    """Create the index if missing; refuse one built with another embedding model."""
    index = SearchIndex(schema, redis_client=client)
    meta_key = keys.index_meta(schema.index.name)
    try:
        exists = index.exists()
        meta = client.hgetall(meta_key)
    except (redis.RedisError, RedisVLError) as e:
        # The one wording of driver errors: "still loading" is not "not reachable".
        raise StoreUnavailableError(f"Opening {schema.index.name}: {store_error(e)}") from e
    if exists and meta:
        built_model = as_str(meta.get(b"model_id", b""))
        built_dims = int(meta.get(b"dims", b"0"))
        # every model whose vectors the index holds: the one that built it, and those of the
        # same vector space that opened it since (embeddings.model_ids)
        writers = {built_model, *as_str(meta.get(b"written_by", b"")).split(",")} - {""}
        if built_dims != dims or not all(same_vector_space(w, model_id) for w in writers):
            raise EmbeddingModelMismatchError(
                f"Index {schema.index.name!r} was built with embedding model {built_model!r} "
                f"({built_dims} dimensions"
                + (
                    f"; also written by {', '.join(sorted(writers - {built_model}))}"
                    if len(writers) > 1
                    else ""
                )
                + f") but the configured embedder is {model_id!r} "
                f"({dims} dimensions). Re-embed the stored memories with "
                "`python -m memory reembed`, or set EMBEDDING_PROVIDER back."
            )
        if model_id not in writers:
            client.hset(
                meta_key, "written_by", ",".join(sorted(writers - {built_model} | {model_id}))
            )
    if not exists:
        index.create(overwrite=False)
    if not meta or not exists:
        client.hset(meta_key, mapping={"model_id": model_id, "dims": dims})
    return index


def matching_keys(index: SearchIndex, filter_expression: FilterExpression) -> list[str]:
    """Redis keys of every document matching the filter (paged, for purges and exports)."""
    q = FilterQuery(filter_expression=filter_expression, return_fields=[], num_results=500)
    return [str(r["id"]) for batch in index.paginate(q, page_size=500) for r in batch]


def query_page(
    index: SearchIndex,
    filter_expression: FilterExpression | None,
    return_fields: list[str],
    page: ListQuery,
    default_sort: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """One page of an index's documents matching a filter, sorted by `page.sort_by` when the
    index can sort by it (else by `default_sort`; without one, refused), and how many match."""
    fields = index.schema.fields.items()
    sortable = sorted(name for name, f in fields if getattr(f.attrs, "sortable", False))
    sort_by = page.sort_by if page.sort_by in sortable else default_sort
    if sort_by is None:
        raise InvalidInputError(f"Cannot sort by {page.sort_by!r}; use one of {sortable}.")
    size = page.page_size
    if page.page < 1 or not 1 <= size <= 1000:
        raise InvalidInputError("Page must be >= 1 and page size between 1 and 1000.")
    q = FilterQuery(
        filter_expression=filter_expression,
        return_fields=return_fields,
        num_results=size,
        sort_by=(sort_by, "DESC" if page.descending else "ASC"),
    )
    q.paging((page.page - 1) * size, size)
    total = index.query(CountQuery(filter_expression=filter_expression))
    return index.query(q), int(total)
