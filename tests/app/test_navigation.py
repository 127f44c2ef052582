"""Multipage: every page runs its own set-up, so it works when reached by URL or by a link."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit import config

from tests.app.conftest import no_errors


@pytest.fixture
def own_navigation() -> Iterator[None]:
    """As with `client.showSidebarNavigation = false` in .streamlit/config.toml."""
    before = config.get_option("client.showSidebarNavigation")
    config.set_option("client.showSidebarNavigation", False)
    yield
    config.set_option("client.showSidebarNavigation", before)


def test_switching_page_keeps_the_user_and_the_sidebar(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    at = make_app("app.py")
    at.switch_page("pages/memories.py").run()
    no_errors(at)
    assert at.title[0].value == "🗂️ Memories"
    assert list(at.dataframe(key="tbl_episodic").value["Memory"]) == ["I am vegetarian"]
    assert at.sidebar.button(key="sb_add_go")
    at.switch_page("pages/stats.py").run()
    no_errors(at)
    assert at.title[0].value == "📊 Stats"
    assert at.session_state["user_id"] == "alice"


def test_sidebar_links_have_names_and_icons(app_env, make_app, own_navigation) -> None:
    at = make_app("app.py")
    no_errors(at)
    links = [(e.proto.label, e.proto.icon, e.proto.page) for e in at.sidebar.get("page_link")]
    assert [(label, icon) for label, icon, _ in links] == [
        ("Chat", "💬"), ("Memories", "🗂️"), ("Stats", "📊"),
    ]  # fmt: skip


def test_store_errors_become_a_message_not_a_traceback(app_env, make_app, monkeypatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1")  # nothing listens there
    at = make_app("pages/memories.py")
    assert not at.exception
    assert "The memory store is not available" in at.error[0].value
    assert "make redis-start" in at.info[0].value
    assert at.button(key="fatal_retry")


def _opened(query: dict[str, str]):  # type: ignore[no-untyped-def]
    """A first visit (a reload, a bookmark, a second tab) of the chat page at this address."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app.py", default_timeout=30)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_every_run_writes_the_user_and_the_chat_into_the_address(app_env, make_app) -> None:
    at = make_app("app.py", user="alice", session="s-one")
    no_errors(at)
    assert (at.query_params["user"], at.query_params["chat"]) == ("alice", "s-one")
    at.sidebar.button(key="sb_new_session").click().run()
    assert at.query_params["chat"] == at.session_state["session_id"] != "s-one"
    at.switch_page("pages/stats.py").run()
    no_errors(at)
    assert at.query_params["user"] == "alice"
    assert at.query_params["chat"] == at.session_state["session_id"]


def test_page_links_carry_the_user_and_the_chat(app_env, make_app, own_navigation) -> None:
    at = make_app("app.py", user="alice", session="s-one")
    from urllib.parse import parse_qs

    links = at.sidebar.get("page_link")
    assert len(links) == 3
    for link in links:
        assert parse_qs(link.proto.query_string) == {"user": ["alice"], "chat": ["s-one"]}


def test_the_address_reopens_the_same_user_and_chat(app_env, coordinator) -> None:
    coordinator.add_message("carol", "s-older", "user", "About my knee")
    coordinator.add_message("carol", "s-newest", "user", "About my shoes")
    at = _opened({"user": "carol", "chat": "s-older"})
    no_errors(at)
    assert (at.session_state["user_id"], at.session_state["session_id"]) == ("carol", "s-older")
    shown = [str(e.value) for m in at.chat_message for e in m.markdown]
    assert "About my knee" in shown and "About my shoes" not in shown


@pytest.mark.parametrize("chat", ["s-not-hers", "s-of-dave", "bad\x01id", "x" * 300, "\u200b"])
def test_a_chat_that_is_not_the_users_opens_a_new_chat(chat: str, app_env, coordinator) -> None:
    coordinator.add_message("carol", "s-mine", "user", "About my knee")
    coordinator.add_message("dave", "s-of-dave", "user", "Dave's private chat")
    at = _opened({"user": "carol", "chat": chat})
    no_errors(at)
    assert at.session_state["user_id"] == "carol"
    assert at.session_state["session_id"] not in ("s-mine", "s-of-dave", chat)
    assert not [m for m in at.chat_message if m.name == "user"], "a new chat is empty"
    assert at.query_params["chat"] == at.session_state["session_id"]


def test_a_reload_of_a_new_chat_before_its_first_message_keeps_that_chat(
    app_env, coordinator
) -> None:
    coordinator.add_message("carol", "s-mine", "user", "About my knee")
    first = _opened({"user": "carol", "chat": "s-mine"})
    first.button(key="sb_new_session").click().run()
    new = first.session_state["session_id"]
    assert new != "s-mine" and first.query_params["chat"] == new
    again = _opened({"user": "carol", "chat": new})  # F5: a fresh run at that address
    no_errors(again)
    assert again.session_state["session_id"] == new
    assert not [m for m in again.chat_message if m.name == "user"], "still empty"
    # another user's chat of that form opens as an empty chat of hers: nothing of his shows
    coordinator.add_message("dave", "s-20261121-2254-3fa1", "user", "Dave's private chat")
    theirs = _opened({"user": "carol", "chat": "s-20261121-2254-3fa1"})
    assert theirs.session_state["session_id"] == "s-20261121-2254-3fa1"
    assert "Dave's private chat" not in str([m.markdown for m in theirs.chat_message])
    assert not [m for m in theirs.chat_message if m.name == "user"]
