"""`PageContext`: what every page gets from `page_setup` (settings, memory, agent, model)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import streamlit as st

from memory.config import Settings
from memory.service import MemoryService
from memory.writing import WritePolicy
from ui.auth import Viewer

if TYPE_CHECKING:
    from agent import ChatAgent, LLMStatus


@dataclass
class PageContext:
    settings: Settings
    coordinator: MemoryService
    writer: WritePolicy
    agent: ChatAgent | None
    llm_status: LLMStatus | None = None
    models: list[str] = field(default_factory=list)
    agent_error: str = ""
    # Fails closed: page_setup always passes the real viewer.
    viewer: Viewer = field(default_factory=lambda: Viewer(mode="none", is_admin=False))

    @functools.cached_property
    def write_version(self) -> str:
        """The user's write version (`MemoryService.stats_version`), read once per run: the
        sidebar's and the page's caches are checked against the same reading."""
        return self.coordinator.stats_version(self.user_id)

    @property
    def is_admin(self) -> bool:
        """May change shared facts and open any user (everyone in AUTH_MODE=none)."""
        return self.viewer.is_admin

    @property
    def user_id(self) -> str:
        return str(st.session_state.user_id)

    @property
    def session_id(self) -> str:
        return str(st.session_state.session_id)
