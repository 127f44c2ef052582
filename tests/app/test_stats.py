"""The Stats page: metric tiles and plotly charts built from the recorded metrics."""

from __future__ import annotations

import json

from tests.app.conftest import no_errors


def charts(at) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Plotly figures on the page by title (AppTest has no typed accessor)."""
    out = {}
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        out[fig["layout"]["title"]["text"]] = fig
    return out


def test_stats_with_data(app_env, make_app, coordinator, agent) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")  # a hit
    coordinator.search("alice", "zzzz qqqq", "episodic", min_score=0.99)  # a miss
    agent.chat("alice", "s-test", "What should I eat? I am vegetarian")
    agent.chat("alice", "s-test", "What should I eat? I am vegetarian")  # cached embedding

    at = make_app("pages/stats.py")
    no_errors(at)
    assert at.title[0].value == "📊 Stats"
    tiles = {m.label: m.value for m in at.metric}
    assert int(tiles["Memories"]) >= 1 + 4  # 1 episodic + 4 messages (+ shared facts)
    assert tiles["Recall p95"].endswith("ms") or tiles["Recall p95"].endswith(" s")
    assert tiles["Recall hit rate"].endswith("%")
    assert tiles["Embedding cache hits"].endswith("%") and tiles["Embedding cache hits"] != "0%"
    assert int(tiles["Operations measured"]) > 5

    figs = charts(at)
    latency = latency_figure(at)
    names = {tr["name"] for tr in latency["data"]}
    assert any(n.startswith("Episodic · search") for n in names)
    assert any(n.startswith("All types · retrieve_all_context") for n in names)
    hit_rate = next(f for t, f in figs.items() if t.startswith("Recall hit rate"))
    hit_types = {x for tr in hit_rate["data"] for x in tr["x"]}
    assert "Episodic" in hit_types and "Embedding" not in hit_types
    assert "Embedding cache" in figs and "Memories per type" in figs
    assert "Growth over time" in figs


def test_type_operation_and_window_filters(app_env, make_app, coordinator) -> None:
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    coordinator.search("alice", "vegetarian", "episodic")
    at = make_app("pages/stats.py")
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


def test_no_measurements_yet_explains_what_to_do(app_env, make_app, coordinator) -> None:
    coordinator.metrics.reset()
    at = make_app("pages/stats.py", user="nobody")
    no_errors(at)
    assert any("No measurements in this window yet" in i.value for i in at.info)
    assert {m.label: m.value for m in at.metric}["Recall p95"] == "–"


def test_growth_draws_a_line_for_memories_created_at_one_instant(
    app_env, make_app, coordinator
) -> None:
    """The knowledge file's facts are all created at one instant: the growth chart must still
    draw them (a line of one point is invisible), carried on to now."""
    coordinator.add_episodic("alice", "I am vegetarian", event_type="preference")
    at = make_app("pages/stats.py")
    no_errors(at)
    growth = charts(at)["Growth over time"]
    by_type = {trace["name"]: trace for trace in growth["data"]}
    assert {"Episodic", "Semantic"} <= set(by_type)
    for trace in by_type.values():
        assert len(trace["x"]) >= 2, f"{trace['name']} has a single point: not drawn"
