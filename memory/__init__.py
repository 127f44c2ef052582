"""The memory system: the four CoALA memory types on Redis Stack + RedisVL.

No Streamlit and no LLM chat in here; the agent and the UI use a `MemoryCoordinator` through
the `AgentMemory` / `MemoryService` protocols (`memory.service`); the layout is drawn in
docs/architecture.md. `MemoryCoordinator` is imported lazily, so `from memory import
MemoryType` (or importing `memory.service`) does not load redis-py and RedisVL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import memory.writing.secrets  # noqa: F401  (check_id refuses ids holding a secret from here on)
from memory.config import Settings
from memory.demo import (
    DEMO_QUESTIONS,
    DEMO_TAG,
    DEMO_USER,
    DemoReport,
    OwnMemoriesError,
    UserContents,
    demo_contents,
    load_demo,
    reset_demo,
)
from memory.errors import (
    EmbedderError,
    EmbeddingModelMismatchError,
    ImportFileError,
    InvalidInputError,
    MemorySystemError,
    NotAllowedError,
    NotFoundError,
    StoreFormatError,
    StoreReplacedError,
    StoreUnavailableError,
)
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    EventType,
    MemoryContext,
    MemoryType,
    ProceduralPattern,
    ProceduralSuggestion,
    RecallHit,
    ScoreParts,
    SemanticFact,
)
from memory.queries import ListQuery, SearchFilter
from memory.service import AgentMemory, MemoryService, MemoryStats
from memory.shape import safe_to_parse

if TYPE_CHECKING:
    from memory.admin.forget import TopicForget
    from memory.coordinator import MemoryCoordinator
    from memory.maintenance import Maintenance, MaintenanceScheduler


def __getattr__(name: str) -> Any:
    if name == "MemoryCoordinator":
        from memory.coordinator import MemoryCoordinator

        return MemoryCoordinator
    if name == "TopicForget":
        from memory.admin.forget import TopicForget

        return TopicForget
    if name in ("Maintenance", "MaintenanceScheduler"):
        from memory import maintenance

        return getattr(maintenance, name)
    raise AttributeError(f"module 'memory' has no attribute {name!r}")


__all__ = [
    "DEMO_QUESTIONS",
    "DEMO_TAG",
    "DEMO_USER",
    "AgentMemory",
    "ChatMessage",
    "DemoReport",
    "EmbedderError",
    "EmbeddingModelMismatchError",
    "EpisodicMemory",
    "EventType",
    "ImportFileError",
    "InvalidInputError",
    "ListQuery",
    "Maintenance",
    "MaintenanceScheduler",
    "MemoryContext",
    "MemoryCoordinator",
    "MemoryService",
    "MemoryStats",
    "MemorySystemError",
    "MemoryType",
    "NotAllowedError",
    "NotFoundError",
    "OwnMemoriesError",
    "ProceduralPattern",
    "ProceduralSuggestion",
    "RecallHit",
    "ScoreParts",
    "SearchFilter",
    "SemanticFact",
    "Settings",
    "StoreFormatError",
    "StoreReplacedError",
    "StoreUnavailableError",
    "TopicForget",
    "UserContents",
    "demo_contents",
    "load_demo",
    "reset_demo",
    "safe_to_parse",
]
