"""The memory system: the four CoALA memory types on Redis Stack + RedisVL.

No Streamlit and no LLM chat in here; the agent and the UI use `MemoryCoordinator`.
"""

from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import (
    EmbedderError,
    EmbeddingModelMismatchError,
    ImportFileError,
    InvalidInputError,
    MemorySystemError,
    NotFoundError,
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

__all__ = [
    "ChatMessage",
    "EmbedderError",
    "EmbeddingModelMismatchError",
    "EpisodicMemory",
    "EventType",
    "ImportFileError",
    "InvalidInputError",
    "MemoryContext",
    "MemoryCoordinator",
    "MemorySystemError",
    "MemoryType",
    "NotFoundError",
    "ProceduralPattern",
    "ProceduralSuggestion",
    "RecallHit",
    "ScoreParts",
    "SemanticFact",
    "Settings",
    "StoreUnavailableError",
]
