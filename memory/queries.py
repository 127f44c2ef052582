"""The parameter objects of the memory service: a prompt's recall (`RecallOptions`), a page of
the editor's list (`ListQuery`) and a search's filters (`SearchFilter`), passed whole through
every layer, so a new option is one field here (docs/architecture.md, "Listing and searching")."""

from __future__ import annotations

from dataclasses import dataclass

from memory.models import EventType


@dataclass(frozen=True)
class RecallOptions:
    """What the recall before an answer gathers (`retrieve_all_context`); its one set of
    defaults."""

    include_episodic: bool = True
    include_semantic: bool = True
    include_procedural: bool = True
    include_short_term: bool = True
    #: the user profile too, read in the same round trip
    include_profile: bool = False
    #: None: the coordinator's RECALL_PROMPT_K
    k_episodic: int | None = None
    k_semantic: int = 3
    k_short_term: int = 10


@dataclass(frozen=True)
class ListQuery:
    """Which memories of one type the editor lists, in which order, and which page."""

    #: episodic: only these event types
    event_types: list[str] | None = None
    #: semantic: only this category
    category: str | None = None
    #: episodic: only memories with one of these tags
    tags: list[str] | None = None
    #: episodic: stored within [since_ms, until_ms)
    since_ms: int | None = None
    until_ms: int | None = None
    pinned: bool | None = None
    #: episodic: memories replaced by a newer one (kept as history) too
    include_superseded: bool = True
    #: episodic, without the replaced ones: the paused memories too (kept, never recalled)
    include_paused: bool = True
    #: a field of the type's records; semantic and procedural fall back to their default order
    sort_by: str = "timestamp"
    descending: bool = True
    page: int = 1
    page_size: int = 50
    #: episodic and short-term: only this session
    session_id: str | None = None
    #: semantic: only the facts this user added
    added_by: str | None = None


@dataclass(frozen=True)
class SearchFilter:
    """What a hybrid search keeps besides relevance (episodic, except `category`)."""

    event_types: list[EventType] | list[str] | None = None
    tags: list[str] | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    #: the recall threshold for this search (None: the coordinator's)
    min_score: float | None = None
    include_superseded: bool = False
    #: semantic: only this category
    category: str | None = None
