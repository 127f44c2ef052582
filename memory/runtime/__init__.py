"""Where Redis comes from: a connection to `REDIS_URL`, or the embedded Redis Stack server."""

from memory.runtime.connection import connect

__all__ = ["connect"]
