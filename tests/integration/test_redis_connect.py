"""Opening the store's connection as people meet it: the embedded server started when no
REDIS_URL is set, wrong credentials, a server without Redis Stack's modules, one still loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import redis

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT, Settings
from memory.errors import StoreUnavailableError
from memory.runtime import connection
from memory.runtime.server import EmbeddedRedis


def test_without_a_redis_url_the_embedded_server_is_started(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(_env_file=None, redis_url=None, redis_data_dir=tmp_path, redis_port=port)
    server = EmbeddedRedis(tmp_path, port, PROJECT_ROOT)
    try:
        client = connection.connect(settings)
        assert client.ping()
        assert server.status()["pid"] is not None  # ours, in the data folder given
        client.close()
    finally:
        server.stop()


def test_wrong_credentials_say_to_fix_them(redis_url: str) -> None:
    url = redis_url.replace("redis://", "redis://nobody:wrong@")
    with pytest.raises(StoreUnavailableError, match="refused the credentials"):
        connection.connect(Settings(_env_file=None, redis_url=url))


def test_a_server_without_the_modules_says_to_use_redis_stack(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis.Redis, "module_list", lambda self: [])  # a plain Redis's answer
    with pytest.raises(StoreUnavailableError, match="lacks the module.*use Redis Stack"):
        connection.connect(Settings(_env_file=None, redis_url=redis_url))


def test_a_server_that_finishes_loading_is_waited_for(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers: list[Any] = [redis.BusyLoadingError("loading"), True]
    real_ping = redis.Redis.ping

    def ping(self: redis.Redis, **kwargs: Any) -> Any:
        answer = answers.pop(0) if answers else None
        if isinstance(answer, Exception):
            raise answer
        return real_ping(self, **kwargs)

    monkeypatch.setattr(redis.Redis, "ping", ping)
    client = connection.connect(Settings(_env_file=None, redis_url=redis_url))
    assert answers == [] and client.ping()
    client.close()
