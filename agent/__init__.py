"""The chat agent: Ollama chat with auto-recall, tools, procedural learning, memory extraction.

from agent import ChatAgent
agent = ChatAgent(settings, MemoryCoordinator.from_settings(settings))
for event in agent.run_turn("alice", "s1", "How did I sleep this week?"):
    ...
"""

from __future__ import annotations

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.types import (
    ExtractionOutcome,
    LLMStatus,
    StoredMemory,
    ToolCallRecord,
    TurnEvent,
    TurnResult,
)

__all__ = [
    "AgentSettings",
    "ChatAgent",
    "ExtractionOutcome",
    "LLMStatus",
    "StoredMemory",
    "ToolCallRecord",
    "TurnEvent",
    "TurnResult",
]
