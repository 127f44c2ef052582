"""Another Redis on the configured port (restarted on another data folder): the page says what
happened and what to check, in words (not "failed unexpectedly"), and the next turn works."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT
from memory.runtime.server import EmbeddedRedis
from tests.app.conftest import no_errors


def test_another_redis_on_the_port_is_explained_then_chat_works(
    app_env, make_app, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    port = free_port()
    first = EmbeddedRedis(tmp_path / "first", port, PROJECT_ROOT)
    second = EmbeddedRedis(tmp_path / "second", port, PROJECT_ROOT)
    first.start()
    try:
        monkeypatch.setenv("REDIS_URL", first.url)
        at = make_app("app.py", user="alice")
        at.chat_input(key="chat_input").set_value("Remember that I am vegetarian").run()
        no_errors(at)

        first.stop()
        second.start()  # same port, another (empty) data folder
        at.run()
        assert not at.exception
        shown = "\n".join(str(e.value) for e in at.error)
        assert "is not the one your memories were on" in shown
        assert "REDIS_URL" in shown and "failed unexpectedly" not in shown
        assert "no such index" not in shown

        # The answer comes, but nothing is stored on the replacement until it is confirmed.
        at.chat_input(key="chat_input").set_value("Hello again").run()
        assert not at.exception
        said = [(m.name, " ".join(str(e.value) for e in m.markdown)) for m in at.chat_message]
        assert "You said: Hello again" in said[-1][1]
        assert any("Not saved" in e.value and "redis confirm" in e.value for e in at.error)

        import subprocess
        import sys

        confirm = subprocess.run(
            [sys.executable, "-m", "memory", "redis", "confirm", "--json"],
            cwd=PROJECT_ROOT,
            env={**os.environ, "REDIS_URL": second.url},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert confirm.returncode == 0 and '"confirmed": true' in confirm.stdout, confirm.stderr
        at.chat_input(key="chat_input").set_value("Hello once more").run()
        no_errors(at)
        said = [(m.name, " ".join(str(e.value) for e in m.markdown)) for m in at.chat_message]
        assert said[-2][0] == "user" and "You said: Hello once more" in said[-1][1]
        assert "vegetarian" not in str(said)  # the history is the new server's (empty)
    finally:
        first.stop()
        second.stop()
