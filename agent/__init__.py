"""The chat agent: Ollama chat with auto-recall, tools, procedural learning, memory extraction
(its Python API: docs/architecture.md, "The agent's Python API")."""

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
