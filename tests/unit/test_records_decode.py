"""A stored hash read back (`memory.stores.records.decode`): every field kind as the record
shows it, whether the client gave bytes or text."""

from __future__ import annotations

from memory.stores.records import decode, encode


def test_every_field_kind_reads_back_as_written() -> None:
    record = {
        "description": "Knee felt fine, 5 km",
        "tags": ["run", "knee"],
        "pinned": True,
        "timestamp": 1_750_000_000_123,
        "importance": 0.7,
        "metadata": {"source": "chat"},
        "tool_sequence": ["search_workouts"],
        "superseded_by": None,
        "expires_at": None,
    }
    stored = {k: str(v).encode() for k, v in encode(record).items()}
    stored[b"embedding"] = b"\x00\x01"  # binary, never decoded
    stored["vector_distance"] = b"0.25"
    rec = decode(stored)
    assert rec == {**record, "vector_distance": 0.25}
    assert decode({k.decode() if isinstance(k, bytes) else k: v for k, v in stored.items()}) == rec


def test_empty_values_read_as_their_kind_s_empty_value() -> None:
    rec = decode({b"metadata": b"", b"tool_sequence": b"", b"tags": b"", b"last_used": b""})
    assert rec == {"metadata": {}, "tool_sequence": [], "tags": [], "last_used": 0}
