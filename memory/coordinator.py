"""The memory coordinator: the one entry point the agent and the UI use.

SKELETON: signatures are final; bodies are being written.
"""

from __future__ import annotations

from typing import Any, Literal

from memory.models import (
    ChatMessage,
    EpisodicMemory,
    EventType,
    MemoryContext,
    MemoryType,
    ProceduralPattern,
    RecallHit,
    SemanticFact,
)


class MemoryCoordinator:
    """Built once per process: `MemoryCoordinator.from_settings(settings)`."""

    @classmethod
    def from_settings(cls, settings: Any) -> MemoryCoordinator:  # connects, opens indexes
        raise NotImplementedError

    # ---- recall ------------------------------------------------------------------------
    def retrieve_all_context(
        self,
        user_id: str,
        session_id: str,
        query: str,
        *,
        include_episodic: bool = True,
        include_semantic: bool = True,
        include_procedural: bool = True,
        include_short_term: bool = True,
        k_episodic: int = 5,
        k_semantic: int = 3,
        k_short_term: int = 10,
        prompt_token_budget: int | None = None,
    ) -> MemoryContext: ...

    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        event_types: list[EventType] | None = None,
        tags: list[str] | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        min_score: float | None = None,
    ) -> list[RecallHit]: ...

    # ---- writing -----------------------------------------------------------------------
    def store_interaction(
        self,
        user_id: str,
        session_id: str,
        user_message: str,
        assistant_response: str,
        *,
        tools_used: list[str] | None = None,
        execution_time_ms: float = 0.0,
        success_score: float | None = None,
        store_episode: bool = True,
    ) -> dict[str, Any]:
        """Returns {"short_term": [msg ids], "episodic": id|None, "procedural": pattern id|None}."""
        ...

    def add_episodic(
        self,
        user_id: str,
        text: str,
        *,
        event_type: EventType | str = EventType.PREFERENCE,
        context: str = "",
        metadata: dict[str, Any] | None = None,
        tags: list[str] | None = None,
        importance: float = 0.5,
        timestamp_ms: int | None = None,
        expires_at_ms: int | None = None,
        session_id: str = "",
        supersedes: str | None = None,
    ) -> EpisodicMemory: ...

    def add_semantic(
        self,
        text: str,
        *,
        category: str = "general",
        fact_type: str = "general",
        context: str = "",
        source: str = "user",
        added_by: str = "",
    ) -> SemanticFact: ...

    def find_similar_episodic(
        self, user_id: str, text: str, *, k: int = 5
    ) -> list[RecallHit]:
        """Nearest episodic memories by vector only (for de-duplication and supersession)."""
        ...

    def supersede(self, user_id: str, old_id: str, new_id: str) -> None:
        """Mark old as replaced by new: hidden from recall, kept as history."""
        ...

    def record_procedure(
        self,
        user_id: str,
        query: str,
        tools: list[str],
        *,
        success_score: float,
        execution_time_ms: float,
    ) -> ProceduralPattern: ...

    def add_message(self, user_id: str, session_id: str, role: str, content: str) -> ChatMessage: ...

    def recent_messages(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]: ...

    # ---- editor ------------------------------------------------------------------------
    def list_memories(
        self,
        user_id: str,
        memory_type: MemoryType | str,
        *,
        event_types: list[str] | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        pinned: bool | None = None,
        include_superseded: bool = True,
        sort_by: str = "timestamp",
        descending: bool = True,
        page: int = 1,
        page_size: int = 50,
        session_id: str | None = None,
    ) -> tuple[list[dict[str, Any]], int]:
        """(rows, total). Rows are the records as dicts with an `id` and a `text` key."""
        ...

    def get_memory(self, user_id: str, memory_type: MemoryType | str, memory_id: str) -> dict[str, Any]: ...

    def update_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, **changes: Any
    ) -> dict[str, Any]:
        """Re-embeds when the text changes. Episodic: text/description, context, event_type,
        tags, metadata, importance, expires_at, pinned. Semantic: text/fact, category, fact_type,
        context, source, pinned. Procedural: pinned."""
        ...

    def delete_memory(self, user_id: str, memory_type: MemoryType | str, memory_id: str) -> None: ...

    def pin(self, user_id: str, memory_type: MemoryType | str, memory_id: str, pinned: bool = True) -> None: ...

    def list_users(self) -> list[str]: ...

    def list_sessions(self, user_id: str) -> list[str]: ...

    # ---- housekeeping ------------------------------------------------------------------
    def get_memory_stats(self, user_id: str | None = None, session_id: str | None = None) -> dict[str, Any]: ...

    def clear_session_memories(self, user_id: str, session_id: str) -> int: ...

    def clear_user_memories(self, user_id: str) -> dict[str, int]: ...

    def export_user(self, user_id: str) -> dict[str, Any]: ...

    def import_user(self, data: dict[str, Any] | str | bytes, *, mode: Literal["merge", "replace"] = "merge") -> dict[str, int]: ...

    def health(self) -> dict[str, Any]: ...

    @property
    def metrics(self) -> Any:  # MetricsRecorder
        ...
