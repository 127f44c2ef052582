"""Where Redis comes from: a connection to `REDIS_URL`, or the embedded Redis Stack server."""

from memory.runtime.connection import connect, drop_namespace
from memory.runtime.server import EmbeddedRedis, free_port

__all__ = ["EmbeddedRedis", "connect", "drop_namespace", "free_port"]
