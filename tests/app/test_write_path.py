"""The sidebar's *Remember* and the Memories page's *Add* go through the one write policy:
the same sentence twice is one memory (the second says it is already remembered), a changed
goal replaces the old one, kept as history. (Chat, tool, CLI and MCP:
tests/integration/test_write_path.py.)"""

from __future__ import annotations

from memory.queries import ListQuery
from tests.app.conftest import no_errors, texts

GOAL = "My goal is to run 5k in 25 minutes"
NEW_GOAL = "My goal is to run 5k in 23 minutes"


def goals(coordinator, user: str = "alice") -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    rows, _ = coordinator.list_memories(
        user, "episodic", ListQuery(event_types=["goal"], include_superseded=True)
    )
    return (
        [r["text"] for r in rows if not r.get("superseded_by")],
        [r["text"] for r in rows if r.get("superseded_by")],
    )


def test_the_sidebar_editor(app_env, make_app, coordinator) -> None:
    at = make_app("app.py")

    def add(text: str) -> None:
        at.sidebar.selectbox(key="sb_add_kind").set_value("goal")
        at.sidebar.text_area(key="sb_add_text").input(text)
        at.sidebar.button(key="sb_add_go").click().run()
        no_errors(at)

    add(GOAL)
    add(GOAL)
    assert "Already remembered" in texts(at, "toast") + texts(at, "info") + texts(at)
    assert goals(coordinator) == ([GOAL], [])
    add(NEW_GOAL)
    assert goals(coordinator) == ([NEW_GOAL], [GOAL])


def test_the_memories_page(app_env, make_app, coordinator) -> None:
    at = make_app("pages/memories.py")

    def add(text: str) -> None:
        at.text_area(key="a_text").input(text)
        at.selectbox(key="a_kind").set_value("goal")
        at.button(key="a_go").click().run()
        no_errors(at)

    add(GOAL)
    add(GOAL)
    assert any(i.value.startswith("Already remembered") for i in at.info)
    assert goals(coordinator) == ([GOAL], [])
    add(NEW_GOAL)
    assert goals(coordinator) == ([NEW_GOAL], [GOAL])
    assert f"it replaces “{GOAL}”" in at.success[0].value  # named, not "an older memory"
