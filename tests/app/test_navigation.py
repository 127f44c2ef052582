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
    assert at.sidebar.button(key="sb_add_btn")
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
