"""Where Redis comes from: a connection to `REDIS_URL`, or the embedded Redis Stack server."""

from memory.runtime.connection import connect
from memory.runtime.server import EmbeddedRedis

__all__ = ["EmbeddedRedis", "connect"]
