"""The profile's aggregation reply, read without a server: a memory that vanished between the
index's match and the LOAD (deleted, or expired) is no line and does not fail the turn."""

from __future__ import annotations

from memory.models import EventType
from memory.user_profile import lines_of_reply

KEY = b"cm:episodic:u1:01J0000000000000000000000A"
GONE = b"cm:episodic:u1:01J0000000000000000000000B"
FIELDS = {
    b"event_type": b"preference",
    b"description": b"I'm vegetarian",
    b"importance": b"0.9",
    b"timestamp": b"1700000000000",
}


def test_a_resp2_reply_skips_a_row_whose_memory_is_gone() -> None:
    whole = [b"__key", KEY, *(x for kv in FIELDS.items() for x in kv)]
    reply = [2, whole, [b"__key", GONE, b"importance", b"0.9"]]
    [line] = lines_of_reply(reply)
    assert (line.id, line.kind, line.text) == (
        "01J0000000000000000000000A",
        EventType.PREFERENCE,
        "I'm vegetarian",
    )


def test_a_resp3_reply_skips_a_row_whose_memory_is_gone() -> None:
    reply = {
        b"total_results": 2,
        b"results": [
            {b"extra_attributes": {b"__key": KEY, **FIELDS}, b"values": []},
            {b"extra_attributes": {b"__key": GONE}, b"values": []},
        ],
    }
    assert [line.text for line in lines_of_reply(reply)] == ["I'm vegetarian"]
