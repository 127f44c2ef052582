"""The memory system as the agent and the UI see it: `AgentMemory` (the turn and the memory
tools) and `MemoryService` (adds the editor's, the pages' and the stats' part), implemented by
the coordinator and the agent tests' fake. Every method raises only `memory.errors`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict, Unpack

from memory.models import (
    ChatMessage,
    EpisodicMemory,
    MemoryContext,
    MemoryType,
    ProfileLine,
    RecallHit,
    SemanticFact,
    Usage,
    UsedIn,
)
from memory.queries import ListQuery, RecallOptions, SearchFilter

if TYPE_CHECKING:
    from memory.metrics import MetricsRecorder


class EpisodicStats(TypedDict):
    memory_count: int
    #: of them paused (kept, never recalled); in a user's stats only
    paused: NotRequired[int]


class SemanticStats(TypedDict):
    fact_count: int


class ProceduralStats(TypedDict, total=False):
    total_procedures: int
    total_executions: int
    overall_avg_score: float | None
    recommended: int


class ShortTermStats(TypedDict, total=False):
    sessions: int
    message_count: int
    ttl_seconds: int


class MemoryStats(TypedDict):
    """Counts per memory type; the procedural and short-term parts are per user. `users`
    (how many people use the store) only in the store-wide stats (no user)."""

    episodic: EpisodicStats
    semantic: SemanticStats
    procedural: ProceduralStats
    short_term: ShortTermStats
    user_id: str | None
    session_id: str | None
    users: NotRequired[int]


class ImportOptions(TypedDict, total=False):
    """How an export file is imported (all optional)."""

    #: merge: keep what the user has; replace: the user ends with exactly the file's records
    mode: Literal["merge", "replace"]
    #: import under this user instead of the file's
    user_id: str | None
    #: hears (stage, done, total) as the embedding and the writing go on
    progress: Callable[[str, int, int], None] | None


class StoredInteraction(TypedDict, total=False):
    """What `store_interaction` wrote: message ids, the episode id, the procedure."""

    short_term: list[str]
    episodic: str | None
    procedural: str | None


class AgentMemory(Protocol):
    """What the agent uses: recall before the answer, writes after it, the memory tools."""

    def retrieve_all_context(
        self, user_id: str, session_id: str, query: str, options: RecallOptions = RecallOptions()
    ) -> MemoryContext: ...

    def search(
        self,
        user_id: str,
        query: str,
        memory_type: MemoryType | str = MemoryType.EPISODIC,
        *,
        k: int = 10,
        where: SearchFilter | None = None,
    ) -> list[RecallHit]: ...

    def find_similar_episodic(self, user_id: str, text: str, *, k: int = 5) -> list[RecallHit]: ...

    def add_episodic(
        self, user_id: str, text: str, *, supersedes: str | None = None, **fields: Any
    ) -> EpisodicMemory: ...

    def rescore_last_procedure(
        self, user_id: str, query: str, tools: list[str], success_score: float
    ) -> None: ...

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
        turn_id: str | None = None,
        used: Sequence[str] = (),
        episode_answer: str | None = None,
        memory_only: bool = False,
    ) -> StoredInteraction: ...

    def recent_messages(self, user_id: str, session_id: str, n: int = 50) -> list[ChatMessage]: ...

    def save_turn_details(
        self,
        user_id: str,
        session_id: str,
        turn_id: str,
        details: dict[str, Any],
        *,
        part: str = "",
    ) -> None: ...

    def turn_details(
        self, user_id: str, session_id: str
    ) -> dict[str, dict[str, dict[str, Any]]]: ...

    def list_memories(
        self, user_id: str, memory_type: MemoryType | str, query: ListQuery | None = None
    ) -> tuple[list[dict[str, Any]], int]: ...

    # `as_admin` (here and in delete_memory): may change shared facts (knowledge file,
    # shared by an admin) and share one; `paused=` pauses an episodic memory (kept, listed,
    # never recalled) or resumes it.
    def update_memory(
        self,
        user_id: str,
        memory_type: MemoryType | str,
        memory_id: str,
        as_admin: bool = False,
        **changes: Any,
    ) -> dict[str, Any]: ...

    def delete_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str, as_admin: bool = False
    ) -> None: ...

    def get_memory_stats(
        self, user_id: str | None = None, session_id: str | None = None
    ) -> MemoryStats: ...

    def count_event(self, name: str) -> None:
        """Count an event for the Stats page (buffered; never fails the caller)."""
        ...

    def user_profile(self, user_id: str) -> list[ProfileLine]:
        """The user profile's lines, best first (memory.user_profile)."""
        ...

    def text_similarity(self, a: str, b: str) -> float:
        """Cosine of the two texts' embeddings (the store's embedder, cached): how close in
        meaning, e.g. a model-made memory and what the user said."""
        ...


class MemoryHistoryAPI(Protocol):
    """A user's memories over time (memory.activity.MemoryHistory)."""

    def per_day(self, user_id: str) -> list[dict[str, Any]]:
        """Per day: memories created, replaced, merged, forgotten, expired (counts only)."""
        ...

    def undo_write(self, user_id: str, memory_id: str, replaced_id: str | None = None) -> None:
        """Delete a memory just stored; the one it replaced is recalled again."""
        ...


class SessionReads(Protocol):
    """A user's sessions and their titles (memory.stores.short_term.ShortTermStore)."""

    def sessions(self, user_id: str) -> list[str]: ...

    def titles(self, user_id: str) -> dict[str, str]: ...


class UsageReads(Protocol):
    """Which stored answers used which memory (memory.stores.usage.UsageRecords)."""

    def of(self, user_id: str) -> dict[str, Usage]: ...

    def answers(self, user_id: str, memory_id: str, limit: int = 5) -> list[UsedIn]: ...


class MemoryService(AgentMemory, Protocol):
    """Everything the UI uses on top of the agent's part: the editor, users and sessions,
    import/export, purges and the metrics of the Stats page. Reads the coordinator would only
    pass on go to the part: `short_term`, `usage`, `history`, `metrics`."""

    def add_semantic(self, text: str, **fields: Any) -> SemanticFact: ...

    def get_memory(
        self, user_id: str, memory_type: MemoryType | str, memory_id: str
    ) -> dict[str, Any]: ...

    def list_users(self) -> list[str]: ...

    def set_session_title(
        self, user_id: str, session_id: str, title: str, *, only_if_missing: bool = False
    ) -> bool:
        """Name a session; `only_if_missing` keeps an existing title. True when written."""
        ...

    def store_stopped_exchange(
        self,
        user_id: str,
        session_id: str,
        user_message: str,
        partial_answer: str,
        turn_id: str = "",
    ) -> list[str]:
        """A message and the answer the user stopped, marked `stopped` (short-term only);
        `turn_id`: the key its details are kept under."""
        ...

    def gone_memories(self, user_id: str, memory_ids: list[str]) -> set[str]:
        """Which of these episodic memories of the user are gone (forgotten, deleted)."""
        ...

    def stats_version(self, user_id: str) -> str:
        """Changes after every write to the user's memories or to shared ones (a counter
        each): the key a page caches the user's figures under."""
        ...

    def clear_session_memories(self, user_id: str, session_id: str) -> int: ...

    def clear_user_memories(self, user_id: str) -> dict[str, int]: ...

    def export_user(self, user_id: str) -> dict[str, Any]: ...

    def import_user(
        self, data: dict[str, Any] | str | bytes, **options: Unpack[ImportOptions]
    ) -> dict[str, int]: ...

    @property
    def metrics(self) -> MetricsRecorder: ...

    @property
    def history(self) -> MemoryHistoryAPI: ...

    @property
    def short_term(self) -> SessionReads: ...

    @property
    def usage(self) -> UsageReads: ...

    def close(self) -> None: ...
