"""Health check: Redis reachable, modules present, indexes ready, embedder loaded."""

from __future__ import annotations

import time
from typing import Any

import redis
from redisvl.exceptions import RedisVLError

from memory.boundary import START_HINT
from memory.embeddings import CachedEmbedder
from memory.replies import as_str
from memory.stores import Stores

REQUIRED_MODULES = {"search", "ReJSON"}


def check_health(stores: Stores, embedder: CachedEmbedder) -> dict[str, Any]:
    checks: dict[str, dict[str, Any]] = {}
    r = stores.client
    t = time.perf_counter()
    try:
        r.ping()
        info = r.info("server")
        checks["redis"] = {
            "ok": True,
            "version": info.get("redis_version"),
            "ping_ms": round((time.perf_counter() - t) * 1000, 3),
        }
        mods = {as_str(m[b"name"]) for m in r.module_list()}
        missing = REQUIRED_MODULES - mods
        checks["modules"] = {"ok": not missing, "loaded": sorted(mods), "missing": sorted(missing)}
        for name, idx in (
            ("episodic", stores.episodic.index),
            ("semantic", stores.semantic.index),
            ("procedural", stores.procedural.index),
        ):
            try:
                inf = idx.info()
                checks[f"index_{name}"] = {
                    "ok": not int(inf.get("indexing", 0)),
                    "docs": int(inf.get("num_docs", 0)),
                    "indexing": bool(int(inf.get("indexing", 0))),
                    "failures": int(inf.get("hash_indexing_failures", 0)),
                }
            except (redis.RedisError, RedisVLError) as e:  # RedisVL wraps "Unknown index name"
                checks[f"index_{name}"] = {"ok": False, "error": str(e)}
    except redis.RedisError as e:
        checks["redis"] = {
            "ok": False,
            "error": f"{e}. {START_HINT}",
        }
    try:
        t = time.perf_counter()
        vec = embedder.embed("health check")
        checks["embedder"] = {
            "ok": vec.shape[0] == embedder.dims,
            "model": embedder.model_id,
            "dims": embedder.dims,
            "embed_ms": round((time.perf_counter() - t) * 1000, 3),
        }
    except Exception as e:  # any embedder failure is a health failure, not a crash
        checks["embedder"] = {"ok": False, "error": str(e)}
    return {"ok": all(c.get("ok") for c in checks.values()), "checks": checks}
