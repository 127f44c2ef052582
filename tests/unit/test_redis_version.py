"""A server older than Redis 7.4 is refused at connect with what to run: FLOAT16 vector fields
(RediSearch 2.10) and field expiry (HEXPIRE) need it, and on an older server the vector
conversion would drop indexes it cannot create again."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from memory.config import Settings
from memory.errors import StoreUnavailableError
from memory.runtime import connection


@pytest.mark.parametrize(
    ("version", "old"),
    [("7.2.5", True), ("6.2.14", True), ("7.4.1", False), ("8.0.2", False), ("", False)],
)
def test_too_old(version: str, old: bool) -> None:
    assert connection.too_old(version) is old


def test_connect_refuses_a_redis_7_2_and_says_what_to_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redis.Redis, "ping", lambda *_a, **_k: True)
    monkeypatch.setattr(
        redis.Redis,
        "module_list",
        lambda *_a, **_k: [{b"name": b"search"}, {b"name": b"ReJSON"}],
    )

    def info(*_args: Any, **_kwargs: Any) -> dict[str, Any]:
        return {"redis_version": "7.2.4"}

    monkeypatch.setattr(redis.Redis, "info", info)
    settings = Settings(_env_file=None, redis_url="redis://127.0.0.1:6390")
    with pytest.raises(StoreUnavailableError) as err:
        connection.connect(settings)
    message = str(err.value)
    assert "version 7.2.4" in message and "7.4 or newer" in message
    assert "redis-stack-server:7.4.0-v3" in message
