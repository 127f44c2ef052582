"""The user profile: the few lines about the user every prompt carries (docs/agent.md): their
standing, pinned and health memories, best first, read live from the episodic index (no copy).
The model's capabilities are the *model profile* (agent/profile.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from redisvl.query.filter import Tag

from memory.health import about_health, health_query
from memory.models import EventType, ProfileLine
from memory.replies import as_str
from memory.stores.episodic import EpisodicStore
from memory.stores.records import row_record

#: Kinds that describe the user lastingly; exchanges, summaries, milestones and feedback on
#: one answer describe a moment.
STANDING_KINDS = (EventType.PREFERENCE, EventType.GOAL, EventType.HEALTH_EVENT, EventType.FACT)
#: Kinds a health or safety line may have: anything the person said about themselves, not the
#: chat's own log (a question that names an allergy is no fact about the user).
HEALTH_KINDS = tuple(k for k in EventType if k not in (EventType.INTERACTION, EventType.SUMMARY))
#: Lines read of each part (pinned, about health, standing): more than the prompt's cap holds
#: (`memory.block.PROFILE_TOKENS`) so that a line too long for the room left gives way to a
#: shorter one.
PROFILE_READ = 12
_FIELDS = ("event_type", "description", "importance", "timestamp")
#: Seconds lines read at one write version serve: a memory's key may expire (its TTL) unannounced.
KEPT_S = 60.0


def profile_commands(episodic: EpisodicStore, user_id: str) -> list[list[str]]:
    """The index commands that read the profile, in its order: the memories the person pinned
    (whatever their kind), those whose words are about health or safety (memory.health: their
    text search only preselects, `profile_lines_of` decides), then the standing memories.
    Recall queues them in its own round trip."""
    pinned = episodic.filter_for(user_id) & (Tag("pinned") == "1")
    kinds = [k.value for k in HEALTH_KINDS]
    health = f"({episodic.filter_for(user_id, event_types=kinds)}) @description:({health_query()})"
    standing = episodic.filter_for(user_id, event_types=[k.value for k in STANDING_KINDS])
    return [_aggregate(episodic, str(pinned)), _aggregate(episodic, health),
            _aggregate(episodic, str(standing))]  # fmt: skip


def _aggregate(episodic: EpisodicStore, where: str) -> list[str]:
    """An aggregation, because FT.SEARCH sorts by one field and returns its ties in the index's
    order (the oldest first): among memories of equal importance the newest must win."""
    # sorted on the index's sortable values first, so only the lines kept load their hash
    load = ["@__key", *(f"@{f}" for f in _FIELDS)]
    return [
        "FT.AGGREGATE", episodic.index.name, where,
        "SORTBY", "4", "@importance", "DESC", "@timestamp", "DESC", "MAX", str(PROFILE_READ),
        "LOAD", str(len(load)), *load,
        "DIALECT", "2",
    ]  # fmt: skip


def profile_lines_of(replies: Sequence[Any]) -> list[ProfileLine]:
    """The replies of `profile_commands` -> the profile's lines, in the order a prompt takes
    them: pinned, then about health or safety, then the other standing memories, each part
    best first; a memory in two parts is listed once, where it comes first."""
    pinned, health, standing = (lines_of_reply(r) for r in replies)
    lines: dict[str, ProfileLine] = {}
    for line in pinned:
        lines[line.id] = line.model_copy(update={"pinned": True})
    for line in health:
        if about_health(line.text):
            lines.setdefault(line.id, line)
    for line in standing:
        lines.setdefault(line.id, line)
    return list(lines.values())


def lines_of_reply(reply: Any) -> list[ProfileLine]:
    """One aggregation's reply (RESP2 rows of name/value pairs, or a RESP3 map) -> its lines,
    best first."""
    if isinstance(reply, dict):
        results = reply.get(b"results") or reply.get("results") or []
        pairs = [r.get(b"extra_attributes") or r.get("extra_attributes") or {} for r in results]
        rows = [{as_str(k): as_str(v) for k, v in p.items()} for p in pairs]
    else:
        flat = [row or [] for row in reply[1:]]
        rows = [{as_str(r[i]): as_str(r[i + 1]) for i in range(0, len(r), 2)} for r in flat]
    # A memory deleted or expired between the index's match and the LOAD comes back without
    # its fields: it is no line (and must not fail the turn's recall).
    whole = [r for r in rows if "__key" in r and "event_type" in r and "description" in r]
    records = [row_record({"id": r.pop("__key"), **r}, "description") for r in whole]
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
    """The user's profile lines, in the prompt's order (for pages that show it outside a
    turn)."""
    pipe = episodic.index.client.pipeline(transaction=False)
    for command in profile_commands(episodic, user_id):
        pipe.execute_command(*command)
    return profile_lines_of(pipe.execute())


class ProfileCache:
    """The profile's lines per user, read again when the user's write counter moved
    (`admin.note_write`) or after KEPT_S: a recall reads the counter, and the three
    aggregations only then (docs/performance.md)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, float, list[ProfileLine]]] = {}

    def take(self, reply: Any, user_id: str) -> tuple[str, list[ProfileLine] | None]:
        """(the version, a GET of `Keys.writes`; the lines kept at it, None: read, `keep`)."""
        version, kept = as_str(reply or b"0"), self._kept.get(user_id)
        fresh = kept is not None and kept[0] == version and time.monotonic() - kept[1] < KEPT_S
        return version, list(kept[2]) if kept is not None and fresh else None

    def knows(self, user_id: str) -> bool:
        """Lines kept for the user within KEPT_S (their version still to be checked): without
        them a recall reads the profile at once, in its first round trip beside the version."""
        kept = self._kept.get(user_id)
        return kept is not None and time.monotonic() - kept[1] < KEPT_S

    def drop(self, user_id: str) -> None:
        """A write of this process changed the user's memories: the next recall reads the
        profile in its first round trip, not in a second one after finding the version moved."""
        self._kept.pop(user_id, None)

    def keep(self, user_id: str, version: str, replies: Sequence[Any]) -> list[ProfileLine]:
        """The lines of `profile_commands`' replies, read after the counter said `version` (a
        write in between only has the next recall read them again)."""
        if len(self._kept) >= 1024:  # a process serving many users keeps the recent ones
            self._kept.clear()
        self._kept[user_id] = (version, time.monotonic(), profile_lines_of(replies))
        return list(self._kept[user_id][2])

    def carry(self, user_id: str, count: int) -> None:
        """A write that changed no profile line made the user's counter `count`: lines kept at
        the count before it (no other write between) are the profile at this one."""
        kept = self._kept.get(user_id)
        if kept is not None and kept[0] == str(count - 1):
            self._kept[user_id] = (str(count), kept[1], kept[2])
