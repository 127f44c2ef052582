"""The chat agent: Ollama chat with auto-recall, tools, procedural learning, memory extraction."""

from __future__ import annotations

from agent.types import (
    ExtractionOutcome,
    LLMStatus,
    StoredMemory,
    ToolCallRecord,
    TurnEvent,
    TurnResult,
)

__all__ = [
    "ExtractionOutcome",
    "LLMStatus",
    "StoredMemory",
    "ToolCallRecord",
    "TurnEvent",
    "TurnResult",
]
