"""The user profile: a few short lines about the user that every prompt carries.

Letta-style core memory without a second copy: the lines are the user's own standing
memories (what they eat, aim for, suffer from, how they like answers: the kinds below), read
when a turn needs them, by importance, newest first among equals. Nothing is cached, so
every write path (added, replaced, merged, paused, forgotten) shows in the next read; the
read is one index query over the user's live memories (the same tag recall filters on, so
replaced and paused memories never appear), which a chat turn's recall sends in its own
first round trip. Editing a line edits the memory behind it.

The model's capabilities are the *model profile* (agent/profile.py), not this.
"""

from __future__ import annotations

from typing import Any

from redisvl.query import FilterQuery

from memory.models import EventType, ProfileLine
from memory.stores.episodic import EpisodicStore
from memory.stores.records import row_record

#: Kinds that describe the user lastingly; exchanges, summaries, milestones and feedback on
#: one answer describe a moment.
STANDING_KINDS = (EventType.PREFERENCE, EventType.GOAL, EventType.HEALTH_EVENT, EventType.FACT)
#: Lines read: more than the prompt's cap holds (`memory.block.PROFILE_TOKENS`) so that a line
#: too long for the room left gives way to a shorter one.
PROFILE_READ = 12


def profile_query(episodic: EpisodicStore, user_id: str) -> FilterQuery:
    """The one index query that reads the profile: recall queues it in its own round trip."""
    return FilterQuery(
        filter_expression=episodic.filter_for(
            user_id, event_types=[k.value for k in STANDING_KINDS]
        ),
        return_fields=["event_type", "description", "importance", "timestamp"],
        num_results=PROFILE_READ,
        sort_by=("importance", "DESC"),
    )


def profile_lines_of(rows: list[dict[str, Any]]) -> list[ProfileLine]:
    """The profile query's rows -> the lines, best first: most important, then newest."""
    records = [row_record(r, "description") for r in rows]
    records.sort(key=lambda r: (r.get("importance", 0.0), r.get("timestamp", 0)), reverse=True)
    return [
        ProfileLine(
            id=r["id"],
            kind=EventType.parse(r["event_type"]),
            text=r["text"],
            importance=r["importance"],
        )
        for r in records
    ]


def read_profile(episodic: EpisodicStore, user_id: str) -> list[ProfileLine]:
    """The user's profile lines, best first (for pages that show it outside a turn)."""
    return profile_lines_of(episodic.index.query(profile_query(episodic, user_id)))
