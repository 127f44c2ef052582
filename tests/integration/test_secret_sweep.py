"""Secrets an earlier version stored are swept (`python -m memory sweep-secrets`): the forms
the outside probe found (issue 49) written straight into Redis, as an older release left
them, are masked in every store, the counts reported, and a second sweep finds none."""

from __future__ import annotations

import json

import redis

from memory.coordinator import MemoryCoordinator
from memory.models import MemoryType
from tests.integration.conftest import Run

U = "sweep-user"
PASSWORD = "Hunt3r22"
CARD = "4111\u200e1111\u200f1111\u20631111"


def _stored_values(client: redis.Redis, namespace: str) -> str:
    out = []
    for key in client.scan_iter(match=f"{namespace}:*", count=1000):
        kind = client.type(key)
        if kind == b"hash":
            out += [v.decode("utf-8", "ignore") for v in client.hgetall(key).values()]
        elif kind == b"list":
            out += [v.decode("utf-8", "ignore") for v in client.lrange(key, 0, -1)]
    return "\n".join(out)


def test_secrets_stored_before_are_masked_and_counted(
    coordinator: MemoryCoordinator, redis_client: redis.Redis, namespace: str, cli: Run
) -> None:
    keys = coordinator.stores.keys
    mem = coordinator.add_episodic(U, "Reports need a database login", event_type="fact")
    redis_client.hset(
        keys.episodic(U, mem.id), "description", f"PGPASSWORD={PASSWORD} for the reports"
    )
    fact = coordinator.add_semantic("The reports run nightly", added_by=U)
    redis_client.hset(keys.semantic(fact.id), "fact", f"dbPassword: {PASSWORD} opens reports")
    coordinator.add_message(U, "s1", "user", "hello")
    old = json.loads(redis_client.lrange(keys.session(U, "s1"), 0, 0)[0])
    old.update(id="m-old", content=f"my card is {CARD}")
    redis_client.rpush(keys.session(U, "s1"), json.dumps(old, ensure_ascii=False))
    assert PASSWORD in _stored_values(redis_client, namespace)

    dry = json.loads(cli("sweep-secrets", "--dry-run", "--json").stdout)
    assert dry["masked"] == {"episodic": 1, "semantic": 1, "procedural": 0, "short_term": 1}
    assert PASSWORD in _stored_values(redis_client, namespace)  # a dry run changes nothing

    done = json.loads(cli("sweep-secrets", "--json").stdout)
    assert done["masked"] == dry["masked"]
    stored = _stored_values(redis_client, namespace)
    assert PASSWORD not in stored and "1111\u20631111" not in stored
    row = coordinator.get_memory(U, MemoryType.EPISODIC, mem.id)
    assert row["text"] == "PGPASSWORD=[password] for the reports"
    assert "my card is [card number]" in [m.content for m in coordinator.recent_messages(U, "s1")]

    again = json.loads(cli("sweep-secrets", "--json").stdout)
    assert again["masked"] == {"episodic": 0, "semantic": 0, "procedural": 0, "short_term": 0}
