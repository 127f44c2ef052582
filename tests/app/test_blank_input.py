"""Blank input (spaces, line breaks, zero-width characters) at every entry point of the app:
the chat (with the fake model and in memory-only mode), the sidebar's memory editor, and the
Memories page's Add and Edit. Each is ignored or refused with a sentence, never a red box, and
nothing is stored. (The CLI and the MCP tools: tests/integration/test_blank_input.py.)"""

from __future__ import annotations

import pytest

from tests.app.conftest import no_errors

BLANKS = ("   ", "\n\n  \n", "\u200b\u200b", "\u200b \u200d\ufeff\n")


def _ignored_by_chat(at, coordinator, text: str) -> None:  # type: ignore[no-untyped-def]
    at.chat_input(key="chat_input").set_value(text).run()
    no_errors(at)
    assert not at.status, "no turn was started"
    assert not [m for m in at.chat_message if m.name == "user"], "no bubble for nothing"
    assert any("Nothing sent" in t.value for t in at.toast)
    assert coordinator.recent_messages("alice", "s-test") == []


@pytest.mark.parametrize("text", BLANKS)
def test_chat_ignores_a_blank_message(text: str, app_env, make_app, coordinator) -> None:
    at = make_app("app.py")
    _ignored_by_chat(at, coordinator, text)
    assert coordinator.list_memories("alice", "episodic")[1] == 0


def test_chat_ignores_a_blank_message_in_memory_only_mode(offline_env, make_app) -> None:
    from ui import resources

    at = make_app("app.py")
    _ignored_by_chat(at, resources.get_coordinator(), "\u200b \n")


def test_sidebar_editor_refuses_blank_text_with_a_sentence(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    at = make_app("pages/memories.py")
    for text in BLANKS:
        at.sidebar.text_area(key="sb_add_text").input(text)
        at.sidebar.button(key="sb_add_go").click().run()
        no_errors(at)
        assert "Write what should be remembered first." in [
            w.value for w in at.sidebar.warning
        ]  # under the form, not off-screen on the page
    assert coordinator.list_memories("alice", "episodic")[1] == 0


def test_memories_add_refuses_blank_text_with_a_sentence(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    at = make_app("pages/memories.py")
    for mtype in ("episodic", "semantic"):
        at.radio(key="a_type").set_value(mtype).run()
        at.text_area(key="a_text").input("\u200b\n ")
        at.button(key="a_go").click().run()
        no_errors(at)
        assert "Write what should be remembered first." in [w.value for w in at.warning]
    assert coordinator.list_memories("alice", "episodic")[1] == 0


def test_memories_edit_refuses_to_empty_a_memory(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    mid = coordinator.add_episodic("alice", "I am vegetarian", event_type="preference").id
    at = make_app("pages/memories.py")
    at.session_state["tbl_episodic"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.text_area(key=f"ed_ep_{mid}_text").input(" \u200b ")
    at.button(key=f"ed_ep_{mid}_save").click().run()
    no_errors(at)
    assert any("cannot be empty" in w.value for w in at.warning)
    assert coordinator.get_memory("alice", "episodic", mid)["text"] == "I am vegetarian"
