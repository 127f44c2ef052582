"""The Stats page: metric tiles and plotly charts built from the recorded metrics."""

from __future__ import annotations

import json

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
    # the built-in facts are not alice's memories: 1 memory + what the two turns stored
    stored = coordinator.list_memories("alice", "episodic", ListQuery(page_size=1))[1]
    assert int(tiles["Things I remember about you"]) == stored < 10
    assert tiles["Answers that used memory"].endswith("%")
    assert tiles["Typical recall time"].endswith(("ms", " s"))
    assert any("built-in facts every user shares" in c.value for c in at.caption)

    figs = charts(at)
    assert set(figs) == {"Recall time before an answer", "Growth over time"}  # details closed
    recall = figs["Recall time before an answer"]
    assert len(recall["data"]) == 2  # p50 and p95 of one stage, not a line per stage

    at = open_section(at, "stats_recall")
    no_errors(at)
    names = {tr["name"] for tr in latency_figure(at)["data"]}
    assert any(n.startswith("Episodic · search") for n in names)
    hit_rate = next(f for t, f in charts(at).items() if t.startswith("Recall hit rate"))
    hit_types = {x for tr in hit_rate["data"] for x in tr["x"]}
    assert "Episodic" in hit_types and "Embedding" not in hit_types
    at = open_section(at, "stats_cache")
    at = open_section(at, "stats_more_memories")
    no_errors(at)
    assert {"Embedding cache", "Memories per type"} <= set(charts(at))


def test_type_operation_and_window_filters(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")
    at = open_section(make_app("pages/stats.py"), "stats_recall")
    assert at.radio(key="stats_ops").value == "Recall path"
    names = {tr["name"] for tr in latency_figure(at)["data"]}
    assert "Episodic · search" in names and "Episodic · add" not in names  # recall path only

    at.multiselect(key="stats_types").set_value(["Episodic"]).run()
    at.radio(key="stats_ops").set_value("Writes").run()
    assert {tr["name"] for tr in latency_figure(at)["data"]} == {"Episodic · add"}
    at.selectbox(key="stats_window").set_value("Last 15 minutes").run()
    at.button(key="stats_refresh").click().run()
    no_errors(at)


def latency_figure(at) -> dict:  # type: ignore[no-untyped-def]
    return next(f for t, f in charts(at).items() if t.startswith("Latency over time"))


def test_no_data_draws_no_empty_chart_and_says_why(app_env, make_app, coordinator) -> None:
    coordinator.metrics.reset()
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


def test_growth_draws_a_line_for_memories_created_at_one_instant(
    app_env, make_app, coordinator
) -> None:
    """A type whose memories were all created at one instant (one fact) must still be drawn
    (a line of one point is invisible), carried on to now; built-in facts are not drawn."""
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.add_semantic("Lyon is in France", added_by="alice")
    at = make_app("pages/stats.py")
    no_errors(at)
    growth = charts(at)["Growth over time"]
    by_type = {trace["name"]: trace for trace in growth["data"]}
    assert set(by_type) == {"Episodic", "Semantic"}
    assert max(numbers(by_type["Semantic"]["y"])) == 1  # alice's fact, not the knowledge file
    for trace in by_type.values():
        assert len(trace["x"]) >= 2, f"{trace['name']} has a single point: not drawn"


def numbers(values) -> list[float]:  # type: ignore[no-untyped-def]
    """Plotly JSON numbers: a list, or base64 `bdata` with a dtype."""
    import base64

    import numpy as np

    if isinstance(values, dict) and "bdata" in values:
        return list(np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]))
    return list(values)
