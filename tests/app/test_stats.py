"""The Stats page: metric tiles and plotly charts built from the recorded metrics."""

from __future__ import annotations

import json
import threading
import time

from memory.queries import ListQuery, SearchFilter
from tests.app.conftest import no_errors


def charts(at) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Plotly figures on the page by title (AppTest has no typed accessor)."""
    out = {}
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        out[fig["layout"]["title"]["text"]] = fig
    return out


def open_section(at, key: str):  # type: ignore[no-untyped-def]
    """Open a lazy expander (what clicking its header does in the browser)."""
    at.session_state[key] = True
    return at.run()


def test_stats_leads_with_three_plain_tiles(app_env, make_app, coordinator, agent) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")  # a hit
    coordinator.search(
        "alice", "zzzz qqqq", "episodic", where=SearchFilter(min_score=0.99)
    )  # a miss
    agent.chat("alice", "s-test", "What should I eat? I am vegetarian")
    agent.chat("alice", "s-test", "What should I eat? I am vegetarian")  # cached embedding

    at = make_app("pages/stats.py")
    no_errors(at)
    assert at.title[0].value == "📊 Stats"
    tiles = {m.label: m.value for m in at.metric}
    assert list(tiles) == [
        "Things I remember about you", "Answers that used memory", "Typical recall time",
    ]  # fmt: skip
    # alice's memories now: not the built-in facts, not the logged exchanges of the turns
    rows, _ = coordinator.list_memories("alice", "episodic", ListQuery(include_superseded=False))
    remembered = [r for r in rows if r["event_type"] != "interaction"]
    assert len(rows) > len(remembered)  # the two turns were logged
    assert int(tiles["Things I remember about you"]) == len(remembered) < 10
    assert tiles["Answers that used memory"].endswith("%")
    # in words people read, not milliseconds
    assert tiles["Typical recall time"].endswith(("second", "seconds")), tiles
    captions = " ".join(c.value for c in at.caption)
    assert "built-in facts every user shares" in captions
    # the tiles after the first count every user's answers: said under them
    assert "The first tile and the memory charts are about alice" in captions
    assert "count everyone who uses this app" in captions

    # alice's memories are all from today: sentences, not charts of one point or one bar
    assert set(charts(at)) <= {"Recall time before an answer"}  # details closed
    assert f"All {len(remembered)} memor" in captions and "date from" in captions
    assert "On " in captions and f"{len(remembered)} remembered" in captions

    at = open_section(at, "stats_recall")
    no_errors(at)
    names = {tr["name"] for tr in latency_figure(at)["data"]}
    assert any(n.startswith("About you · search") for n in names)
    hit_rate = next(f for t, f in charts(at).items() if t.startswith("How often recall found"))
    hit_types = {x for tr in hit_rate["data"] for x in tr["x"]}
    assert "About you" in hit_types and "Meaning" not in hit_types
    at = open_section(at, "stats_cache")
    at = open_section(at, "stats_more_memories")
    no_errors(at)
    assert {"Questions asked before", "Memories per type"} <= set(charts(at))


def test_answers_that_used_memory_counts_what_the_answers_used(
    offline_env, make_app, coordinator, agent
) -> None:
    """The tile counts the answers whose usage record (Memories' *Used in*) lists a memory,
    not those whose recall found anything: the second answer found this chat's messages and
    a weak memory but showed none, so it used nothing."""
    from agent.replies import answer_hits

    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    shown = agent.chat("alice", "s-test", "What should I eat? I am vegetarian")
    nothing = agent.chat("alice", "s-test", "zzzz qqqq")
    assert shown.mode == nothing.mode == "memory-only"
    assert answer_hits(shown.recalled, shown.stored)  # its reply lists the memory
    assert nothing.recalled.short_term and not answer_hits(nothing.recalled, nothing.stored)
    assert sum(u.answers for u in coordinator.usage.of("alice").values()) == 1

    at = make_app("pages/stats.py")
    no_errors(at)
    tile = next(m for m in at.metric if m.label == "Answers that used memory")
    assert tile.value == "50%"
    assert tile.help.startswith("1 of 2 answers in the window")


def test_type_operation_and_window_filters(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")
    at = open_section(make_app("pages/stats.py"), "stats_recall")
    assert at.radio(key="stats_ops").value == "Before an answer"
    names = {tr["name"] for tr in latency_figure(at)["data"]}
    assert "About you · search" in names and "About you · adding" not in names  # recall path only

    at.multiselect(key="stats_types").set_value(["About you"]).run()
    at.radio(key="stats_ops").set_value("Saving").run()
    assert {tr["name"] for tr in latency_figure(at)["data"]} == {"About you · adding"}
    at.selectbox(key="stats_window").set_value("Last 15 minutes").run()
    at.button(key="stats_refresh").click().run()
    no_errors(at)


def latency_figure(at) -> dict:  # type: ignore[no-untyped-def]
    return next(f for t, f in charts(at).items() if t.startswith("Time per step, per"))


def test_no_data_draws_no_empty_chart_and_says_why(app_env, make_app, coordinator) -> None:
    coordinator.metrics.flush()  # a store with no metrics yet
    coordinator.redis.delete(coordinator.keys.metrics_latency, coordinator.keys.metrics_counters)
    at = make_app("pages/stats.py", user="nobody")
    no_errors(at)
    assert not at.get("plotly_chart")
    captions = " ".join(c.value for c in at.caption)
    assert "no answers in this window yet" in captions
    assert "No memories of nobody yet" in captions
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Typical recall time"] == "–" and tiles["Things I remember about you"] == "0"
    at = open_section(at, "stats_recall")
    assert not at.get("plotly_chart")
    assert any("No measurements in this window" in c.value for c in at.caption)


def test_growth_and_activity_follow_each_memorys_own_date(app_env, make_app, coordinator):  # type: ignore[no-untyped-def]
    """A story loaded today spans its months: growth and activity are by each memory's own
    date; a replaced memory counts on the day of the one that replaced it; a forgotten one
    is counted, never named; logged exchanges are not things remembered."""
    from datetime import datetime

    from memory.admin.forget import TopicForget

    june = int(datetime(2026, 6, 3, 9).timestamp() * 1000)
    aug = int(datetime(2026, 8, 20, 9).timestamp() * 1000)
    old = coordinator.add_episodic("alice", "My goal is a 10k", event_type="goal",
                                   timestamp_ms=june)  # fmt: skip
    coordinator.add_episodic("alice", "My goal is a half marathon", event_type="goal",
                             timestamp_ms=aug, supersedes=old.id)  # fmt: skip
    coordinator.add_episodic("alice", "I sprained my ankle", event_type="health_event",
                             timestamp_ms=june)  # fmt: skip
    coordinator.add_episodic("alice", "Asked about shoes", event_type="interaction")
    coordinator.add_episodic("alice", "I like the lawyer show", event_type="preference")
    TopicForget.of(coordinator).forget("alice", "lawyer show")
    coordinator.add_semantic("Lyon is in France", added_by="alice")
    at = make_app("pages/stats.py")
    no_errors(at)
    assert {m.label: m.value for m in at.metric}["Things I remember about you"] == "3"

    growth = charts(at)["Growth over time"]
    by_type = {trace["name"]: trace for trace in growth["data"]}
    assert set(by_type) == {"About you", "General knowledge"}
    assert min(by_type["About you"]["x"]).startswith("2026-06-03")
    assert (
        max(numbers(by_type["General knowledge"]["y"])) == 1
    )  # alice's fact, not the knowledge file

    activity = charts(at)["What happened to your memories, per day"]
    got = {
        (tr["name"], x[:10]): n
        for tr in activity["data"]
        for x, n in zip(tr["x"], numbers(tr["y"]), strict=True)
    }
    assert got[("Remembered", "2026-06-03")] == 2
    assert got[("Replaced", "2026-08-20")] == 1
    assert sum(n for (what, _), n in got.items() if what == "Forgotten") == 1
    page = json.dumps([json.loads(e.proto.spec) for e in at.get("plotly_chart")])
    page += " ".join(str(getattr(e, "value", "")) for e in at.main)
    assert "lawyer" not in page


def numbers(values) -> list[float]:  # type: ignore[no-untyped-def]
    """Plotly JSON numbers: a list, or base64 `bdata` with a dtype."""
    import base64

    import numpy as np

    if isinstance(values, dict) and "bdata" in values:
        return list(np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]))
    return list(values)


def test_stats_reads_a_users_memories_once_per_write(  # type: ignore[no-untyped-def]
    app_env, make_app, coordinator, monkeypatch
):
    """A new tab, another visit and a rerun show the figures read at the first visit (the
    reads are cached under the user's write version); a write of the user's shows at the next
    visit; another user's write reads nothing again."""
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    reads: list[str] = []
    per_day = coordinator.history.per_day  # the page's read of the user's activity

    def counted(user_id: str) -> list[dict]:
        reads.append(user_id)
        return per_day(user_id)

    monkeypatch.setattr(coordinator.history, "per_day", counted)

    def remembered(at) -> str:  # type: ignore[no-untyped-def]
        no_errors(at)
        return {m.label: m.value for m in at.metric}["Things I remember about you"]

    at = make_app("pages/stats.py")
    assert remembered(at) == "1" and reads == ["alice"]
    assert remembered(make_app("pages/stats.py")) == "1"  # a new session
    assert remembered(open_section(at, "stats_more_memories")) == "1"  # a rerun
    coordinator.add_episodic("bob", "I eat fish", event_type="preference")
    assert remembered(make_app("pages/stats.py")) == "1" and reads == ["alice"]

    coordinator.add_episodic("alice", "I run on Sundays", event_type="preference")
    assert remembered(make_app("pages/stats.py")) == "2" and reads == ["alice", "alice"]


def _reads_of(coordinator, key: str, run) -> int:  # type: ignore[no-untyped-def]
    """How many commands the server ran on `key` while `run()` ran (Redis' MONITOR)."""
    seen: list[str] = []
    stop = f"stop-{key}"
    monitor = coordinator.redis.monitor()

    def watch() -> None:
        with monitor as m:
            while stop not in (command := m.next_command()["command"]):
                seen.append(command)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)  # MONITOR is on before the run
    run()
    coordinator.redis.echo(stop)
    watcher.join(timeout=30)
    return sum(1 for command in seen if key in command.split())


def test_a_stats_run_reads_the_write_version_once(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    at = make_app("pages/stats.py")
    no_errors(at)
    # the sidebar's profile and the page's figures, both cached under the same reading
    assert _reads_of(coordinator, coordinator.keys.writes("alice"), at.run) == 1
    no_errors(at)
    assert "I am vegetarian" in " ".join(m.value for m in at.sidebar.markdown)


def test_a_sample_recorded_after_a_visit_shows_at_the_next_run(
    app_env, make_app, coordinator
) -> None:
    """The samples and their frame are kept between runs (memory.metrics, ui.stats_details):
    a new sample still shows at the next run."""
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")
    coordinator.metrics.flush()
    at = open_section(make_app("pages/stats.py"), "stats_recall")
    names = {tr["name"] for tr in latency_figure(at)["data"]}
    assert "About you · search" in names and "General knowledge · search" not in names
    coordinator.search("alice", "vegetarian", "semantic")
    coordinator.metrics.flush()
    at.run()
    no_errors(at)
    assert "General knowledge · search" in {tr["name"] for tr in latency_figure(at)["data"]}
