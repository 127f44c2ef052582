"""The chat agent: Ollama chat with auto-recall, tools, procedural learning, memory extraction
(its Python API: docs/architecture.md, "The agent's Python API")."""

from __future__ import annotations

from agent.loop import ChatAgent
from agent.types import LLMStatus, TurnEvent, TurnResult

__all__ = ["ChatAgent", "LLMStatus", "TurnEvent", "TurnResult"]
