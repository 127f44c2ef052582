"""Shared, thread-safe resources of the app: the only module that uses `st.cache_resource`.

Keyed by the settings, so a test pointing `REDIS_URL` elsewhere gets its own coordinator;
failures are not cached, so *Retry* works once Redis is up."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import streamlit as st

from agent.config import AgentSettings
from memory.config import Settings
from memory.service import MemoryService
from memory.writing import WritePolicy

if TYPE_CHECKING:
    import pandas as pd

    from agent import ChatAgent
    from memory import Maintenance, MaintenanceScheduler

log = logging.getLogger(__name__)
T = TypeVar("T")


def get_settings() -> Settings:
    """The project's settings as the environment says now (validated by pydantic)."""
    return _settings(_env_key())


def get_coordinator() -> MemoryService:
    """The memory coordinator for the current settings (connects and opens indexes once)."""
    settings = get_settings()
    return _coordinator(settings.model_dump_json(), settings)


def get_writer() -> WritePolicy:
    """The one write policy of the cached coordinator: the sidebar, the Memories page and the
    chat agent share it (and its per-user lock)."""
    settings = get_settings()
    return _writer(settings.model_dump_json(), get_coordinator(), settings)


def get_agent() -> ChatAgent:
    """The chat agent for the current settings, sharing the cached coordinator and writer."""
    settings = get_settings()
    agent_settings = AgentSettings()
    key = settings.model_dump_json() + agent_settings.model_dump_json()
    return _agent(key, settings, agent_settings, get_coordinator(), get_writer())


def start_maintenance() -> None:
    """Start the background maintenance thread once per process (MAINTENANCE_INTERVAL_S;
    0 turns it off). It runs beside the answers, never on their path."""
    settings = get_settings()
    if settings.maintenance_interval_s > 0:
        _scheduler(settings.model_dump_json(), get_maintenance(get_agent()))


def get_maintenance(agent: ChatAgent | None = None) -> Maintenance:
    """Maintenance on the cached coordinator; with the agent, an accepted merge may get its
    text from the model, as in the background runs."""
    settings = get_settings()
    # The agent's settings (its model) are part of the key, as for the agent itself.
    key = settings.model_dump_json() + (
        AgentSettings().model_dump_json() if agent is not None else ""
    )
    return _maintenance(key, get_coordinator(), agent)


def shared_figure(build: Callable[[pd.DataFrame], Any], frame: pd.DataFrame) -> Any:
    """`build(frame)`, once per process while the frame's content is the same, shared by every
    session and rerun (Streamlit only serializes a figure it draws); a write changes the frame,
    so the figure is built again (docs/performance.md)."""
    content = frame.to_json(orient="split", date_format="iso", default_handler=str)
    digest = hashlib.sha256(content.encode()).hexdigest()
    return _figure(f"{build.__module__}.{build.__qualname__}", digest, build, frame)


def per_version(name: str, version: str, load: Callable[[], T]) -> T:
    """`load()`, once per process while `version` is the same (a user's write counter: a write
    changes it), shared by every session and rerun; at most a minute old, for what changes
    without a write (a memory's key expiring). The result is shared: never change it."""
    return cast(T, _versioned(name, version, load))


# --- cached factories -------------------------------------------------------------------


def _env_key() -> tuple[tuple[str, str], ...]:
    """The environment variables Settings and AgentSettings may read: a cache key that changes
    when they do (keys go first: Streamlit does not hash `_` arguments)."""
    import os

    names = {name.upper() for name in Settings.model_fields}
    names |= {f"AGENT_{name.upper()}" for name in AgentSettings.model_fields}
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.upper() in names))


@st.cache_resource(show_spinner=False, max_entries=16)
def _settings(env: tuple[tuple[str, str], ...]) -> Settings:  # env: the cache key
    return Settings()


@st.cache_resource(
    show_spinner="Opening the memory store…",
    max_entries=4,
    on_release=lambda coordinator: coordinator.close(),
)
def _coordinator(key: str, _settings: Settings) -> MemoryService:
    from memory import MemoryCoordinator

    log.info("Opening the memory coordinator (namespace %s)", _settings.memory_namespace)
    return MemoryCoordinator.from_settings(_settings)


@st.cache_resource(show_spinner=False, max_entries=4)
def _writer(key: str, _coordinator: MemoryService, _settings: Settings) -> WritePolicy:
    return WritePolicy(
        _coordinator, dedup_threshold=_settings.dedup_threshold, pii_policy=_settings.pii_policy
    )


@st.cache_resource(show_spinner=False, max_entries=4, on_release=lambda agent: agent.close())
def _agent(
    key: str,
    _settings: Settings,
    _agent_settings: AgentSettings,
    _coordinator: MemoryService,
    _writer: WritePolicy,
) -> ChatAgent:
    from agent import ChatAgent
    from memory import Maintenance, MemoryCoordinator

    # Turns that leave the prompt are summarised through Maintenance (it needs the stores).
    summaries = (
        Maintenance.of(_coordinator) if isinstance(_coordinator, MemoryCoordinator) else None
    )
    return ChatAgent(
        _settings,
        _coordinator,
        agent_settings=_agent_settings,
        summaries=summaries,
        writer=_writer,
    )


@st.cache_resource(show_spinner=False, max_entries=8)
def _maintenance(key: str, _coordinator: MemoryService, _agent: ChatAgent | None) -> Maintenance:
    from agent.merging import LLMJudge, LLMMerger
    from agent.summarising import LLMSummariser
    from memory import Maintenance, MemoryCoordinator

    # Maintenance works on the coordinator's stores, not through the MemoryService protocol.
    assert isinstance(_coordinator, MemoryCoordinator)  # the cached factory above builds one
    if _agent is None:  # no model: summaries that fall due wait for one
        return Maintenance.of(_coordinator)
    return Maintenance.of(
        _coordinator,
        merger=LLMMerger(_agent.llm, _agent.default_model),
        # a summary the chat does not support is not kept, as at a chat's end
        summariser=LLMSummariser(_agent.llm, _agent.default_model, grounding=_agent.grounded),
        judge=LLMJudge(_agent.llm, _agent.default_model),
    )


@st.cache_resource(show_spinner=False, max_entries=4, on_release=lambda s: s.stop())
def _scheduler(key: str, _maint: Maintenance) -> MaintenanceScheduler:
    from memory import MaintenanceScheduler

    interval = _maint.settings.maintenance_interval_s
    return MaintenanceScheduler(_maint, interval).start()


@st.cache_resource(show_spinner=False, max_entries=32)
def _figure(name: str, digest: str, _build: Callable[[Any], Any], _frame: Any) -> Any:
    return _build(_frame)  # name and digest: the key (arguments with a leading _ are not)


@st.cache_resource(show_spinner=False, max_entries=64, ttl=60)
def _versioned(name: str, version: str, _load: Callable[[], Any]) -> Any:
    return _load()  # name and version: the key


@st.cache_resource(show_spinner=False)
def warm_up(_coordinator: MemoryService) -> threading.Thread:
    """After a page has drawn, in the background, once per process: open the embedding model
    (the first recall needs it), then import the chart library and build one figure (the
    first Stats page's): the first page does not wait for them (docs/performance.md)."""
    from memory import MemoryCoordinator

    def work() -> None:
        if isinstance(_coordinator, MemoryCoordinator):
            try:
                _coordinator.embedder.load()
            except Exception:  # noqa: BLE001 - the first embedding tries again, and says why
                log.exception("Could not open the embedding model")
        import pandas as pd
        import plotly.express as px

        px.bar(pd.DataFrame({"day": [0], "n": [0]}), x="day", y="n")

    thread = threading.Thread(target=work, name="warm-up", daemon=True)
    thread.start()
    return thread
