"""AppTest fixtures: each test runs the real pages against the session's Redis Stack, in its
own MEMORY_NAMESPACE, with OLLAMA_HOST pointing at the fake Ollama server (or nowhere).

`ui.resources` caches one coordinator per distinct settings, so every test gets a coordinator
of its own namespace, and `coordinator` below is the very instance the pages use.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from benchmarks.common import free_port
from memory.config import Settings
from tests.fakes.fake_ollama import FakeOllama

TIMEOUT_S = 30


@pytest.fixture(autouse=True)
def _release_resources() -> Iterator[None]:
    """Close the coordinator and agent a test created (each one holds an embedding model)."""
    yield
    st.cache_resource.clear()  # each cache's on_release closes what it held
    gc.collect()  # AppTest keeps reference cycles: free the models now, not at some later GC


@pytest.fixture
def app_env(
    monkeypatch: pytest.MonkeyPatch, redis_url: str, namespace: str, shared_fake_ollama: FakeOllama
) -> Settings:
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("MEMORY_NAMESPACE", namespace)
    monkeypatch.setenv("OLLAMA_HOST", shared_fake_ollama.url)
    monkeypatch.setenv("OLLAMA_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("MAINTENANCE_INTERVAL_S", "0")  # no background maintenance in tests
    return Settings()


@pytest.fixture
def offline_env(app_env: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Like app_env, but nothing listens at OLLAMA_HOST (memory-only mode)."""
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    return Settings()


@pytest.fixture
def coordinator(app_env: Settings) -> Any:
    from ui import resources

    return resources.get_coordinator()


@pytest.fixture
def agent(app_env: Settings) -> Any:
    from ui import resources

    return resources.get_agent()


@pytest.fixture
def make_app() -> Callable[..., AppTest]:
    """`make_app("pages/memories.py", user="alice")`: an AppTest of a page, already run."""

    def make(script: str = "app.py", *, user: str = "alice", session: str = "s-test") -> AppTest:
        at = AppTest.from_file(f"../../{script}", default_timeout=TIMEOUT_S)
        at.session_state["user_id"] = user
        at.session_state["session_id"] = session
        return at.run()

    return make


def texts(at: AppTest, element: str = "markdown") -> str:
    """All the text of one element type on the page, joined (for `in` assertions)."""
    return "\n".join(str(getattr(e, "value", "")) for e in at.get(element))


def table_with(at: AppTest, column: str) -> Any:
    """The first table (as a DataFrame) having `column` (read-only tables have no key)."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with a column {column!r}")


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
