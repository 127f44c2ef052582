"""The sidebar memory editor (on every page): add, search, delete; users and sessions."""

from __future__ import annotations

import pytest

from memory.queries import ListQuery
from tests.app.conftest import no_errors, texts
from ui.format import md_text


@pytest.mark.parametrize("page", ["app.py", "pages/memories.py", "pages/stats.py"])
def test_every_page_has_the_sidebar_editor(app_env, make_app, page: str) -> None:
    at = make_app(page)
    no_errors(at)
    assert at.sidebar.button(key="sb_add_go").label == "Remember"
    assert at.sidebar.text_input(key="sb_search")
    assert at.sidebar.selectbox(key="sb_user").value == "alice"


def test_add_an_episodic_memory_then_delete_it(app_env, make_app, coordinator) -> None:
    at = make_app("pages/memories.py")
    assert "No memories yet for this user" in texts(at.sidebar, "caption")
    at.sidebar.selectbox(key="sb_add_kind").set_value("goal")
    at.sidebar.text_area(key="sb_add_text").input("Run a half marathon in April")
    at.sidebar.text_input(key="sb_add_tags").input("running, #Goals")
    at.sidebar.button(key="sb_add_go").click().run()
    no_errors(at)

    rows, total = coordinator.list_memories("alice", "episodic")
    assert total == 1
    mem = rows[0]
    assert (mem["text"], mem["event_type"], mem["tags"]) == (
        "Run a half marathon in April", "goal", ["running", "goals"],
    )  # fmt: skip
    assert at.toast[0].value.startswith("Remembered: Run a half marathon")
    assert at.sidebar.text_area(key="sb_add_text").value == ""  # cleared for the next one
    assert "Run a half marathon in April" in texts(at.sidebar)
    # the Memories page table shows it too
    assert "Run a half marathon in April" in set(at.dataframe(key="tbl_episodic").value["Memory"])

    at.sidebar.button(key=f"sb_row_{mem['id']}_del").click().run()
    no_errors(at)
    # gone from the list at once, with Undo offered; not deleted while it is offered
    notice = [c.value for c in at.sidebar.caption if "Deleted" in c.value]
    assert [n.split(" · ")[0] for n in notice] == ["🗑️ Deleted “Run a half marathon in April”"]
    assert notice[0].endswith(" s to undo")  # the seconds left, counted down
    assert coordinator.list_memories("alice", "episodic")[1] == 1
    at.run()  # the next interaction carries it out
    no_errors(at)
    assert coordinator.list_memories("alice", "episodic")[1] == 0
    assert "Run a half marathon in April" not in texts(at.sidebar)


def test_add_a_semantic_fact(app_env, make_app, coordinator) -> None:
    at = make_app("app.py")
    at.sidebar.radio(key="sb_add_type").set_value("semantic").run()
    at.sidebar.text_input(key="sb_add_category").input("nutrition")
    at.sidebar.text_area(key="sb_add_text").input("Lentils are rich in iron")
    at.sidebar.button(key="sb_add_go").click().run()
    no_errors(at)
    rows, _ = coordinator.list_memories("alice", "semantic", ListQuery(category="nutrition"))
    mine = [r["text"] for r in rows if r["added_by"] == "alice"]
    assert mine == ["Lentils are rich in iron"]
    assert "Lentils are rich in iron" in texts(at.sidebar)  # recent: facts this user added


def test_empty_text_is_refused_with_a_message(app_env, make_app, coordinator) -> None:
    at = make_app("app.py")
    at.sidebar.button(key="sb_add_go").click().run()
    assert at.warning[0].value == "Write what should be remembered first."
    assert coordinator.list_memories("alice", "episodic")[1] == 0


def test_search_finds_memories_with_their_relevance(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    at = make_app("app.py")
    at.sidebar.text_input(key="sb_search").input("vegetarian food").run()
    no_errors(at)
    found = texts(at.sidebar)
    assert "I am vegetarian" in found and "📔 About you" in found


def test_a_memory_in_markdown_is_listed_as_text(app_env, make_app, coordinator) -> None:
    """Search hits and the recent list name a memory as the words typed: no heading, no link."""
    text = "# Big heading [click](http://example.com) **bold** vegetarian"
    coordinator.add_episodic("alice", text, event_type="preference")
    at = make_app("app.py")
    at.sidebar.text_input(key="sb_search").input("vegetarian").run()
    no_errors(at)
    rows = [str(m.value) for m in at.sidebar.markdown if "Big heading" in str(m.value)]
    assert len(rows) == 3, rows  # in the profile, the search hits and the recent memories
    shown = md_text("# Big heading [click](http://example.com) **bold**")
    assert all(r.startswith(shown) for r in rows), rows


def test_switching_users_shows_only_their_memories(app_env, make_app, coordinator) -> None:
    # (typing a brand-new user name is covered by the browser tests: AppTest cannot type
    # into a selectbox that accepts new options)
    coordinator.add_episodic("alice", "Alice likes tea", event_type="preference")
    coordinator.add_episodic("bob", "Bob likes coffee", event_type="preference")
    at = make_app("app.py")
    assert at.sidebar.selectbox(key="sb_user").options == ["alice", "bob"]
    assert "Alice likes tea" in texts(at.sidebar)
    at.sidebar.selectbox(key="sb_user").set_value("bob").run()
    no_errors(at)
    assert at.session_state["user_id"] == "bob"
    assert "Alice likes tea" not in texts(at.sidebar)
    assert "Bob likes coffee" in texts(at.sidebar)
    assert "You are **bob**" in texts(at, "caption")


def test_new_chat_starts_a_new_session(app_env, make_app) -> None:
    at = make_app("app.py", session="s-old")
    at.sidebar.button(key="sb_new_session").click().run()
    no_errors(at)
    new = at.session_state["session_id"]
    assert new != "s-old" and new.startswith("s-")
    assert at.sidebar.selectbox(key="sb_session").value == new


def test_the_kind_is_guessed_from_the_text_and_can_be_chosen(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    at = make_app("app.py")
    at.sidebar.text_area(key="sb_add_text").input("My daughter Lina starts school in September")
    at.run()
    kind = at.sidebar.selectbox(key="sb_add_kind")
    assert kind.value == "guess" and kind.format_func("guess") == "✨ Guess from the text"
    assert "✨ Guessed kind: Fact" in texts(at.sidebar, "caption")  # the guess, beside it
    at.sidebar.button(key="sb_add_go").click().run()
    no_errors(at)
    at.sidebar.text_area(key="sb_add_text").input("I want to swim 2 km without stopping")
    at.sidebar.selectbox(key="sb_add_kind").set_value("milestone")
    at.sidebar.button(key="sb_add_go").click().run()
    no_errors(at)

    rows, _ = coordinator.list_memories("alice", "episodic")
    kinds = {r["text"]: r["event_type"] for r in rows}
    assert kinds == {
        "My daughter Lina starts school in September": "fact",  # the guess of `memory add`
        "I want to swim 2 km without stopping": "milestone",  # the person's choice
    }
    assert at.sidebar.selectbox(key="sb_add_kind").value == "guess"  # reset for the next


def test_edit_and_pin_a_memory_from_the_sidebar(app_env, make_app, coordinator) -> None:  # type: ignore[no-untyped-def]
    mem = coordinator.add_episodic("alice", "I run on Sundays", event_type="health_event")
    at = make_app("app.py")
    assert "📔 About you · Health event" in texts(at.sidebar)  # people's words
    key = f"sb_row_{mem.id}"
    at.sidebar.text_area(key=f"{key}_text").input("I run on Saturdays")
    at.sidebar.selectbox(key=f"{key}_kind").set_value("preference")
    at.sidebar.button(key=f"{key}_save").click().run()
    no_errors(at)
    rec = coordinator.get_memory("alice", "episodic", mem.id)
    assert (rec["text"], rec["event_type"]) == ("I run on Saturdays", "preference")
    assert at.toast[0].value == "Saved “I run on Saturdays”: text and kind."

    at.sidebar.button(key=f"{key}_pin").click().run()
    no_errors(at)
    assert coordinator.get_memory("alice", "episodic", mem.id)["pinned"] is True
    assert at.toast[0].value == "Pinned “I run on Saturdays”."
    assert "📌 I run on Saturdays" in texts(at.sidebar)
    at.sidebar.button(key=f"{key}_pin").click().run()  # the same button unpins
    assert coordinator.get_memory("alice", "episodic", mem.id)["pinned"] is False


def test_two_chats_of_one_name_are_told_apart_and_each_can_be_picked(
    app_env, make_app, coordinator
) -> None:
    for session in ("s-first", "s-second"):
        coordinator.add_message("alice", session, "user", "Which days do I swim?")
        coordinator.set_session_title("alice", session, "Maya demo walk")
    at = make_app("app.py", session="s-first")
    picker = at.sidebar.selectbox(key="sb_session")
    names = [picker.format_func(s) for s in picker.options]
    assert len(set(names)) == len(names)  # the picker hands back the chat of the name picked
    assert {"Maya demo walk", "Maya demo walk (2)"} <= set(names)
    picker.set_value("s-second").run()
    no_errors(at)
    assert at.session_state["session_id"] == "s-second"


def test_a_rename_names_only_its_own_chat(app_env, make_app, coordinator) -> None:
    coordinator.add_message("alice", "s-old", "user", "Plan my running this week")
    at = make_app("app.py", session="s-old")
    at.sidebar.text_input(key="sb_title_s-old").input("Maya demo walk").run()
    no_errors(at)
    at.sidebar.button(key="sb_new_session").click().run()
    no_errors(at)
    new = at.session_state["session_id"]
    assert at.sidebar.text_input(key=f"sb_title_{new}").value == ""  # a box of its own
    titles = coordinator.short_term.titles("alice")
    assert titles.get("s-old") == "Maya demo walk" and new not in titles


def _profile_reads(coordinator) -> int:
    """The profile's index queries the server has run (its three aggregations per read)."""
    stats = coordinator.redis.info("commandstats").get("cmdstat_FT.AGGREGATE", {})
    return int(stats.get("calls", 0))


def test_the_profile_panel_reads_the_profile_once_per_write(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I prefer short answers", event_type="preference")
    at = make_app("app.py")
    no_errors(at)
    assert "I prefer short answers" in texts(at.sidebar)
    before = _profile_reads(coordinator)

    at.run()  # a rerun (a click elsewhere) with nothing written: the profile is not read again
    no_errors(at)
    assert _profile_reads(coordinator) == before
    assert "I prefer short answers" in texts(at.sidebar)

    coordinator.add_episodic("alice", "I am allergic to peanuts", event_type="health_event")
    at.run()  # a write: read again, the new line shown
    no_errors(at)
    assert _profile_reads(coordinator) > before
    assert "I am allergic to peanuts" in texts(at.sidebar)


def test_a_chat_with_messages_is_called_by_its_name_not_new(app_env, make_app, coordinator) -> None:
    old = "s-20261117-1845-demo"  # no title, as the demo persona's chats
    coordinator.add_message("alice", old, "user", "How is my ankle doing?")
    at = make_app("app.py", session=old)
    no_errors(at)
    caption = texts(at, "caption")
    assert f"in “{md_text('Chat of 17 Nov 2026, 18:45')}”" in caption  # escaped markdown
    assert "new chat" not in caption
    at.sidebar.button(key="sb_new_session").click().run()
    assert "in a new chat" in texts(at, "caption")


def test_a_fact_added_in_the_sidebar_follows_the_pii_policy(
    app_env, make_app, coordinator, monkeypatch
) -> None:
    """The sidebar's fact went to the write without PII_POLICY: the store masked it, but the
    check for a repeat compared the unmasked text, so the same fact said twice was kept twice."""
    monkeypatch.setenv("PII_POLICY", "mask")
    at = make_app("app.py", user="pii")
    at.sidebar.radio(key="sb_add_type").set_value("semantic").run()
    for _ in range(2):
        at.sidebar.text_area(key="sb_add_text").input(
            "The club's secretary is ana.lopez@example.com"
        )
        at.sidebar.button(key="sb_add_go").click().run()
        no_errors(at)
    rows, _ = coordinator.list_memories("pii", "semantic", ListQuery())
    (fact,) = [r["text"] for r in rows if r["added_by"] == "pii"]
    assert "ana.lopez@example.com" not in fact and "secretary" in fact
