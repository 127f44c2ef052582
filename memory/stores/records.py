"""Encoding of memory records to Redis hash fields and back (one place for field formats)."""

from __future__ import annotations

import json
from typing import Any, get_origin

import numpy as np

from memory.errors import NotFoundError
from memory.keys import Keys
from memory.models import EpisodicMemory, ProceduralPattern, SemanticFact
from memory.replies import as_str
from memory.stores import schema
from memory.stores.schema import VECTOR_FIELD


# The dtype is read at each call (`schema.VECTOR_DTYPE`), never copied: one place decides it.
def vector_bytes(vec: Any) -> bytes:
    """A vector as stored in a hash and sent in a KNN query (the index's dtype)."""
    return np.asarray(vec, dtype=schema.VECTOR_DTYPE).tobytes()


def bytes_vector(raw: bytes | bytearray) -> np.ndarray:
    """Stored bytes -> a float32 vector (the math on vectors stays in float32)."""
    return np.frombuffer(raw, dtype=schema.VECTOR_DTYPE).astype(np.float32)


def vector_nbytes(dims: int) -> int:
    """How many bytes a stored vector of `dims` dimensions holds."""
    return dims * np.dtype(schema.VECTOR_DTYPE).itemsize


def encode(record: dict[str, Any]) -> dict[Any, Any]:
    """Pydantic dump -> hash mapping (strings, numbers, bytes)."""
    out: dict[Any, Any] = {}  # Any keys: what redis-py's hset(mapping=...) accepts
    for k, v in record.items():
        kind = _KIND_OF.get(k)
        if k == VECTOR_FIELD:
            out[k] = v if isinstance(v, bytes) else vector_bytes(v)
        elif kind == "json":
            out[k] = json.dumps(v, ensure_ascii=False)
        elif kind == "list":
            out[k] = ",".join(v)
        elif kind == "bool":
            out[k] = "1" if v else "0"
        elif v is None:
            # Numeric index fields must stay numeric ("" would make the hash unindexable).
            out[k] = 0 if kind in ("int", "float") else ""
        elif hasattr(v, "value"):  # enums
            out[k] = v.value
        else:
            out[k] = v
    return out


def stored_hash(
    client: Any, key: str, record_id: str, what: str, user_id: str | None = None
) -> dict[Any, Any]:
    """The hash of a record read by its id (`key`), or NotFoundError naming `what`: the same
    answer for an id that cannot be one, a missing record and another user's."""
    valid = isinstance(record_id, str) and 0 < len(record_id) <= 64 and ":" not in record_id
    raw = client.hgetall(key) if valid else None
    if not raw or (user_id is not None and decode(raw).get("user_id") != user_id):
        raise NotFoundError(f"No {what} {record_id!r}.")
    return raw


def row_record(row: dict[str, Any], text_field: str) -> dict[str, Any]:
    """A query result row -> record with its memory `id` (the key's last part) and `text`."""
    rec = decode(row)
    rec["id"] = Keys.memory_id(row["id"])
    rec["text"] = rec.get(text_field, "")
    return rec


def _kind(annotation: Any) -> str | None:
    """How a field of this type is stored, when it is not as text: "1"/"0", a number (0 for
    none: a numeric index field must stay numeric), or JSON text."""
    if annotation in (bool, int, float, int | None):
        return "int" if annotation == int | None else annotation.__name__
    return "json" if get_origin(annotation) in (dict, list) else None


#: how each stored field that is not plain text is written and read, from the models' types;
#: `tags` is the index's TAG field (comma-separated values), not JSON
_KIND_OF: dict[str, str | None] = {
    **{
        name: _kind(field.annotation)
        for model in (EpisodicMemory, SemanticFact, ProceduralPattern)
        for name, field in model.model_fields.items()
    },
    VECTOR_FIELD: "skip",  # binary: never part of a decoded record
    "vector_distance": "number",
    "score": "number",
    "tags": "list",
}


def decode(raw: dict[Any, Any]) -> dict[str, Any]:
    """Hash fields (from HGETALL or a RedisVL result) -> plain Python values."""
    out: dict[str, Any] = {}
    for k, v in raw.items():
        key = k if type(k) is str else as_str(k)
        kind = _KIND_OF.get(key)
        if kind == "skip":
            continue
        s = v.decode() if type(v) is bytes else as_str(v)
        if kind is None:  # most fields are text
            out[key] = s
        elif kind == "number":
            out[key] = float(s)
        elif kind == "json":
            out[key] = json.loads(s) if s else ({} if key != "tool_sequence" else [])
        elif kind == "list":
            out[key] = [t for t in s.split(",") if t]
        elif kind == "bool":
            out[key] = s == "1"
        elif kind == "int":
            out[key] = int(float(s)) if s else (None if key == "expires_at" else 0)
        else:
            out[key] = float(s) if s else 0.0
    if out.get("superseded_by") == "":
        out["superseded_by"] = None
    if out.get("expires_at") == 0:
        out["expires_at"] = None
    return out
