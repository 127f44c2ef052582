"""The Memories page: tables per type, filters, edit (re-embedded), pin, bulk delete with
Undo, search, add, export/import with validation, clear session / purge user."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from memory.queries import ListQuery
from tests.app.conftest import no_errors, table_with, texts

DAY_MS = 86_400_000


def select_rows(at, table_key: str, rows: list[int]):  # type: ignore[no-untyped-def]
    """Tick rows of a table (what the checkbox column does in the browser)."""
    at.session_state[table_key] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    return at.run()


@pytest.fixture
def alice(coordinator):  # type: ignore[no-untyped-def]
    """Three episodic memories of alice (newest first in tables) and one of bob."""
    now = coordinator.add_episodic("alice", "I am vegetarian", event_type="preference",
                                   tags=["food"]).timestamp  # fmt: skip
    coordinator.add_episodic("alice", "Ran my first 10k", event_type="milestone",
                             tags=["running"], timestamp_ms=now - 40 * DAY_MS)  # fmt: skip
    coordinator.add_episodic("alice", "Train for a half marathon", event_type="goal",
                             tags=["running"], timestamp_ms=now - 10 * DAY_MS)  # fmt: skip
    coordinator.add_episodic("bob", "Bob hates running", event_type="preference")
    return coordinator


def answered_with_vegetarian(coordinator) -> None:  # type: ignore[no-untyped-def]
    """One stored answer (in chat s-used) used "I am vegetarian"."""
    rows, _ = coordinator.list_memories("alice", "episodic")
    veg = next(r["id"] for r in rows if r["text"] == "I am vegetarian")
    coordinator.store_interaction(
        "alice", "s-used", "What do I eat?", "Vegetarian food.", turn_id="T1", used=[veg],
        store_episode=False,
    )  # fmt: skip


def episodic_texts(at) -> list[str]:  # type: ignore[no-untyped-def]
    return list(at.dataframe(key="tbl_episodic").value["Memory"])


def test_empty_state_tells_a_new_user_what_to_do(app_env, make_app) -> None:
    at = make_app("pages/memories.py", user="nobody")
    no_errors(at)
    assert at.title[0].value == "🗂️ Memories"
    assert "No episodic memories yet" in at.info[0].value
    assert [m.value for m in at.metric][:1] == ["0"]


def test_tables_show_each_type_for_this_user_only(alice, make_app) -> None:
    alice.record_procedure("alice", "how did I sleep last week", ["get_sleep", "aggregate"],
                           success_score=0.9, execution_time_ms=120)  # fmt: skip
    alice.add_message("alice", "s-test", "user", "hello")
    at = make_app("pages/memories.py")
    no_errors(at)
    assert episodic_texts(at) == [
        "I am vegetarian", "Train for a half marathon", "Ran my first 10k",
    ]  # fmt: skip
    assert {m.label: m.value for m in at.metric}["📔 About you"] == "3"
    proc = at.dataframe(key="tbl_procedural").value
    assert list(proc["Best tools"]) == ["used “get sleep”, then used “aggregate”"]  # no code
    assert 0 < proc["Confidence"][0] < 100  # percent
    assert list(table_with(at, "Message")["Message"]) == ["hello"]
    assert len(at.dataframe(key="tbl_semantic").value) > 0  # the knowledge file's facts


def test_filters_by_kind_tags_date_and_pinned(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at.button_group(key="f_ep_kinds").set_value(["goal", "milestone"]).run()
    assert episodic_texts(at) == ["Train for a half marathon", "Ran my first 10k"]
    at.button_group(key="f_ep_kinds").set_value([]).run()

    at.text_input(key="f_ep_tags").input("food").run()
    assert episodic_texts(at) == ["I am vegetarian"]
    table = at.dataframe(key="tbl_episodic").value  # tags read as text, next to the kind
    assert list(table["Tags"]) == ["food"] and list(table.columns).index("Tags") == 3
    # then whether it is replaced, before the dates: on a laptop's screen, not past its edge
    assert list(table.columns)[4:6] == ["Status", "When"]
    at.text_input(key="f_ep_tags").input("").run()

    start = date.today() - timedelta(days=20)
    at.date_input(key="f_ep_dates").set_value((start, date.today())).run()
    assert "Ran my first 10k" not in episodic_texts(at)
    at.date_input(key="f_ep_dates").set_value(()).run()

    at.selectbox(key="f_ep_pinned").set_value("Pinned").run()
    assert "No episodic memory matches these filters." in at.info[0].value
    no_errors(at)


def test_edit_re_embeds_and_pins(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [0])  # "I am vegetarian"
    mid = next(r["id"] for r in alice.list_memories("alice", "episodic")[0]
               if r["text"] == "I am vegetarian")  # fmt: skip
    form = f"ed_ep_{mid}"
    at.text_area(key=f"{form}_text").input("I am vegan")
    importance = at.select_slider(key=f"{form}_importance")
    assert (importance.value, importance.options) == ("medium", ["low", "medium", "high"])
    importance.set_value("high")
    at.checkbox(key=f"{form}_pinned").check()
    at.button(key=f"{form}_save").click().run()
    no_errors(at)

    rec = alice.get_memory("alice", "episodic", mid)
    assert (rec["text"], rec["importance"], rec["pinned"]) == ("I am vegan", 0.8, True)
    assert at.toast[0].value == "Saved “I am vegan”: text, importance and pin."
    hits = alice.search("alice", "vegan diet", "episodic", k=1)
    assert hits[0].id == mid  # found by the new text: the vector was recomputed
    at.selectbox(key="f_ep_pinned").set_value("Pinned").run()
    assert episodic_texts(at) == ["I am vegan"]


def test_bulk_delete_offers_undo_then_deletes(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [1, 2])
    at.button(key="delete_sel_episodic").click().run()
    no_errors(at)
    assert "🗑️ Deleted 2 memories · " in texts(at, "caption")
    assert at.button(key="undo_delete_episodic").label == "Undo"
    assert episodic_texts(at) == ["I am vegetarian"]  # hidden at once...
    assert alice.list_memories("alice", "episodic")[1] == 3  # ...deleted only after the Undo
    at.run()  # the next interaction carries it out
    no_errors(at)
    assert alice.list_memories("alice", "episodic")[1] == 1
    assert alice.list_memories("bob", "episodic")[1] == 1  # bob's untouched


def listed_and_tile(at) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The episodic table's "N listed" caption and the Episodic tile."""
    listed = next(str(c.value) for c in at.caption if " listed" in str(c.value))
    return listed.split(";")[0], at.metric[0].value


def test_a_waiting_delete_leaves_the_tile_and_the_listed_count_with_the_table(
    alice, make_app
) -> None:
    """docs/demo.md: a delete updates the tiles and the tables in the same moment."""
    at = make_app("pages/memories.py")
    assert listed_and_tile(at) == ("3 listed", "3")
    at = select_rows(at, "tbl_episodic", [1])
    at.button(key="delete_sel_episodic").click().run()
    no_errors(at)
    assert len(episodic_texts(at)) == 2 and alice.list_memories("alice", "episodic")[1] == 3
    assert listed_and_tile(at) == ("2 listed", "2")  # while the Undo is offered
    at.button(key="undo_delete_episodic").click().run()
    no_errors(at)
    assert listed_and_tile(at) == ("3 listed", "3")  # kept: counted again


def test_a_waiting_delete_of_a_fact_leaves_its_tile_and_count(alice, make_app) -> None:
    alice.add_semantic("My club trains on Tuesdays", added_by="alice")
    at = make_app("pages/memories.py")
    at.toggle(key="f_sem_mine").set_value(True).run()
    assert "1 fact" in [c.value for c in at.caption]
    tile = int(at.metric[1].value)
    at = select_rows(at, "tbl_semantic", [0])
    at.button(key="delete_sel_semantic").click().run()
    no_errors(at)
    assert "0 facts" in [c.value for c in at.caption] and int(at.metric[1].value) == tile - 1


def editors(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts in the episodic editor (one per selected memory: none, or one)."""
    return [t.value for t in at.text_area if str(t.key).startswith("ed_ep_")]


def test_a_ticked_memory_stays_ticked_by_its_id_when_the_filters_change(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    assert episodic_texts(at) == [
        "I am vegetarian",
        "Train for a half marathon",
        "Ran my first 10k",
    ]
    at = select_rows(at, "tbl_episodic", [2])  # "Ran my first 10k"
    at.button_group(key="f_ep_kinds").set_value(["milestone"]).run()  # now its first row
    no_errors(at)
    assert episodic_texts(at) == ["Ran my first 10k"]
    assert "**Selected:** “Ran my first 10k”" in texts(at)  # named before any bulk action
    assert editors(at) == ["Ran my first 10k"]  # the editor opens on the same memory

    at = select_rows(at, "tbl_episodic", [])
    at.button_group(key="f_ep_kinds").set_value([]).run()
    at = select_rows(at, "tbl_episodic", [1])  # "Train for a half marathon"
    at.button_group(key="f_ep_kinds").set_value(["preference", "milestone"]).run()
    no_errors(at)
    # its row number now belongs to "Ran my first 10k": nothing is ticked, nothing offered
    assert episodic_texts(at) == ["I am vegetarian", "Ran my first 10k"]
    assert not any(b.key == "delete_sel_episodic" for b in at.button)
    assert editors(at) == []


def test_undo_keeps_the_memories(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [0])
    at.button(key="delete_sel_episodic").click().run()
    at.button(key="undo_delete_episodic").click().run()
    no_errors(at)
    at.run()
    assert alice.list_memories("alice", "episodic")[1] == 3
    assert len(episodic_texts(at)) == 3


def test_pin_selected(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [0, 1])
    at.button(key="pin_sel_episodic").click().run()
    no_errors(at)
    assert sorted(at.dataframe(key="tbl_episodic").value["📌"]) == ["", "📌", "📌"]


def test_pause_and_resume_selected(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [0])
    at.button(key="pause_sel_episodic").click().run()
    no_errors(at)
    assert at.toast[0].value == "Paused 1."
    rows, total = alice.list_memories("alice", "episodic")
    assert total == 3 and [bool(r["paused"]) for r in rows].count(True) == 1  # still listed
    at = select_rows(at, "tbl_episodic", [0, 1, 2])
    at.button(key="resume_sel_episodic").click().run()
    no_errors(at)
    assert not any(r["paused"] for r in alice.list_memories("alice", "episodic")[0])


def test_hybrid_search_shows_score_parts(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at.text_input(key="s_query").input("half marathon training")
    at.button(key="s_go").click().run()
    no_errors(at)
    words = table_with(at, "Why")  # at first: the match and why in words, no numbers
    assert list(words.columns) == ["Type", "Memory", "Band", "Why"]
    assert words["Band"][0].endswith(" match") and words["Why"][0]
    at.toggle(key="s_scores").set_value(True).run()
    df = table_with(at, "Vector")
    assert df["Memory"][0] == "Train for a half marathon"
    main = {"Type", "Memory", "Score", "Band", "Vector", "Keywords"}
    assert main <= set(df.columns)
    # the small nudges and the parts no result has are left out: the text column keeps its room
    assert not {"Recency", "Importance"} & set(df.columns)
    assert all((df[c] != 0).any() for c in set(df.columns) - main)
    assert "Bob hates running" not in set(df["Memory"])  # other users' memories never show


def test_the_search_floor_is_asked_in_words_and_keeps_its_number(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    floor = at.slider(key="s_min")
    assert floor.label == "How close a match must be" and 0 < floor.value < 1
    floor.set_value(1.0)
    at.text_input(key="s_query").input("half marathon training")
    at.button(key="s_go").click().run()
    no_errors(at)
    assert any("lower “How close a match must be” under Options" in i.value for i in at.info)


def test_add_with_kind_tags_importance_and_expiry(app_env, make_app, coordinator) -> None:
    at = make_app("pages/memories.py")
    # "Never expires" (ticked by default) disables the date at once: it is outside the form
    assert at.date_input(key="a_expires").disabled
    at.checkbox(key="a_never").uncheck().run()
    assert not at.date_input(key="a_expires").disabled
    at.text_area(key="a_text").input("Knee injury, no running for two weeks")
    at.selectbox(key="a_kind").set_value("health_event")
    at.text_input(key="a_tags").input("knee, injury")
    at.select_slider(key="a_importance").set_value("high")
    at.button(key="a_go").click().run()
    no_errors(at)
    assert at.success[0].value.startswith("Remembered: Knee injury")
    at.text_area(key="a_text").input("# Rest **days** [plan](http://example.com)")
    at.button(key="a_go").click().run()
    no_errors(at)  # the notice quotes the memory as typed, never as a heading or a link
    assert at.success[0].value.startswith(r"Remembered: \# Rest \*\*days\*\* \[plan\]")
    rec = coordinator.list_memories("alice", "episodic", ListQuery(tags=["knee"]))[0][0]
    assert (rec["event_type"], rec["tags"], rec["importance"]) == (
        "health_event", ["knee", "injury"], 0.8,
    )  # fmt: skip
    assert rec["expires_at"] > rec["timestamp"]
    # the grid says it in words too (the number is no person's measure)
    grid = at.dataframe(key="tbl_episodic").value
    assert grid.loc[grid["Memory"].str.startswith("Knee injury"), "Importance"].tolist() == ["high"]
    # and the rows a phone reads instead of the grid (markdown: its colons escaped)
    (row,) = [
        m.value for m in at.markdown if m.value.startswith("Knee injury") and "Kind" in m.value
    ]
    assert "Importance\\: high" in row, row


def test_export_then_import_into_a_purged_user(alice, make_app) -> None:
    answered_with_vegetarian(alice)
    exported = json.dumps(alice.export_user("alice")).encode()
    at = make_app("pages/memories.py")
    assert at.get("download_button")[0].proto.label == "Download JSON"

    # purge behind a confirmation: the button stays disabled until the user id is typed
    assert at.button(key="c_purge_go").disabled
    at.text_input(key="c_purge_confirm").input("alice").run()
    at.button(key="c_purge_go").click().run()
    no_errors(at)
    assert alice.list_memories("alice", "episodic")[1] == 0
    assert at.toast[0].value.startswith("Purged alice")

    at.file_uploader(key="x_upload").upload("memories-alice.json", exported, "application/json")
    at.run()
    assert "File for user **alice**: 3 episodic" in texts(at, "caption")
    at.button(key="x_import").click().run()
    no_errors(at)
    assert at.success[0].value.startswith("Imported memories about you: 3 ·")
    assert alice.list_memories("alice", "episodic")[1] == 3
    assert alice.list_memories("bob", "episodic")[1] == 1
    at = make_app("pages/memories.py")
    table = at.dataframe(key="tbl_episodic").value
    used = dict(zip(table["Memory"], table["Used in"], strict=True))
    assert used["I am vegetarian"].startswith("1 answer, last on ")  # the usage came back
    assert used["Ran my first 10k"] == "no answer yet"


def test_invalid_import_shows_why_and_writes_nothing(alice, make_app) -> None:
    doc = alice.export_user("alice")
    doc["episodic"].append({"id": "x", "description": ""})  # an invalid record at the end
    at = make_app("pages/memories.py", user="carol")
    at.file_uploader(key="x_upload").upload("bad.json", json.dumps(doc).encode(), "text/json")
    at.run()
    at.button(key="x_import").click().run()
    assert not at.exception
    assert at.error[0].value.startswith("Nothing was imported:")
    assert alice.list_memories("alice", "episodic")[1] == 3  # unchanged

    at.file_uploader(key="x_upload").set_value(("junk.json", b"{not json", "text/json"))
    at.run()
    at.button(key="x_import").click().run()
    assert at.error[0].value.startswith("Nothing was imported:")


def test_clear_session_needs_a_tick(alice, make_app) -> None:
    alice.add_message("alice", "s-test", "user", "hello")
    at = make_app("pages/memories.py")
    assert at.button(key="c_session_go").disabled
    at.checkbox(key="c_session_sure").check().run()
    at.button(key="c_session_go").click().run()
    no_errors(at)
    assert "Deleted 1 message" in at.success[0].value
    assert alice.recent_messages("alice", "s-test") == []
    assert alice.list_memories("alice", "episodic")[1] == 3  # long-term memories stay


def test_import_goes_into_the_user_on_the_page_never_the_files_owner(alice, make_app) -> None:
    """In a demo with several users, mallory uploading alice's export (even in replace mode)
    must not touch alice's memories: the page imports into the user it shows."""
    doc = alice.export_user("alice")
    doc["episodic"] = doc["episodic"][:1]
    at = make_app("pages/memories.py", user="mallory")
    at.file_uploader(key="x_upload").upload("a.json", json.dumps(doc).encode(), "text/json")
    at.run()
    assert "will be imported into **mallory**" in texts(at, "caption")
    at.radio(key="x_mode").set_value("replace").run()
    at.button(key="x_import").click().run()
    no_errors(at)
    assert at.success[0].value.startswith("Imported memories about you: 1 ·")
    assert alice.list_memories("alice", "episodic")[1] == 3  # untouched
    assert alice.list_memories("mallory", "episodic")[1] == 1


def test_import_error_says_nothing_was_imported_once(alice, make_app) -> None:
    at = make_app("pages/memories.py")
    at.file_uploader(key="x_upload").set_value(("junk.json", b"{not json", "text/json"))
    at.run()
    at.button(key="x_import").click().run()
    msg = at.error[0].value
    assert msg.startswith("Nothing was imported: Not a JSON file")
    assert msg.lower().count("nothing was imported") == 1


def test_import_shows_its_progress(alice, make_app, monkeypatch) -> None:
    """The page's progress bar is fed while the import runs; the run after it (the page
    refreshes with the import done) says what was imported."""
    exported = json.dumps(alice.export_user("alice")).encode()
    seen: list[tuple[str, int, int]] = []
    real_import = alice.import_user

    def import_user(data, **kw):  # type: ignore[no-untyped-def]
        bar = kw["progress"]

        def progress(stage: str, done: int, total: int) -> None:
            seen.append((stage, done, total))
            bar(stage, done, total)

        return real_import(data, **{**kw, "progress": progress})

    monkeypatch.setattr(alice, "import_user", import_user)
    at = make_app("pages/memories.py", user="dora")
    at.file_uploader(key="x_upload").upload("a.json", exported, "application/json")
    at.run()
    at.button(key="x_import").click().run()
    no_errors(at)
    assert seen and seen[-1] == ("writing", 3, 3), seen
    assert at.success[0].value.startswith("Imported memories about you: 3 ·")


def test_a_file_nested_1000_deep_is_refused_in_words(alice, make_app) -> None:
    deep = '{"format": "coala-memory-export", "a": ' + '{"a":' * 1000 + "1" + "}" * 1001
    at = make_app("pages/memories.py", user="dora")
    at.file_uploader(key="x_upload").upload("deep.json", deep.encode(), "application/json")
    at.run()
    assert not at.exception
    at.button(key="x_import").click().run()
    assert not at.exception
    assert "nested deeper than" in at.error[0].value


def test_tiles_tables_and_message_agree_right_after_each_action(alice, make_app) -> None:
    """Add, import and clear: the run that shows the success message already shows the
    new counts and rows (the page never lags one action behind)."""
    exported = json.dumps(alice.export_user("bob")).encode()
    at = make_app("pages/memories.py")
    assert at.metric[0].value == "3"
    at.text_area(key="a_text").input("I swim on Fridays")
    at.button(key="a_go").click().run()
    no_errors(at)
    assert at.success[0].value.startswith("Remembered: I swim on Fridays")
    assert at.metric[0].value == "4"
    assert "I swim on Fridays" in episodic_texts(at)

    at.file_uploader(key="x_upload").upload("bob.json", exported, "application/json")
    at.run()
    at.button(key="x_import").click().run()
    no_errors(at)
    assert at.success[0].value.startswith("Imported memories about you: 1 ·")
    assert at.metric[0].value == "5"
    assert "Bob hates running" in episodic_texts(at)

    alice.add_message("alice", "s-test", "user", "hello")
    at.run()
    assert at.metric[3].value == "1"
    at.checkbox(key="c_session_sure").check().run()
    at.button(key="c_session_go").click().run()
    no_errors(at)
    assert "Deleted 1 message" in at.success[0].value
    assert at.metric[3].value == "0"


def test_conversations_are_hidden_from_the_table_unless_asked(alice, make_app) -> None:
    alice.add_episodic("alice", "User asked about shoes", event_type="interaction")
    at = make_app("pages/memories.py")
    no_errors(at)
    assert "User asked about shoes" not in episodic_texts(at)
    assert at.metric[0].value == "3"  # the tile counts what the table shows
    at.toggle(key="f_ep_talk").set_value(True).run()
    no_errors(at)
    assert "User asked about shoes" in episodic_texts(at)
    assert len(alice.list_memories("alice", "episodic")[0]) == 4  # storage unchanged


def test_usage_per_memory_and_the_never_used_filter(alice, make_app) -> None:  # type: ignore[no-untyped-def]
    answered_with_vegetarian(alice)
    at = make_app("pages/memories.py")
    no_errors(at)
    table = at.dataframe(key="tbl_episodic").value
    used = dict(zip(table["Memory"], table["Used in"], strict=True))
    assert used["I am vegetarian"].startswith("1 answer, last on ")
    assert used["Ran my first 10k"] == "no answer yet"

    at.toggle(key="f_ep_never").set_value(True).run()
    assert sorted(episodic_texts(at)) == ["Ran my first 10k", "Train for a half marathon"]
    at.toggle(key="f_ep_never").set_value(False).run()

    at = select_rows(at, "tbl_episodic", [episodic_texts(at).index("I am vegetarian")])
    shown = texts(at, "markdown")
    assert "**Used in 1 answer, last on " in shown
    assert "[What do I eat\\?](./?user=alice&chat=s-used)" in shown  # a link to that chat


def test_a_question_that_used_a_memory_is_shown_as_text(alice, make_app) -> None:  # type: ignore[no-untyped-def]
    rows, _ = alice.list_memories("alice", "episodic")
    veg = next(r["id"] for r in rows if r["text"] == "I am vegetarian")
    hostile = "![x](http://127.0.0.1:9/x.png) [click](javascript:alert(1)) **bold**"
    alice.store_interaction(
        "alice", "s-used", hostile, "Noted.", turn_id="T1", used=[veg], store_episode=False
    )
    at = make_app("pages/memories.py")
    at = select_rows(at, "tbl_episodic", [episodic_texts(at).index("I am vegetarian")])
    (line,) = [m for m in texts(at, "markdown").splitlines() if "chat=s-used" in m]
    # one link, to the chat; the question's own markup is escaped: no image, link or bold
    assert line.count("](") == 1 and line.endswith("](./?user=alice&chat=s-used)")
    assert "\\!\\[x\\]" in line and "\\*\\*bold\\*\\*" in line


def test_a_50_mb_upload_is_scanned_once_whatever_the_reruns(app_env, make_app, monkeypatch) -> None:
    """The probe's shape at the size limit: an unterminated string of `\\"` pairs, 50 MB. The
    preview's scan runs for the upload, not again on each rerun the page makes (a click, the
    mode); a quadratic scan of it took hours, a linear one runs once."""
    from ui import manage

    scans: list[int] = []
    real = manage.safe_to_parse

    def counted(data: bytes) -> bool:
        scans.append(len(data))
        return real(data)

    monkeypatch.setattr(manage, "safe_to_parse", counted)
    hostile = b'"' + b'\\"' * (25 * 1024 * 1024 - 1)
    at = make_app("pages/memories.py", user="dora")
    at.file_uploader(key="x_upload").upload("probe.json", hostile, "application/json")
    at.run()
    at.radio(key="x_mode").set_value("replace").run()
    at.run()
    no_errors(at)
    assert scans == [len(hostile)]


def test_the_profile_says_truly_which_lines_always_go(app_env, make_app, coordinator) -> None:
    """A line about an allergy, condition or medicine always goes (decided by its words, as
    docs/agent.md says); a sore ankle logged as a health event is a standing line that may not
    fit, and the page says so instead of promising every health fact."""
    from agent.prompt import fit_profile
    from memory.demo import load_demo
    from memory.health import about_health

    load_demo(coordinator, "alice")
    allergy = coordinator.add_episodic(
        "alice", "I'm allergic to peanuts", event_type="health_event", importance=0.1
    )
    fit = fit_profile(coordinator.user_profile("alice"))
    assert allergy.id in [p.id for p, _ in fit.sent]  # least important, and still sent
    ankle = [p for p in fit.left_out if p.text.startswith("Left ankle a bit stiff")]
    assert ankle and ankle[0].kind == "health_event"
    assert not [p.text for p in fit.left_out if p.pinned or about_health(p.text)]

    at = make_app("pages/memories.py")
    no_errors(at)
    captions = [c.value for c in at.main.caption]  # the page (the sidebar folds it)
    sent = [c for c in captions if c.startswith("Sent to the model with every question")]
    left = [c for c in captions if "not fit the room" in c]
    assert len(sent) == 1 and len(left) == 1, captions
    assert "Left ankle a bit stiff" in left[0]
    for caption in (sent[0], left[0]):
        assert "about allergies, intolerances, conditions or medicines" in caption
        assert "health facts" not in caption and "health and safety" not in caption


def test_a_fact_is_edited_field_by_field_and_an_unchanged_save_says_so(
    coordinator, make_app
) -> None:
    fact = coordinator.add_semantic(
        "Stretch after every run.", added_by="alice", category="running", source="coach"
    )
    at = make_app("pages/memories.py")
    at.toggle(key="f_sem_mine").set_value(True).run()
    at = select_rows(at, "tbl_semantic", [0])
    form = f"ed_sem_{fact.id}"
    assert (
        at.text_input(key=f"{form}_category").value,
        at.text_input(key=f"{form}_source").value,
    ) == ("running", "coach")
    at.button(key=f"{form}_save").click().run()
    assert at.toast[0].value == "Nothing changed."

    at.text_area(key=f"{form}_text").input("Stretch after every long run.")
    at.text_input(key=f"{form}_category").input("recovery")
    at.button(key=f"{form}_save").click().run()
    no_errors(at)
    rec = coordinator.get_memory("alice", "semantic", fact.id)
    assert (rec["text"], rec["category"], rec["source"]) == (
        "Stretch after every long run.",
        "recovery",
        "coach",
    )
    assert at.toast[0].value == "Saved “Stretch after every long run\\.”: text and category."


def test_no_element_passes_the_width_argument_streamlit_deprecates(
    app_env, make_app, coordinator, caplog
) -> None:
    """The app's log said `use_container_width` "will be removed after 2025-12-31": the topic
    forget's preview table passed it (buttons take it silently); every element takes `width`."""
    import logging

    logging.getLogger("streamlit.deprecation_util").addHandler(caplog.handler)
    try:
        coordinator.add_episodic("alice", "My lawyer is called Sam", event_type="fact")
        at = make_app("pages/memories.py")
        at.text_input(key="fg_query").input("lawyer")
        at.button(key="fg_preview").click().run()
        no_errors(at)
        assert "My lawyer is called Sam" in set(table_with(at, "text")["text"])
    finally:
        logging.getLogger("streamlit.deprecation_util").removeHandler(caplog.handler)
    assert [r.getMessage() for r in caplog.records if "use_container_width" in r.getMessage()] == []


def test_the_forget_preview_shows_a_memory_as_its_words(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "> **Health**: my [ankle](http://h) is stiff")
    at = make_app("pages/memories.py")
    at.text_input(key="fg_query").input("ankle")
    at.button(key="fg_preview").click().run()
    no_errors(at)
    assert list(table_with(at, "text")["text"]) == ["Health: my ankle is stiff"]
