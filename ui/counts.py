"""One definition of each count the pages show of a user's memory, so the load's message, the
Memories page's tile and Stats say the same number for the same words (docs/app.md, "Stats")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory import ListQuery
from memory.errors import NotFoundError
from memory.service import MemoryService
from ui.format import REMEMBERED_KINDS


@dataclass(frozen=True)
class Counts:
    memories: int
    paused: int
    facts: int  # the facts the user added
    procedures: int
    shared: int  # built-in facts every user recalls, with those an admin shared


def _total(coord: MemoryService, user_id: str, mtype: str, query: ListQuery) -> int:
    return int(coord.list_memories(user_id, mtype, query)[1])


def counts_of(
    coord: MemoryService, user_id: str, leaving_out: Sequence[tuple[str, str]] = ()
) -> Counts:
    """The counts, by count queries (one page of one row each), less the memories
    `(type, id)` of `leaving_out` each would count."""
    kept = ListQuery(page_size=1, event_types=REMEMBERED_KINDS, include_superseded=False)
    with_paused = _total(coord, user_id, "episodic", kept)
    memories = _total(coord, user_id, "episodic", replace(kept, include_paused=False))
    facts = _total(coord, user_id, "semantic", ListQuery(page_size=1, added_by=user_id))
    counts = Counts(
        memories=memories,
        paused=with_paused - memories,
        facts=facts,
        procedures=_total(coord, user_id, "procedural", ListQuery(page_size=1)),
        shared=max(0, _total(coord, user_id, "semantic", ListQuery(page_size=1)) - facts),
    )
    for mtype, memory_id in leaving_out:
        counts = _less(counts, coord, user_id, mtype, memory_id)
    return counts


def _less(c: Counts, coord: MemoryService, user_id: str, mtype: str, memory_id: str) -> Counts:
    """`c` without one memory, in the count whose rule above it meets (if any)."""
    try:
        rec = coord.get_memory(user_id, mtype, memory_id)
    except NotFoundError:
        return c
    if mtype == "episodic":
        if rec.get("event_type") not in REMEMBERED_KINDS or rec.get("superseded_by"):
            return c
        if rec.get("paused"):
            return replace(c, paused=c.paused - 1)
        return replace(c, memories=c.memories - 1)
    if mtype == "semantic":
        if rec.get("added_by") == user_id:
            return replace(c, facts=c.facts - 1)
        return replace(c, shared=c.shared - 1)
    if mtype == "procedural":
        return replace(c, procedures=c.procedures - 1)
    return c
