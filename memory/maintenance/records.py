"""A user's episodic memories with their vectors, read in one pipelined round trip."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.replies import as_str
from memory.stores import Stores
from memory.stores.records import bytes_vector, decode


@dataclass
class Memo:
    """The fields maintenance looks at, plus the vector (None when missing)."""

    id: str
    text: str
    event_type: str
    status: str
    superseded_by: str
    pinned: bool
    importance: float
    timestamp: int
    created_at: int
    access_count: int
    vector: np.ndarray | None

    @property
    def active(self) -> bool:
        return self.status != "superseded" and not self.superseded_by


def load_memos(stores: Stores, user_id: str) -> list[Memo]:
    ids = stores.episodic.ids_for_user(user_id)
    if not ids:
        return []
    pipe = stores.client.pipeline(transaction=False)
    for mid in ids:
        pipe.hgetall(stores.keys.episodic(user_id, mid))
    out: list[Memo] = []
    for mid, raw in zip(ids, pipe.execute(), strict=True):
        if not raw:  # deleted meanwhile
            continue
        vec_raw = raw.get(b"embedding") or raw.get("embedding")
        rec = decode(raw)
        out.append(
            Memo(
                id=mid,
                text=str(rec.get("description", "")),
                event_type=str(rec.get("event_type", "")),
                status=as_str(rec.get("status", "active")) or "active",
                superseded_by=str(rec.get("superseded_by") or ""),
                pinned=bool(rec.get("pinned", False)),
                importance=float(rec.get("importance", 0.5) or 0.0),
                timestamp=int(rec.get("timestamp", 0) or 0),
                created_at=int(rec.get("created_at", 0) or 0),
                access_count=int(rec.get("access_count", 0) or 0),
                vector=bytes_vector(vec_raw) if isinstance(vec_raw, bytes) else None,
            )
        )
    return out
