"""The Execution details last: kept beside the answer in Redis, so a fresh
run of the same session (a reload, another tab, a restarted app) still shows them under the
earlier answers, with the finished status line; they lead with one plain line naming the
memories used, escaped."""

from __future__ import annotations

from memory import words
from memory.models import EventType
from tests.app.conftest import no_errors, texts


def expanders(at, label: str) -> list:  # type: ignore[no-untyped-def]
    return [e for e in at.expander if e.label == label]


def status_labels(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(e.label) for e in at.get("status")]


def test_details_and_status_line_survive_a_fresh_run_of_the_session(
    app_env, make_app, coordinator, agent
) -> None:
    coordinator.add_episodic(
        "maya", "I am training for a half marathon in April", event_type=EventType.GOAL
    )
    coordinator.add_episodic("maya", "I am vegetarian", event_type=EventType.PREFERENCE)
    at = make_app("app.py", user="maya", session="s-details")
    at.chat_input(key="chat_input").set_value(
        "Remember: my long runs are on Saturdays. What should I eat before my half marathon? "
        "I am vegetarian"
    ).run()
    no_errors(at)
    assert agent.wait_for_background(20)
    # The turn stored a memory, so the page ran again: the status line is still there.
    label = status_labels(at)
    assert len(label) == 1 and label[0].startswith("Checked ")
    first_lead = next(t for t in texts(at).splitlines() if t.startswith("Used "))

    again = make_app("app.py", user="maya", session="s-details")  # a reload: new state
    no_errors(again)
    assert not again.session_state["turn_details"], "nothing came from this browser session"
    assert [m.name for m in again.chat_message] == ["user", "assistant"]
    answer = again.chat_message[1]
    assert [e.label for e in answer.expander if "Execution" in str(e.label)] == [
        "🔍 Execution details"
    ]
    assert status_labels(again) == label
    shown = texts(again)
    assert first_lead in shown
    assert first_lead.startswith("Used 2 things I know about you: ")
    assert "“I am training for a half marathon…”" in first_lead
    assert "“I am vegetarian”" in first_lead
    # The memories with their full text, the stored memory, the scores behind Advanced.
    assert "I am training for a half marathon in April" in shown
    assert "My long runs are on Saturdays" in shown
    assert "Learning from this message: " in texts(again, "caption")
    assert [t.label for t in again.tabs][:5] == [
        "Recalled",
        "Tools (0)",
        "Stored (1)",
        "Prompt",
        "⚙️ Advanced",
    ]
    table = next(df.value for df in again.dataframe if "Memory" in df.value.columns)
    assert "I am vegetarian" in set(table["Memory"])
    stages = next(df.value for df in again.dataframe if "Stage" in df.value.columns)
    assert "Recalling memories" in set(stages["Stage"]) and "recall" not in set(stages["Stage"])
    # The Prompt tab lists the memories (both are standing ones: in the user profile's
    # section, not repeated among the searched); the raw fenced block is the Prompt tab's code.
    sections = words.table().block_sections  # the block's section titles in people's words
    assert sections["profile"] in shown.replace("\\", "")
    assert sections["episodic"] not in shown.replace("\\", "")
    assert any("<<<MEMORY" in str(c.value) for c in again.code)


def test_the_recalled_tab_marks_what_a_memory_only_answer_used(
    offline_env, make_app, coordinator
) -> None:
    """A reply without the model lists at most five memories: the status line and the
    Recalled tab say which of the memories checked it used, never more."""
    import re

    from ui.details import UNUSED_MARK, USED_MARK

    for i, place in enumerate(["the park", "the river", "the hills", "the track", "the beach",
                               "the forest", "the canal", "the lake"]):  # fmt: skip
        coordinator.add_episodic(
            "maya", f"I like running by {place} (route {i})", event_type=EventType.PREFERENCE
        )
    at = make_app("app.py", user="maya", session="s-used")
    at.chat_input(key="chat_input").set_value("Where do I like running?").run()
    no_errors(at)
    label = status_labels(at)[0]
    got = re.fullmatch(r"Checked (\d+) memories, used (\d+)", label)
    assert got, label
    checked, used = int(got[1]), int(got[2])
    assert 0 < used <= 5 < checked
    shown = texts(at)
    assert shown.count(USED_MARK) == used
    assert shown.count(UNUSED_MARK) == checked - used
    per_type = re.findall(r"· (\d+) checked, (\d+|none) used", shown)  # a header per type
    assert sum(int(c) for c, _ in per_type) == checked
    assert sum(int(u) for _, u in per_type if u != "none") == used
    # the Prompt tab does not say a model was given what no model read
    captions = texts(at, "caption")
    assert "No model answered this one: this is what a model would have been given" in captions
    assert "What the model was given" not in captions and " tokens)" not in captions


def test_the_lead_line_quotes_memories_as_plain_text(app_env, make_app, coordinator, agent) -> None:
    coordinator.add_episodic(
        "mallory",
        "I like **bold** plans ![x](http://example.invalid/a.png) :red[loud]",
        event_type=EventType.PREFERENCE,
    )
    at = make_app("app.py", user="mallory", session="s-hostile")
    at.chat_input(key="chat_input").set_value("What plans do I like?").run()
    assert agent.wait_for_background(20)
    at = make_app("app.py", user="mallory", session="s-hostile")
    no_errors(at)
    details = expanders(at, "🔍 Execution details")[0]
    markdown = "\n".join(str(m.value) for m in details.markdown)
    lead = next(t for t in markdown.splitlines() if t.startswith("Used 1 thing I know"))
    assert "\\*\\*bold\\*\\*" in lead and "**bold**" not in lead
    assert "I like \\*\\*bold\\*\\* plans \\!\\[x\\]" in markdown  # the full text, escaped
    assert "![" not in markdown.replace("\\!\\[", "")
    assert ":red[" not in markdown


def test_nothing_recalled_says_so_plainly(app_env, make_app, agent) -> None:
    at = make_app("app.py", user="newcomer-2", session="s-empty")
    at.chat_input(key="chat_input").set_value("Hello there").run()
    assert agent.wait_for_background(20)
    at = make_app("app.py", user="newcomer-2", session="s-empty")
    no_errors(at)
    assert "Used nothing I know about you" in texts(at)


def test_a_built_in_fact_is_never_called_recent_nor_dated(
    offline_env, make_app, coordinator
) -> None:
    """A knowledge-file fact is dated the day it was loaded: no tab dates it or says it was
    recalled for being recent (issue 45: "why: recent, important", and the Prompt tab's list
    dated it today); a person's own memory keeps its date."""
    import time

    from ui.format import fmt_day

    coordinator.add_semantic("Easy runs build the aerobic base", category="training")
    coordinator.add_episodic(
        "maya", "My easy runs are on Tuesdays", event_type=EventType.PREFERENCE
    )
    at = make_app("app.py", user="maya", session="s-built-in")
    at.chat_input(key="chat_input").set_value("Why do easy runs build the aerobic base?").run()
    no_errors(at)
    today = fmt_day(int(time.time() * 1000))
    details = expanders(at, "🔍 Execution details")[0]
    shown = "\n".join(str(m.value) for m in details.markdown)
    items = [x for x in shown.split("\n- ") if "aerobic base" in x or "Tuesdays" in x]
    fact = [x for x in items if "aerobic base" in x]
    mine = [x for x in items if "Tuesdays" in x]
    assert len(fact) == 2 and len(mine) == 2, items  # the Recalled tab's and the Prompt tab's
    recalled, prompt = fact
    assert today not in prompt, prompt
    assert today not in recalled and "recent" not in recalled, recalled
    assert today in mine[0], mine  # the Recalled tab dates hers (the profile's lines: no date)
