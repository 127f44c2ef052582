"""The Stats version: a user's figures are cached under it, so every way the user's memories
change must change it (each writer bumps the user's counter after writing; a write that names
no user, such as a shared fact, bumps the shared one), and reading, or a write that writes
nothing (a dry run, opening the store again), must not."""

from __future__ import annotations

import time
from collections.abc import Callable

from memory.admin.forget import TopicForget
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.queries import ListQuery, RecallOptions

U = "ana"


def _changes(coord: MemoryCoordinator, action: Callable[[], object], user: str = U) -> bool:
    before = coord.stats_version(user)
    action()
    return coord.stats_version(user) != before


def test_every_write_to_a_users_memories_changes_their_version(
    coordinator: MemoryCoordinator,
) -> None:
    c = coordinator
    mem = c.add_episodic(U, "I like trail running", event_type="preference")
    assert _changes(c, lambda: c.add_episodic(U, "My knee hurts", event_type="health_event"))
    assert _changes(c, lambda: c.update_memory(U, "episodic", mem.id, description="I love it"))
    new = c.add_episodic(U, "I like road running now", event_type="preference", supersedes=mem.id)
    assert _changes(c, lambda: c.history.undo_write(U, new.id, mem.id))
    assert _changes(c, lambda: c.delete_memory(U, "episodic", mem.id))
    assert _changes(c, lambda: c.add_semantic("Ana lives in Lyon", added_by=U))
    c.add_episodic(U, "I watch the lawyer show", event_type="preference")
    assert _changes(c, lambda: TopicForget.of(c).forget(U, "lawyer show"))
    # an exchange older than its retention (INTERACTION 210 days): the run expires it
    long_ago = int(time.time() * 1000) - 400 * 86_400_000
    c.add_episodic(U, "Asked about shoes", event_type="interaction", timestamp_ms=long_ago)
    assert not _changes(c, lambda: Maintenance.of(c).run(user_id=U, dry_run=True))
    assert _changes(c, lambda: Maintenance.of(c).run(user_id=U))
    assert not _changes(c, lambda: Maintenance.of(c).run(user_id=U))  # nothing left to do
    assert _changes(c, lambda: c.clear_user_memories(U))
    assert not c.redis.exists(c.keys.writes(U))  # a purge leaves nothing of the user


def test_reads_and_other_users_writes_leave_it(coordinator: MemoryCoordinator) -> None:
    c = coordinator
    c.add_episodic(U, "I like trail running", event_type="preference")

    def reads() -> None:
        c.list_memories(U, "episodic", ListQuery())
        c.retrieve_all_context(U, "s1", "What do I like?", RecallOptions(include_profile=True))
        c.search(U, "running")
        c.get_memory_stats(U)
        c.history.per_day(U)
        c.bookkeeping.drain()  # the recall's access counts are not a change Stats shows

    assert not _changes(c, reads)
    assert not _changes(c, lambda: c.add_episodic("bo", "I swim", event_type="preference"))
    # a fact every user may recall changes everyone's version
    assert _changes(c, lambda: c.add_semantic("Lyon is in France"))
    assert not _changes(c, lambda: c.sweep_secrets(U, apply=False))
    assert not _changes(c, c.load_knowledge)  # each open: the knowledge file is loaded already


def test_a_version_from_before_a_purge_is_never_met_again(coordinator: MemoryCoordinator) -> None:
    """A purge leaves nothing of the user, the counter too: as many writes after it must not
    give a version the caches (Stats, the profile panel, recall's profile) kept before it."""
    c = coordinator
    c.add_episodic(U, "I am vegetarian", event_type="preference")
    c.add_episodic(U, "I run on Sundays", event_type="preference")
    before = c.stats_version(U)
    c.clear_user_memories(U)
    c.add_episodic(U, "I eat fish now", event_type="preference")
    c.add_episodic(U, "I run on Mondays", event_type="preference")
    assert c.stats_version(U) != before
