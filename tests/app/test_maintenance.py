"""The Memories page's Maintenance tab (dry run, accept, reject, run now, undo) and the Stats
page's maintenance chart, on the real Redis with the fake Ollama."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest

from memory import Maintenance
from tests.app.conftest import no_errors, table_with, texts
from tests.app.test_stats import charts
from ui.format import md_text

SAME = ("I prefer morning workouts", "Morning workouts are what I prefer")
CHART = "Merged and expired per day"


@pytest.fixture
def paraphrases(coordinator):  # type: ignore[no-untyped-def]
    """Two wordings of one preference of alice, a different fact, and bob's own copy."""
    for text in SAME:
        coordinator.add_episodic("alice", text, event_type="preference")
    coordinator.add_episodic("alice", "I am allergic to peanuts", event_type="health_event")
    coordinator.add_episodic("bob", SAME[0], event_type="preference")
    coordinator.add_episodic("bob", SAME[1], event_type="preference")
    return coordinator


def statuses(at) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Memory text -> Status in the episodic table, as the user sees it."""
    df = at.dataframe(key="tbl_episodic").value
    return dict(zip(df["Memory"], df["Status"], strict=True))


def numbers(values: Any) -> list[float]:
    """A trace's values: plotly sends numpy arrays as {dtype, bdata} (base64)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), values["dtype"]).tolist()
    return list(values)


def dry_run(at):  # type: ignore[no-untyped-def]
    at.button(key="mt_dry").click().run()
    no_errors(at)
    return at


def test_dry_run_lists_the_merge_and_changes_nothing(paraphrases, make_app) -> None:
    at = dry_run(make_app("pages/memories.py"))
    proposal = table_with(at, "Role")
    assert set(proposal["Memory"]) == set(SAME)  # the two paraphrases, nothing else
    assert sorted(proposal["Role"]) == ["kept", "merged into it"]
    assert "1 merge to review, 0 memories to expire" in texts(at, "caption")
    assert "Nothing has changed yet." in texts(at, "caption")
    assert len([b for b in at.button if b.key and b.key.startswith("mt_accept_")]) == 1
    assert set(statuses(at).values()) == {"in use"}  # a dry run writes nothing


def test_accept_merges_and_undo_restores_both(paraphrases, make_app) -> None:
    at = dry_run(make_app("pages/memories.py"))
    kept = table_with(at, "Role").set_index("Role").loc["kept", "Memory"]
    accept = next(b for b in at.button if b.key and b.key.startswith("mt_accept_"))
    accept.click().run()
    no_errors(at)
    assert at.toast[0].value.startswith("Merged 2 memories into one")
    shown = statuses(at)
    active = sorted(t for t, s in shown.items() if s == "in use")
    assert active == sorted([kept, "I am allergic to peanuts"])  # one of the two is left
    assert sorted(shown.values()).count("↪ replaced") == 1
    assert not any(b.key and b.key.startswith("mt_accept_") for b in at.button)  # done
    # Past merges lists it, with the texts as plain text
    plain = texts(at, "text")
    assert f"Kept: {kept}" in plain and "Merged: " in plain

    undo = next(b for b in at.button if b.key and b.key.startswith("mt_undo_"))
    undo.click().run()
    no_errors(at)
    assert at.toast[0].value == "Merge undone: 2 memories are active again."
    assert {t: s for t, s in statuses(at).items() if t in SAME} == dict.fromkeys(SAME, "in use")
    assert not any(b.key and b.key.startswith("mt_undo_") for b in at.button)
    assert "undone" in texts(at, "caption")
    assert paraphrases.list_memories("bob", "episodic")[1] == 2  # bob's untouched


def test_reject_is_not_proposed_again(paraphrases, make_app) -> None:
    at = dry_run(make_app("pages/memories.py"))
    reject = next(b for b in at.button if b.key and b.key.startswith("mt_reject_"))
    reject.click().run()
    no_errors(at)
    assert at.toast[0].value.startswith("Rejected")
    at = dry_run(at)
    assert "No near-duplicate memories to merge." in [i.value for i in at.info]
    assert set(statuses(at).values()) == {"in use"}


def test_run_now_shows_the_report_and_stats_charts_it(paraphrases, make_app) -> None:
    at = make_app("pages/memories.py")
    assert any("Maintenance has not run yet" in i.value for i in at.info)
    at.button(key="mt_run").click().run()
    no_errors(at)
    assert at.toast[0].value == (
        "Maintenance ran for alice: 1 memory merged, 0 memories expired, 0 memories' importance "
        "adjusted, 0 chats summarised."
    )
    tiles = {m.label: m.value for m in at.metric}
    assert (tiles["Merged"], tiles["Expired"]) == ("1", "0")
    merged = table_with(at, "Kept")
    assert set(merged["Kept"]) | set(merged["Merged"]) == set(SAME)
    assert sorted(statuses(at).values()).count("↪ replaced") == 1

    stats = make_app("pages/stats.py")
    stats.session_state["stats_maintenance"] = True  # open its section
    stats.run()
    no_errors(stats)
    fig = charts(stats)[CHART]
    counts = {trace["name"]: numbers(trace["y"]) for trace in fig["data"]}
    assert counts == {"Merged": [1], "Expired": [0]}


def test_a_run_for_another_user_keeps_this_users_report(paraphrases, make_app) -> None:
    at = make_app("pages/memories.py")
    at.button(key="mt_run").click().run()
    no_errors(at)
    Maintenance.of(paraphrases).run(user_id="bob")  # "Run now" on bob's page, or the CLI

    at = make_app("pages/memories.py")
    no_errors(at)
    assert not any("did not cover alice" in i.value for i in at.info)
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Merged"] == "1"  # alice's own last run, still shown
    assert set(table_with(at, "Kept")["Kept"]) <= set(SAME)


def test_stats_explains_an_empty_maintenance_history(app_env, make_app) -> None:
    at = make_app("pages/stats.py", user="nobody")
    at.session_state["stats_maintenance"] = True  # open its section
    at.run()
    no_errors(at)
    assert CHART not in charts(at)
    assert any("No maintenance run yet" in c.value for c in at.caption)


def test_a_run_elsewhere_shows_a_message_not_a_traceback(paraphrases, make_app) -> None:
    keys = paraphrases.stores.keys
    paraphrases.stores.client.set(keys.maintenance_lock, "another-process", px=60_000)
    at = make_app("pages/memories.py")
    at.button(key="mt_run").click().run()
    assert not at.exception
    assert "already running elsewhere" in at.error[0].value
    assert set(statuses(at).values()) == {"in use"}


def test_a_summary_waiting_for_the_model_is_shown_and_run_now_writes_it(
    coordinator, shared_fake_ollama, make_app
) -> None:  # type: ignore[no-untyped-def]
    from memory import Maintenance
    from memory.models import now_ms

    for i in range(8):  # 16 messages: the newest 10 stay in the prompt, 6 are summarised
        coordinator.store_interaction("alice", "s-long", f"Training question {i}", f"Answer {i}")
    # A run without a model (the CLI's) finds the chat idle and leaves its summary waiting.
    Maintenance.of(coordinator).run(user_id="alice", at_ms=now_ms() + 7 * 3600 * 1000)
    coordinator.set_session_title("alice", "s-long", "Training plan")

    at = make_app("pages/memories.py")
    no_errors(at)
    assert any("Summaries waiting: 1" in w.value for w in at.warning)
    at.button(key="mt_dry").click().run()  # said in a sentence: its text is not written yet
    due = md_text("Training plan (16 messages: the chat went quiet)")  # its name, as elsewhere
    assert f"Would summarise 1 chat: {due}" in texts(at, "caption")

    # no count: "six" would be a number nobody said, refused as at a chat's end
    shared_fake_ollama.queue_structured({"summary": "The user asked training questions."})
    at.button(key="mt_run").click().run()
    no_errors(at)
    assert at.toast[0].value.endswith("1 chat summarised.")
    assert not any("Summaries waiting" in w.value for w in at.warning)
    done = table_with(at, "Summary")
    assert list(done["Summary"]) == ["The user asked training questions."]
    assert list(done["Chat"]) == ["Training plan"]  # by its name, as the sidebar calls it


def test_importance_changes_read_as_words_with_their_numbers() -> None:
    from ui.maintenance import importance_changes_frame

    changed = [{"text": "**Ran** 16 km", "before": 0.3, "after": 0.37, "recalled": 1}]
    changed += [{"text": "Sleep", "before": 0.5, "after": 0.45, "recalled": 0}]
    assert importance_changes_frame(changed).to_dict("records") == [
        {"Memory": "Ran 16 km", "Before": "low (30%)", "After": "low (37%)", "Recalled": "1 time"},
        {"Memory": "Sleep", "Before": "medium (50%)", "After": "medium (45%)", "Recalled": "never"},
    ]


def test_runs_that_merged_nothing_are_a_sentence_not_empty_axes(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    """A second walk saw "Merged and expired per day" drawn with one day of zeros."""
    coordinator.add_episodic("zed", "I am allergic to peanuts", event_type="health_event")
    Maintenance.of(coordinator).run(user_id="zed")
    at = make_app("pages/stats.py", user="zed")
    at.session_state["stats_maintenance"] = True  # open its section
    at.run()
    no_errors(at)
    assert CHART not in charts(at)
    assert any("1 maintenance run: nothing to merge or expire yet." in c.value for c in at.caption)
