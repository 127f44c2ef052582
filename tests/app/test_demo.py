"""*Load demo persona*: on the chat page's first screen and in the sidebar. It loads Maya into
her own user (demo-maya), switches to it in a new chat, and asks before replacing memories
that user made herself; the presenter's own memories are never touched."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memory import DEMO_QUESTIONS, DEMO_USER, ListQuery, demo_contents
from tests.app.conftest import no_errors, texts
from tests.app.test_auth import _signed_in


def loaded(coordinator: Any) -> bool:
    contents = demo_contents(coordinator, DEMO_USER)
    return contents.demo["episodic"] > 0 and contents.demo["sessions"] == 3


def test_first_screen_button_loads_the_persona_and_switches_to_it(
    app_env, make_app, coordinator
) -> None:
    coordinator.add_episodic("alice", "Alice likes tea", event_type="preference")
    at = make_app("app.py", user="alice", session="s-test")
    no_errors(at)
    button = at.button(key="es_demo_load")
    assert button.label == "Load demo persona"
    button.click().run()
    no_errors(at)
    assert loaded(coordinator)
    assert at.session_state["user_id"] == DEMO_USER
    assert at.session_state["session_id"] not in (
        "s-test",
        *coordinator.short_term.sessions(DEMO_USER),
    )
    assert at.toast[0].value.startswith(f"You are Maya ({DEMO_USER}): ")
    # the first screen now offers the persona's questions, and the sidebar her memories
    assert at.button(key="demo_question_0").label == DEMO_QUESTIONS[0]
    assert "You are chatting as **Maya**" in texts(at)
    assert "Left ankle a bit stiff" in texts(at.sidebar)  # her latest news, in Recent
    assert coordinator.list_memories("alice", "episodic")[1] == 1  # alice untouched
    # a question button sends it: the chat answers with the persona's memories
    at.button(key="demo_question_0").click().run()
    no_errors(at)
    assert len(at.chat_message) >= 2


def test_a_first_visit_starts_as_guest_not_as_a_second_demo_user(app_env, coordinator) -> None:
    """Without sign-in or `?user=`, the app starts as "guest": the demo persona's user is
    the only one named demo, and the load's toast is one short line."""
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import TIMEOUT_S

    at = AppTest.from_file("../../app.py", default_timeout=TIMEOUT_S).run()
    no_errors(at)
    assert at.session_state["user_id"] == "guest"
    assert at.sidebar.selectbox(key="sb_user").value == "guest"
    at.button(key="es_demo_load").click().run()
    no_errors(at)
    assert at.session_state["user_id"] == DEMO_USER
    assert [u for u in at.sidebar.selectbox(key="sb_user").options if "demo" in u] == [DEMO_USER]
    toast = at.toast[0].value
    # a toast clamps its text to a few lines (more behind "view more"): 70 characters fit
    # them at 390 px in Chromium; the questions are on the first screen, not in the toast
    assert len(toast) <= 70 and "Try:" not in toast
    assert at.button(key="demo_question_0").label == DEMO_QUESTIONS[0]


def test_sidebar_button_loads_the_persona_from_any_page(app_env, make_app, coordinator) -> None:
    at = make_app("pages/memories.py", user="bob")
    no_errors(at)
    at.sidebar.button(key="sb_demo_load").click().run()
    no_errors(at)
    assert loaded(coordinator)
    assert at.session_state["user_id"] == DEMO_USER
    assert at.sidebar.selectbox(key="sb_user").value == DEMO_USER
    # the Memories page shows her memories, the replaced goal among them
    table = at.dataframe(key="tbl_episodic").value
    assert any("under 2 hours" in t for t in table["Memory"])


def test_replacing_her_own_memories_asks_first(app_env, make_app, coordinator) -> None:
    """demo-maya chatted in an earlier demo: the first click asks, the second replaces."""
    mine = coordinator.add_episodic(DEMO_USER, "I said this in a demo chat", event_type="fact")
    coordinator.add_message(DEMO_USER, "s-earlier", "user", "Hello")
    at = make_app("app.py", user="alice")
    at.sidebar.button(key="sb_demo_load").click().run()
    no_errors(at)
    assert not loaded(coordinator)
    assert at.session_state["user_id"] == "alice"
    warning = "\n".join(w.value for w in at.sidebar.warning)
    assert "already has memories of their own" in warning and "(1 memory, 1 chat)" in warning
    box = at.sidebar.checkbox(key="sb_demo_replace")
    assert box.value is False
    at.sidebar.button(key="sb_demo_load").click().run()  # still not ticked: still asks
    assert not loaded(coordinator)

    at.sidebar.checkbox(key="sb_demo_replace").check().run()
    at.sidebar.button(key="sb_demo_load").click().run()
    no_errors(at)
    assert loaded(coordinator)
    assert at.session_state["user_id"] == DEMO_USER
    assert not demo_contents(coordinator, DEMO_USER).has_own
    rows, _ = coordinator.list_memories(DEMO_USER, "episodic")
    assert mine.id not in {r["id"] for r in rows}
    assert not at.sidebar.warning  # the question is gone once answered


def test_loading_again_needs_no_confirmation(app_env, make_app, coordinator) -> None:
    at = make_app("app.py", user="alice")
    at.sidebar.button(key="sb_demo_load").click().run()
    first = demo_contents(coordinator, DEMO_USER).demo
    at.sidebar.button(key="sb_demo_load").click().run()
    no_errors(at)
    assert not at.sidebar.warning
    assert demo_contents(coordinator, DEMO_USER).demo == first


@pytest.fixture
def oidc(app_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_MODE", "oidc")
    monkeypatch.setenv("AUTH_ADMINS", "root@example.com")


def test_a_signed_in_non_admin_is_not_offered_the_persona(oidc, coordinator) -> None:
    at = _signed_in("app.py", "ana@example.com")
    no_errors(at)
    keys = {b.key for b in at.button}
    assert "es_demo_load" not in keys and "sb_demo_load" not in keys
    admin = _signed_in("app.py", "root@example.com")
    assert "sb_demo_load" in {b.key for b in admin.button}


def test_the_load_message_the_memories_tile_and_stats_count_alike(
    app_env, make_app, coordinator
) -> None:
    at = make_app("app.py", user="alice", session="s-test")
    at.button(key="es_demo_load").click().run()
    no_errors(at)
    said = re.search(r": (\d+) memories, (\d+) facts, \d+ ways of working\.$", at.toast[0].value)
    assert said is not None, at.toast[0].value
    memories, facts = (int(n) for n in said.groups())

    def shown() -> tuple[int, int]:
        """(the Memories tile, the Stats tile of memories and facts together)"""
        page = make_app("pages/memories.py", user=DEMO_USER)
        stats = make_app("pages/stats.py", user=DEMO_USER)
        no_errors(page)
        no_errors(stats)
        tiles = {m.label: m.value for m in stats.metric}
        return int(page.metric[0].value), int(tiles["Things I remember about you"])

    assert shown() == (memories, memories + facts)
    # the Semantic tile also counts the built-in facts: a line says how many are hers
    from ui.format import md_text

    page = make_app("pages/memories.py", user=DEMO_USER)
    built_in = int(page.metric[1].value) - facts
    assert built_in > 0
    assert f"{facts} facts {md_text(DEMO_USER)} added and {built_in} built-in facts" in " ".join(
        c.value for c in page.caption
    )
    # a paused memory leaves both counts alike (kept, not used)
    rows, _ = coordinator.list_memories(
        DEMO_USER, "episodic", ListQuery(event_types=["goal"], include_superseded=False)
    )
    coordinator.update_memory(DEMO_USER, "episodic", rows[0]["id"], paused=True)
    assert shown() == (memories - 1, memories - 1 + facts)
