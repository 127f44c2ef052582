"""Pytest fixtures for the fake Ollama server and the agent's fakes.

Enable them for the whole suite with, in tests/conftest.py:

    pytest_plugins = ["tests.fakes.fixtures"]

Fixtures:
    fake_ollama       a started FakeOllama (127.0.0.1, free port), stopped after the test
    shared_fake_ollama one FakeOllama for the whole session (app and browser tests)
    closed_ollama_url an http://127.0.0.1:PORT where nothing listens (Ollama "down")
    fake_coordinator  an in-memory FakeCoordinator (agent unit tests)
    wellness_today    the fixed "today" of the synthetic wellness data in tests
    agent_factory     make_agent(coordinator, ollama_url, settings=..., **AgentSettings)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date

import pytest

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.tools.wellness import WellnessToolkit
from benchmarks.common import free_port
from memory.service import AgentMemory
from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A fresh fake server per test: scripted replies and model lists never leak."""
    with FakeOllama() as fake:
        yield fake


@pytest.fixture(scope="session")
def shared_fake_ollama() -> Iterator[FakeOllama]:
    """One fake server for the whole run, for tests whose app process outlives a test (the
    browser tests' `streamlit run`, the AppTest resources): two models pulled. Tests queue
    what they need and must not rely on what earlier tests left."""
    with FakeOllama(models=["qwen2.5:7b", "llama3.2:3b", "qwen3:4b"]) as fake:
        yield fake


@pytest.fixture
def closed_ollama_url() -> str:
    """Nothing listens there (connection refused), and no other test's server is handed the
    port meanwhile (free_port keeps it from other takers)."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def fake_coordinator() -> FakeCoordinator:
    return FakeCoordinator()


@pytest.fixture
def wellness_today() -> date:
    return date(2026, 11, 20)


def make_agent(
    coordinator: AgentMemory,
    ollama_url: str,
    *,
    settings: object | None = None,
    today: date = date(2026, 11, 20),
    **agent_config: object,
) -> ChatAgent:
    """A ChatAgent on `coordinator`, talking to the Ollama at `ollama_url`, with the wellness
    toolkit's data fixed at `today` and AgentSettings overridden by `agent_config`."""
    from memory.config import Settings

    base = settings if settings is not None else Settings(_env_file=None)
    s = base.model_copy(update={"ollama_host": ollama_url})  # type: ignore[attr-defined]
    cfg = AgentSettings(_env_file=None, **agent_config)  # type: ignore[arg-type]
    return ChatAgent(
        s,
        coordinator,
        toolkits=[WellnessToolkit(seed=cfg.wellness_seed, days=cfg.wellness_days, today=today)],
        agent_settings=cfg,
    )


@pytest.fixture
def agent_factory() -> Iterator[Callable[..., ChatAgent]]:
    """make_agent(...), closing every agent it built after the test."""
    built: list[ChatAgent] = []

    def factory(*args: object, **kwargs: object) -> ChatAgent:
        agent = make_agent(*args, **kwargs)  # type: ignore[arg-type]
        built.append(agent)
        return agent

    yield factory
    for agent in built:
        agent.close()
