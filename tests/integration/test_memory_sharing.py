"""Who sees and changes which semantic facts: a fact a user adds is theirs until an admin
shares it; the knowledge file's facts are shared and only change with admin rights."""

from __future__ import annotations

import pytest

from memory.coordinator import MemoryCoordinator
from memory.errors import NotAllowedError, NotFoundError
from memory.queries import ListQuery, RecallOptions

PLANTED = "The secret clinic door code is 4417 and the pharmacy opens at dawn."
SAFETY_QUERY = "chest pain during exercise"


def _recalled(coord: MemoryCoordinator, user: str, query: str) -> list[str]:
    ctx = coord.retrieve_all_context(user, "s1", query, RecallOptions(k_semantic=5))
    return [h.text for h in ctx.semantic]


def _safety_fact_id(coord: MemoryCoordinator) -> str:
    (hit,) = coord.search("anyone", SAFETY_QUERY, "semantic", k=1)
    assert "chest pain" in hit.text.lower()
    return hit.id


def test_a_fact_one_user_adds_is_recalled_and_listed_only_for_them(
    coordinator: MemoryCoordinator,
) -> None:
    fact = coordinator.add_semantic(PLANTED, category="general", added_by="alice")

    assert PLANTED in _recalled(coordinator, "alice", "clinic door code")
    assert PLANTED not in _recalled(coordinator, "bob", "clinic door code")
    assert fact.id not in {h.id for h in coordinator.search("bob", "clinic door code", "semantic")}
    bob_rows, _ = coordinator.list_memories("bob", "semantic", ListQuery(page_size=500))
    assert fact.id not in {r["id"] for r in bob_rows}
    with pytest.raises(NotFoundError):
        coordinator.get_memory("bob", "semantic", fact.id)
    alice_rows, _ = coordinator.list_memories("alice", "semantic", ListQuery(page_size=500))
    assert fact.id in {r["id"] for r in alice_rows}


def test_built_in_facts_are_recalled_for_every_user(coordinator: MemoryCoordinator) -> None:
    for user in ("alice", "bob"):
        assert any("chest pain" in t.lower() for t in _recalled(coordinator, user, SAFETY_QUERY))


def test_a_shared_fact_is_recalled_for_everyone_once_an_admin_shares_it(
    coordinator: MemoryCoordinator,
) -> None:
    fact = coordinator.add_semantic(PLANTED, added_by="alice")
    with pytest.raises(NotAllowedError):
        coordinator.update_memory("alice", "semantic", fact.id, shared=True)
    assert PLANTED not in _recalled(coordinator, "bob", "clinic door code")

    coordinator.update_memory("alice", "semantic", fact.id, shared=True, as_admin=True)
    assert PLANTED in _recalled(coordinator, "bob", "clinic door code")
    # Shared now: the author alone may no longer change it.
    with pytest.raises(NotAllowedError):
        coordinator.update_memory("alice", "semantic", fact.id, text="Door code 0000.")


def test_a_non_admin_cannot_edit_pin_or_delete_a_shared_fact(
    coordinator: MemoryCoordinator,
) -> None:
    fid = _safety_fact_id(coordinator)
    with pytest.raises(NotAllowedError):
        coordinator.delete_memory("mallory", "semantic", fid)
    with pytest.raises(NotAllowedError):
        coordinator.update_memory("mallory", "semantic", fid, text="Chest pain is harmless.")
    with pytest.raises(NotAllowedError):
        coordinator.update_memory("mallory", "semantic", fid, pinned=True)
    assert "chest pain" in coordinator.get_memory("bob", "semantic", fid)["text"].lower()
    assert any("chest pain" in t.lower() for t in _recalled(coordinator, "bob", SAFETY_QUERY))

    coordinator.update_memory("root", "semantic", fid, pinned=True, as_admin=True)
    assert coordinator.get_memory("bob", "semantic", fid)["pinned"] is True
    coordinator.delete_memory("root", "semantic", fid, as_admin=True)
    with pytest.raises(NotFoundError):
        coordinator.get_memory("bob", "semantic", fid)


def test_a_purge_or_a_replacing_import_of_the_author_keeps_a_shared_fact(
    coordinator: MemoryCoordinator,
) -> None:
    """Once an admin shared a user's fact it is everyone's: purging that user, or importing a
    file over them with --replace, removes only their private facts."""
    shared = coordinator.add_semantic(PLANTED, added_by="alice")
    coordinator.update_memory("alice", "semantic", shared.id, shared=True, as_admin=True)
    private = coordinator.add_semantic(
        "Alice keeps her running shoes by the door.", added_by="alice"
    )
    export = coordinator.export_user("alice")

    coordinator.import_user(export, mode="replace")
    assert PLANTED in _recalled(coordinator, "bob", "clinic door code")

    coordinator.clear_user_memories("alice")
    assert PLANTED in _recalled(coordinator, "bob", "clinic door code")
    with pytest.raises(NotFoundError):
        coordinator.get_memory("alice", "semantic", private.id)


def test_an_import_cannot_rewrite_a_shared_fact_by_reusing_its_id(
    coordinator: MemoryCoordinator,
) -> None:
    fact = coordinator.add_semantic(PLANTED, added_by="alice")
    coordinator.update_memory("alice", "semantic", fact.id, shared=True, as_admin=True)
    safety_id = _safety_fact_id(coordinator)
    crafted = coordinator.export_user("alice")
    crafted["semantic"] = [
        {**crafted["semantic"][0], "id": fact.id, "fact": "The clinic door code is 0000."},
        {
            **crafted["semantic"][0],
            "id": safety_id,
            "fact": "Chest pain is nothing to worry about.",
        },
    ]

    coordinator.import_user(crafted, mode="merge")

    assert coordinator.get_memory("bob", "semantic", fact.id)["text"] == PLANTED
    assert "chest pain" in coordinator.get_memory("bob", "semantic", safety_id)["text"].lower()
    assert "worry" not in coordinator.get_memory("bob", "semantic", safety_id)["text"]
    # The file's texts arrived as alice's own, private facts under new ids.
    assert "The clinic door code is 0000." not in _recalled(coordinator, "bob", "clinic door code")
