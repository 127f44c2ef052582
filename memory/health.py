"""Health check: Redis reachable, modules present, indexes ready, embedder loaded."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import redis

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

REQUIRED_MODULES = {"search", "ReJSON"}


def check_health(coord: MemoryCoordinator) -> dict[str, Any]:
    checks: dict[str, dict[str, Any]] = {}
    r = coord.redis
    t = time.perf_counter()
    try:
        r.ping()
        info = r.info("server")
        checks["redis"] = {
            "ok": True,
            "version": info.get("redis_version"),
            "ping_ms": round((time.perf_counter() - t) * 1000, 3),
        }
        mods = {
            m[b"name"].decode() if isinstance(m[b"name"], bytes) else m[b"name"]
            for m in r.module_list()
        }
        missing = REQUIRED_MODULES - mods
        checks["modules"] = {"ok": not missing, "loaded": sorted(mods), "missing": sorted(missing)}
        for name, idx in (
            ("episodic", coord.episodic.index),
            ("semantic", coord.semantic.index),
            ("procedural", coord.procedural.index),
        ):
            try:
                inf = idx.info()
                checks[f"index_{name}"] = {
                    "ok": not int(inf.get("indexing", 0)),
                    "docs": int(inf.get("num_docs", 0)),
                    "indexing": bool(int(inf.get("indexing", 0))),
                    "failures": int(inf.get("hash_indexing_failures", 0)),
                }
            except redis.RedisError as e:
                checks[f"index_{name}"] = {"ok": False, "error": str(e)}
    except redis.RedisError as e:
        checks["redis"] = {
            "ok": False,
            "error": f"{e}. Start it with `python -m memory redis start` or check REDIS_URL.",
        }
    try:
        t = time.perf_counter()
        vec = coord.embedder.embed("health check")
        checks["embedder"] = {
            "ok": vec.shape[0] == coord.embedder.dims,
            "model": coord.embedder.model_id,
            "dims": coord.embedder.dims,
            "embed_ms": round((time.perf_counter() - t) * 1000, 3),
        }
    except Exception as e:  # any embedder failure is a health failure, not a crash
        checks["embedder"] = {"ok": False, "error": str(e)}
    return {"ok": all(c.get("ok") for c in checks.values()), "checks": checks}
