"""Recall reads FT.SEARCH replies itself (`memory.recall.search`): RESP3 maps and RESP2 arrays
give the rows RedisVL gave (text fields decoded, the vector kept as bytes, BM25's score)."""

from __future__ import annotations

import numpy as np
from redisvl.query import TextQuery, VectorQuery

from memory.recall.search import reply_rows, search_args

VEC = np.arange(4, dtype=np.float32).tobytes()


def _text_query() -> TextQuery:
    q = TextQuery(text="knee", text_field_name="description", num_results=5)
    q.return_fields("description", "embedding", skip_decode=["embedding"])
    return q


def test_resp3_and_resp2_replies_give_the_same_rows() -> None:
    resp3 = {
        b"total_results": 1,
        b"results": [
            {
                b"id": b"ns:episodic:{u1}:01A",
                b"score": 2.5,
                b"extra_attributes": {b"description": b"My knee hurts", b"embedding": VEC},
            }
        ],
    }
    resp2 = [
        1,
        b"ns:episodic:{u1}:01A",
        b"2.5",
        [b"description", b"My knee hurts", b"embedding", VEC],
    ]
    expected = [
        {
            "id": "ns:episodic:{u1}:01A",
            "score": 2.5,
            "description": "My knee hurts",
            "embedding": VEC,
        }
    ]
    q = _text_query()
    assert reply_rows(resp3, q) == expected
    assert reply_rows(resp2, q) == expected


def test_a_vector_hit_without_its_fields_is_no_candidate() -> None:
    """A document expiring while the search runs comes back bare (Redis 8.8+): dropped."""
    q = VectorQuery(vector=VEC, vector_field_name="embedding", return_fields=["description"])
    reply = {
        b"results": [
            {
                b"id": b"k:1",
                b"extra_attributes": {b"vector_distance": b"0.1", b"description": b"a"},
            },
            {b"id": b"k:2", b"extra_attributes": {}},
        ]
    }
    assert [r["id"] for r in reply_rows(reply, q)] == ["k:1"]


def test_the_arguments_carry_the_query_and_its_vector_parameter() -> None:
    q = VectorQuery(vector=VEC, vector_field_name="embedding", return_fields=["description"])
    args = search_args("idx", q)
    assert args[0] == "idx" and "KNN" in args[1]
    assert args[args.index("PARAMS") + 1 :][:3] == [2, "vector", VEC]


def test_a_reply_with_an_empty_or_numeric_value_keeps_every_field() -> None:
    """The bytes reply is read in one pass; a None or a number in it falls back to reading
    field by field, with the same row (text, the vector as bytes, None kept)."""
    q = _text_query()
    doc = {
        b"id": b"ns:episodic:{u1}:01A",
        b"score": 1.5,
        b"extra_attributes": {
            b"description": b"My knee",
            b"embedding": VEC,
            b"context": None,
            b"importance": 7,
        },
    }
    by_text = {
        "id": "ns:episodic:{u1}:01A",
        "score": 1.5,
        "extra_attributes": {"description": "My knee", "embedding": VEC, "context": None},
    }
    rows = reply_rows({b"results": [doc]}, q) + reply_rows({"results": [by_text]}, q)
    assert rows[0] == {
        "id": "ns:episodic:{u1}:01A",
        "score": 1.5,
        "description": "My knee",
        "embedding": VEC,
        "context": None,
        "importance": "7",
    }
    assert list(rows[0]) == ["id", "score", "description", "embedding", "context", "importance"]
    assert rows[1] == {k: v for k, v in rows[0].items() if k != "importance"}
