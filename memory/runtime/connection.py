"""One way to get a Redis client: `connect(settings)`: REDIS_URL, or else the embedded Redis Stack
(`memory.runtime.server`). The server must answer PING, be Redis 7.4 or newer and have the
`search` and `ReJSON` modules; anything else becomes `StoreUnavailableError`."""

from __future__ import annotations

import time

import redis

from memory.config import PROJECT_ROOT, Settings
from memory.errors import StoreUnavailableError
from memory.replies import as_str
from memory.runtime.server import EmbeddedRedis

REQUIRED_MODULES = ("search", "ReJSON")
#: the oldest server the stores work on (FLOAT16 vector fields, field expiry)
MIN_REDIS = (7, 4)
LOADING_TIMEOUT_S = 60.0
#: One bulk transaction that cannot be split without losing its all-or-nothing (a purge of
#: every record of a user) may take this long.
BULK_TIMEOUT_S = 600.0


def connect(settings: Settings) -> redis.Redis:
    """A checked client (bytes responses: RedisVL needs them for vectors)."""
    if settings.redis_url:
        url = settings.redis_url
        hint = (
            f"check that a Redis Stack runs at {url} (`docker compose up -d redis`), "
            "or unset REDIS_URL to use the embedded server"
        )
    else:
        server = EmbeddedRedis(settings.redis_data_dir, settings.redis_port, PROJECT_ROOT)
        url = server.start()
        hint = "start it with `python -m memory redis start` or set REDIS_URL"
    try:
        client = redis.Redis.from_url(
            url,
            decode_responses=False,
            socket_connect_timeout=5,
            # Set, not left to redis-py's default: every command is short by design (bulk
            # work is chunked), so a command that takes longer is reported as such.
            socket_timeout=settings.redis_timeout_s,
            health_check_interval=30,
        )
    except ValueError as e:
        raise StoreUnavailableError(f"REDIS_URL {url!r} is not a valid Redis URL: {e}") from e
    try:
        _ping(client)
        names = {as_str(m[b"name"]) for m in client.module_list()}
        version = as_str(client.info("server").get("redis_version", ""))
    except redis.BusyLoadingError as e:
        client.close()  # it answers, so "not reachable" would send the user to start it again
        raise StoreUnavailableError(
            f"Redis at {url} is still loading its data after {LOADING_TIMEOUT_S:.0f} s "
            "(a large data set takes a while): wait a little, then try again."
        ) from e
    except redis.AuthenticationError as e:
        client.close()
        raise StoreUnavailableError(
            f"Redis at {url} refused the credentials ({e}): fix the user/password in REDIS_URL."
        ) from e
    except redis.RedisError as e:
        client.close()
        raise StoreUnavailableError(f"Cannot reach Redis at {url} ({e}): {hint}.") from e
    if too_old(version):
        client.close()
        raise StoreUnavailableError(
            f"Redis at {url} is version {version}; this app needs Redis "
            f"{'.'.join(map(str, MIN_REDIS))} or newer (Redis Stack 7.4: vectors are stored "
            "as FLOAT16, and chat titles expire per field): upgrade it (image "
            "redis/redis-stack-server:7.4.0-v3 or Redis 8), or unset REDIS_URL to use the "
            "embedded server."
        )
    missing = [m for m in REQUIRED_MODULES if m not in names]
    if missing:
        client.close()
        raise StoreUnavailableError(
            f"Redis at {url} lacks the module(s) {', '.join(missing)}: use Redis Stack "
            "(image redis/redis-stack-server, or Redis 8) or unset REDIS_URL to use the "
            "embedded server."
        )
    return client


def bulk_client(client: redis.Redis, timeout_s: float = BULK_TIMEOUT_S) -> redis.Redis:
    """A client of the same server, with the same settings but a socket timeout that fits one
    bulk transaction (the caller closes it). Interactive calls keep the short one."""
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "socket_timeout": timeout_s}
    return redis.Redis(connection_pool=redis.ConnectionPool(pool.connection_class, **kwargs))


def too_old(version: str) -> bool:
    """Whether a server's `redis_version` is below MIN_REDIS (an unreadable one is not
    judged: the commands themselves will say)."""
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) < MIN_REDIS


def _ping(client: redis.Redis) -> None:
    """PING, waiting while the server is still loading its data set."""
    deadline = time.monotonic() + LOADING_TIMEOUT_S
    while True:
        try:
            client.ping()
            return
        except redis.BusyLoadingError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)
