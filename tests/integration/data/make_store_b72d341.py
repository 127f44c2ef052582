"""Writes `store_b72d341.json`: a small store as the code of commit b72d341 wrote it, every key
with its type, value and TTL, and what recall answered on it then.

Run in a checkout of b72d341 (it uses that code's coordinator and a private embedded Redis):

    git worktree add --detach /tmp/b72d341 b72d341 && cd /tmp/b72d341 && \
        PYTHONPATH=. python /path/to/tests/integration/data/make_store_b72d341.py OUT.json

`tests/integration/test_store_format.py` loads the keys into a test namespace and checks that
today's code opens the store and answers the same.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.embeddings import OnnxMiniLMEmbedder
from memory.runtime.server import EmbeddedRedis
from benchmarks.common import free_port

NS = "storeb72d341"
U, S = "ada", "s1"
#: query -> the memory (by name) recall must put first
QUERIES = {
    "Which medicines must I avoid?": "allergy",
    "Where does my sister live?": "sister",
    "What is my gym locker number?": "locker",
}


def b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def dump(client: redis.Redis) -> list[dict[str, Any]]:
    """Every key of the namespace but the query cache and the metrics."""
    out = []
    for raw in sorted(client.scan_iter(match=f"{NS}*", count=1000)):
        key = raw.decode()
        if key.startswith(f"{NS}_embedcache") or ":metrics:" in key:
            continue
        kind = client.type(raw).decode()
        value: Any
        if kind == "hash":
            value = {b64(f): b64(v) for f, v in client.hgetall(raw).items()}
        elif kind == "list":
            value = [b64(v) for v in client.lrange(raw, 0, -1)]
        elif kind == "set":
            value = sorted(b64(v) for v in client.smembers(raw))
        elif kind == "zset":
            value = [[b64(m), s] for m, s in client.zrange(raw, 0, -1, withscores=True)]
        elif kind == "string":
            value = b64(client.get(raw) or b"")
        else:
            raise SystemExit(f"{key}: a {kind} (not written by a store)")
        out.append({"key": key, "type": kind, "ttl_ms": client.pttl(raw), "value": value})
    return out


def main(out: Path) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedRedis(Path(tmp), free_port(), PROJECT_ROOT)
        server.start()
        try:
            client = redis.Redis.from_url(server.url)
            settings = Settings(_env_file=None, redis_url=server.url, memory_namespace=NS)
            coord = MemoryCoordinator(client, OnnxMiniLMEmbedder(), settings)
            ids = {
                "allergy": coord.add_episodic(
                    U, "I am allergic to penicillin", event_type="health_event", tags=["allergy"]
                ).id,
                "sister": coord.add_episodic(U, "My sister lives in Lyon", importance=0.7).id,
                "paused": coord.add_episodic(U, "I like running in the rain").id,
            }
            old = coord.add_episodic(U, "My gym locker number is 312").id
            ids["locker"] = coord.add_episodic(
                U, "My gym locker number is 417", supersedes=old
            ).id
            ids["superseded"] = old
            coord.pause(U, ids["paused"])
            ids["fact"] = coord.add_semantic("Ginger may ease nausea.", added_by=U).id
            coord.store_interaction(
                U, S, "How many steps today?", "About 6,000.", tools_used=["get_activity"]
            )
            recall = {}
            for query in QUERIES:
                ctx = coord.retrieve_all_context(U, S, query)
                recall[query] = {
                    "episodic": [h.id for h in ctx.episodic],
                    "semantic": [h.id for h in ctx.semantic],
                    "short_term": [m.content for m in ctx.short_term],
                }
            coord.close()
            record = {"commit": commit, "namespace": NS, "user": U, "session": S}
            record |= {"ids": ids, "first": QUERIES, "recall": recall, "keys": dump(client)}
            out.write_text(json.dumps(record, indent=1) + "\n")
        finally:
            server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
