"""One definition of each count the pages show of a user's memory: the load's message, the
Memories page's tile and Stats say the same number for the same words.

    memories     what is remembered about the user now: episodic memories of the remembered
                 kinds (not the logged conversation), neither replaced (history) nor paused
    paused       remembered kinds, not replaced, paused (kept, never used): counted apart
    facts        the facts the user added (not the built-in knowledge every user shares)
    procedures   learned tool habits
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memory import ListQuery
from memory.service import MemoryService
from ui.format import REMEMBERED_KINDS


@dataclass(frozen=True)
class Counts:
    memories: int
    paused: int
    facts: int
    procedures: int


def _total(coord: MemoryService, user_id: str, mtype: str, query: ListQuery) -> int:
    return int(coord.list_memories(user_id, mtype, query)[1])


def counts_of(coord: MemoryService, user_id: str) -> Counts:
    """The counts, by count queries (one page of one row each)."""
    kept = ListQuery(page_size=1, event_types=REMEMBERED_KINDS, include_superseded=False)
    with_paused = _total(coord, user_id, "episodic", kept)
    memories = _total(coord, user_id, "episodic", replace(kept, include_paused=False))
    return Counts(
        memories=memories,
        paused=with_paused - memories,
        facts=_total(coord, user_id, "semantic", ListQuery(page_size=1, added_by=user_id)),
        procedures=_total(coord, user_id, "procedural", ListQuery(page_size=1)),
    )
