"""RedisVL queries sent inside the caller's pipeline (one round trip for all of a recall's
searches, not one `batch_query` per store), their replies read straight from the RESP map
(RedisVL's `Result` -> `Document` path cost ~0.4 ms per query pair, more than the searches).
Rows come out as RedisVL's do: `id` and fields as text, the vector as bytes, `score`."""

from __future__ import annotations

from typing import Any

from redisvl.query import BaseQuery
from redisvl.query.query import BaseVectorQuery

from memory.replies import as_str
from memory.stores.schema import VECTOR_FIELD

SEARCH = "FT.SEARCH"


def search_args(index_name: str, query: BaseQuery) -> list[Any]:
    """FT.SEARCH's arguments for a RedisVL query (as redis-py's `Search.search` builds them)."""
    args: list[Any] = [index_name, *query.get_args()]
    params = query.params
    if params:
        args += ["PARAMS", 2 * len(params)]
        for name, value in params.items():
            args += [name, value]
    return args


def queue_search(pipe: Any, index_name: str, query: BaseQuery) -> None:
    pipe.execute_command(SEARCH, *search_args(index_name, query))


def reply_rows(reply: Any, query: BaseQuery) -> list[dict[str, Any]]:
    """The rows of an FT.SEARCH reply (RESP3 map or RESP2 array)."""
    rows = _resp3_rows(reply) if isinstance(reply, dict) else _resp2_rows(reply, query)
    if isinstance(query, BaseVectorQuery):
        # As RedisVL: a document that expired while the search ran comes back without its
        # fields (Redis 8.8+ background workers); it is no candidate.
        rows = [r for r in rows if query.DISTANCE_ID in r]
    return rows


def _resp3_rows(reply: dict[Any, Any]) -> list[dict[str, Any]]:
    out = []
    for doc in reply.get(b"results") or reply.get("results") or []:
        rid = doc.get(b"id")
        out.append(_any_row(doc) if rid is None else _bytes_row(doc, rid))
    return out


def _bytes_row(doc: dict[bytes, Any], rid: bytes) -> dict[str, Any]:
    """A result of a bytes client (recall's): every name bytes, values bytes; read with as
    few calls per field as possible (~1,200 fields per recall)."""
    row: dict[str, Any] = {"id": as_str(rid)}
    score = doc.get(b"score")
    if score is not None:
        row["score"] = float(score)
    attrs = doc.get(b"extra_attributes") or {}
    try:
        for name, value in attrs.items():
            key = name.decode()
            row[key] = value if key == VECTOR_FIELD else value.decode()
    except AttributeError:  # a None or a number among them: field by field (same values)
        for name, value in attrs.items():
            _put(row, name, value)
    return row


def _any_row(doc: dict[Any, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"id": as_str(_get(doc, "id"))}
    score = _get(doc, "score")
    if score is not None:
        row["score"] = float(score)
    for name, value in (_get(doc, "extra_attributes") or {}).items():
        _put(row, name, value)
    return row


def _resp2_rows(reply: list[Any], query: BaseQuery) -> list[dict[str, Any]]:
    with_scores = bool(getattr(query, "_with_scores", False))
    step = 3 if with_scores else 2
    out = []
    for i in range(1, len(reply), step):
        row: dict[str, Any] = {"id": as_str(reply[i])}
        if with_scores:
            row["score"] = float(as_str(reply[i + 1]))
        fields = reply[i + step - 1] or []
        for j in range(0, len(fields), 2):
            _put(row, fields[j], fields[j + 1])
        out.append(row)
    return out


def _put(row: dict[str, Any], name: Any, value: Any) -> None:
    key = as_str(name)
    row[key] = value if key == VECTOR_FIELD or value is None else as_str(value)


def _get(mapping: dict[Any, Any], name: str) -> Any:
    value = mapping.get(name.encode())
    return mapping.get(name) if value is None else value
